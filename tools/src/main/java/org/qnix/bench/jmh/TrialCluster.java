package org.qnix.bench.jmh;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;

import org.qnix.abi.ClusterParameters;
import org.qnix.tools.ClusterControl;
import org.qnix.tools.OwnedCluster;

/**
 * The QNIX cluster of one JMH trial: a 2x2 torus brought up in the trial's setup and torn down in its
 * teardown, or when the forked JVM ends first ({@link OwnedCluster}).
 */
final class TrialCluster implements AutoCloseable
{
    private static int sequence;

    private final OwnedCluster cluster;

    private TrialCluster(final OwnedCluster cluster)
    {
        this.cluster = cluster;
    }

    static synchronized TrialCluster up(final String firmware, final String idle)
    {
        final String name = "jmh" + ProcessHandle.current().pid() + "-" + ++sequence;
        try
        {
            return new TrialCluster(OwnedCluster.up(new ClusterControl.Settings(name,
                ClusterParameters.builder().torus(2, 2).build()).firmware(firmware).idle(idle), quiet(), quiet()));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while bringing up " + name, ex);
        }
    }

    String name()
    {
        return cluster.directory().name();
    }

    public void close()
    {
        cluster.close();
    }

    private static PrintStream quiet()
    {
        return new PrintStream(new ByteArrayOutputStream());
    }
}
