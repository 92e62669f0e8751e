package org.qnix.tools;

import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.ClusterDirectory;

/**
 * A cluster a command brings up for itself ({@code demo}, {@code bench} without {@code --cluster}, a
 * JMH trial) and takes down when done: on {@link #close()}, and also when the user interrupts the command (a shutdown
 * hook), since the daemon runs in a session of its own and Ctrl-C never reaches it. {@code cluster up}
 * {@link #keep() keeps} its cluster once it is up, and so takes it down only if interrupted before.
 *
 * <pre>{@code
 * try (OwnedCluster cluster = OwnedCluster.up(settings, System.out, System.out))
 * {
 *     run(cluster.directory());
 * }
 * }</pre>
 */
public final class OwnedCluster implements AutoCloseable
{
    /** The longest a teardown waits for the bring-up it interrupted: ClusterControl's own limit, and some. */
    private static final long UP_WAIT_MS = 240_000;

    private final ClusterDirectory dir;
    private final PrintStream downOut;
    private final Thread teardown;
    /** Counted down when {@link #up}'s bring-up has ended, either way. */
    private final CountDownLatch upEnded = new CountDownLatch(1);
    private volatile boolean upDone;
    /** The teardown is the shutdown hook's: the command was interrupted. */
    private volatile boolean interrupted;
    private boolean downDone;

    private OwnedCluster(final ClusterDirectory dir, final PrintStream downOut)
    {
        this.dir = dir;
        this.downOut = downOut;
        this.teardown = new Thread(() ->
        {
            interrupted = true;
            down();
        }, "qnix-cluster-down");
    }

    /**
     * @param upOut   where the bring-up reports.
     * @param downOut where the teardown reports.
     */
    public static OwnedCluster up(final ClusterControl.Settings settings, final PrintStream upOut,
        final PrintStream downOut) throws InterruptedException
    {
        final OwnedCluster cluster = new OwnedCluster(ClusterDirectory.of(settings.name), downOut);
        // Registered before the cluster exists, so that an interrupt during bring-up still tears it down.
        Runtime.getRuntime().addShutdownHook(cluster.teardown);
        try
        {
            ClusterControl.up(settings, upOut);
            cluster.upDone = true;
        }
        catch (final RuntimeException | InterruptedException ex)
        {
            // Nothing of ours to take down: a failed `up` removed what it made, and one refused (the name
            // is taken) must leave the other cluster alone.
            cluster.forget();
            throw ex;
        }
        finally
        {
            cluster.upEnded.countDown();
        }
        return cluster;
    }

    /**
     * The cluster outlives the command ({@code cluster up}): from now on nothing takes it down but a
     * {@code cluster down}. Before this, an interrupt still did, so that a Ctrl-C during the bring-up does
     * not leave a cluster running that the user was never told of.
     *
     * @return false if too late: the command is being interrupted, and the cluster taken down.
     */
    public boolean keep()
    {
        return forget();
    }

    public ClusterDirectory directory()
    {
        return dir;
    }

    /**
     * Once, whoever comes first: on Ctrl-C the hook and the command's own {@link #close()} both get here.
     * The second waits for the first to finish, so that the JVM, which halts when its hooks are done,
     * never stops a teardown half-way (that left the cluster's lock file behind).
     */
    private synchronized void down()
    {
        if (downDone)
        {
            return;
        }
        downDone = true;
        try
        {
            // An interrupt during the bring-up: it goes on in the command's thread until the cluster is up
            // or has failed (which removes what it made); then there is something of ours to take down, or
            // nothing, and never a cluster of that name that someone else brought up.
            if (!upEnded.await(UP_WAIT_MS, TimeUnit.MILLISECONDS) || !upDone)
            {
                return;
            }
            if (interrupted)
            {
                downOut.println("interrupted: taking cluster '" + dir.name() + "' down");
            }
            ClusterControl.down(dir, downOut);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    public void close()
    {
        try
        {
            down();
        }
        finally
        {
            forget();
        }
    }

    /** @return false if the JVM is shutting down: the hook is running. */
    private boolean forget()
    {
        try
        {
            Runtime.getRuntime().removeShutdownHook(teardown);
            return true;
        }
        catch (final IllegalStateException shuttingDown)
        {
            return false;
        }
    }
}
