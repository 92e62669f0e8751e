package org.qnix.tools;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.daemon.ClusterState;

/**
 * The cluster QNIX is measured on by {@code qnix bench}: the user's, or a 2x1 cluster brought up for
 * the run and torn down after it, also when the run is interrupted (a shutdown hook).
 */
final class BenchCluster implements AutoCloseable
{
    private final ClusterDirectory dir;
    private final String peerNode;
    private final String description;
    private final boolean own;
    private final Thread teardown;

    /**
     * @param existing the user's running cluster, or null to bring one up named {@code name} with the
     *                 firmware placement and idle strategy given.
     */
    BenchCluster(final String existing, final String name, final String firmware, final String idle,
        final PrintStream out) throws InterruptedException
    {
        own = null == existing;
        if (own)
        {
            out.println("== bringing up cluster '" + name + "': 2x1 torus, firmware as " + firmware + ", idle " + idle);
            dir = ClusterControl.up(new ClusterControl.Settings(name,
                ClusterParameters.builder().torus(2, 1).build()).firmware(firmware).idle(idle),
                new PrintStream(new ByteArrayOutputStream()));
            description = firmware + ", idle " + idle;
        }
        else
        {
            dir = ClusterDirectory.of(existing);
            if (!ClusterState.inspect(dir).isLive())
            {
                throw new IllegalArgumentException("cluster '" + existing + "' is not up");
            }
            description = "of cluster '" + existing + "'";
        }
        final ClusterParameters params = ClusterState.inspect(dir).properties().orElseThrow().parameters();
        if (params.nodeCount() < 2)
        {
            throw new IllegalArgumentException("cluster '" + dir.name() + "' has one node: QNIX is measured " +
                "between two nodes");
        }
        peerNode = NicCoordinates.ofIndex(1, params.torusWidth()).toString();
        teardown = new Thread(this::down, "bench-cluster-down");
        if (own)
        {
            Runtime.getRuntime().addShutdownHook(teardown);
        }
    }

    String name()
    {
        return dir.name();
    }

    /** @return the second node; QNIX is measured between the first ({@code 0-0}) and this one. */
    String peerNode()
    {
        return peerNode;
    }

    /** @return how the firmware runs, for the report. */
    String describe()
    {
        return description;
    }

    private void down()
    {
        try
        {
            ClusterControl.down(dir, new PrintStream(new ByteArrayOutputStream()));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    public void close()
    {
        if (!own)
        {
            return;
        }
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
}
