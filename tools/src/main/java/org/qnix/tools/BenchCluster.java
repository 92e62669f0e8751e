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
    /** The idle strategy of a cluster this run did not bring up: the cluster's files do not say. */
    static final String UNKNOWN = "unknown";

    /** The cluster this run brought up, or null when it measures the user's. */
    private final OwnedCluster owned;
    private final String firmware;
    private final String idle;

    /**
     * @param existing the user's running cluster, or null to bring one up named {@code name} with the
     *                 firmware placement and idle strategy given.
     */
    BenchCluster(final String existing, final String name, final String firmware, final String idle,
        final PrintStream out) throws InterruptedException
    {
        if (null == existing)
        {
            dir = ClusterDirectory.of(name);
            if (ClusterState.inspect(dir).isLive())
            {
                // Not ours to bring up, nor to tear down.
                throw new IllegalArgumentException("a cluster named '" + name + "' is already up: measure it with " +
                    "--cluster " + name + ", or give the run's cluster another --name");
            }
            out.println("== bringing up cluster '" + name + "': 2x1 torus, firmware as " + firmware + ", idle " + idle);
            final PrintStream quiet = new PrintStream(new ByteArrayOutputStream());
            owned = OwnedCluster.up(new ClusterControl.Settings(name, ClusterParameters.builder().torus(2, 1).build())
                .firmware(firmware).idle(idle), quiet, quiet);
            this.firmware = firmware;
            this.idle = idle;
            description = firmware + ", idle " + idle;
        }
        else
        {
            dir = checkExisting(existing);
            owned = null;
            this.firmware = ClusterState.inspect(dir).properties().orElseThrow().firmwareMode();
            this.idle = UNKNOWN;
            description = "of cluster '" + existing + "'";
        }
        peerNode = NicCoordinates.ofIndex(1, ClusterState.inspect(dir).properties().orElseThrow().parameters()
            .torusWidth()).toString();
    }

    /**
     * @return the directory of a running cluster QNIX can be measured on.
     * @throws IllegalArgumentException if it is not up or has a single node.
     */
    static ClusterDirectory checkExisting(final String existing)
    {
        final ClusterDirectory dir = ClusterDirectory.of(existing);
        final ClusterState state = ClusterState.inspect(dir);
        if (!state.isLive() || state.properties().isEmpty())
        {
            throw new IllegalArgumentException("--cluster " + existing + ": the cluster is not up");
        }
        if (state.properties().get().parameters().nodeCount() < 2)
        {
            throw new IllegalArgumentException("--cluster " + existing + ": the cluster has one node; QNIX is " +
                "measured between two nodes");
        }
        return dir;
    }

    /**
     * Refuses a firmware placement or idle strategy the cluster of a run could not be brought up with.
     *
     * @throws IllegalArgumentException naming the option.
     */
    static void checkSettings(final String firmware, final String idle)
    {
        new ClusterControl.Settings("check", ClusterParameters.builder().build()).firmware(firmware).idle(idle);
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

    /** @return shared, processes or threads. */
    String firmware()
    {
        return firmware;
    }

    /** @return the firmware's idle strategy, or {@link #UNKNOWN} for the user's cluster. */
    String idle()
    {
        return idle;
    }

    /** @return how the firmware runs, for the report. */
    String describe()
    {
        return description;
    }

    public void close()
    {
        if (null != owned)
        {
            owned.close();
        }
    }
}
