package org.qnix.bench.jmh;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.tools.ClusterControl;

/**
 * The QNIX cluster of one JMH trial: a 2x2 torus brought up in the trial's setup and torn down in its
 * teardown, or by a shutdown hook if the forked JVM ends first.
 */
final class TrialCluster implements AutoCloseable
{
    private static int sequence;

    final ClusterDirectory dir;
    private final Thread teardown;

    private TrialCluster(final ClusterDirectory dir)
    {
        this.dir = dir;
        this.teardown = new Thread(this::down, "jmh-cluster-down");
        Runtime.getRuntime().addShutdownHook(teardown);
    }

    static synchronized TrialCluster up(final String firmware, final String idle)
    {
        final String name = "jmh" + ProcessHandle.current().pid() + "-" + ++sequence;
        try
        {
            return new TrialCluster(ClusterControl.up(new ClusterControl.Settings(name,
                ClusterParameters.builder().torus(2, 2).build()).firmware(firmware).idle(idle), quiet()));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while bringing up " + name, ex);
        }
    }

    String name()
    {
        return dir.name();
    }

    private void down()
    {
        try
        {
            ClusterControl.down(dir, quiet());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    public void close()
    {
        down();
        try
        {
            Runtime.getRuntime().removeShutdownHook(teardown);
        }
        catch (final IllegalStateException ignore)
        {
            // Already shutting down: the hook is running.
        }
    }

    private static PrintStream quiet()
    {
        return new PrintStream(new ByteArrayOutputStream());
    }
}
