package org.qnix.tools;

import java.io.PrintStream;

import org.qnix.abi.ClusterDirectory;

/**
 * A cluster a command brings up for itself ({@code demo}, {@code bench} without {@code --cluster}, a
 * JMH trial) and takes down when done: on {@link #close()}, and also when the user interrupts the command (a shutdown
 * hook), since the daemon runs in a session of its own and Ctrl-C never reaches it.
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
    private final ClusterDirectory dir;
    private final PrintStream downOut;
    private final Thread teardown;
    private boolean downDone;

    private OwnedCluster(final ClusterDirectory dir, final PrintStream downOut)
    {
        this.dir = dir;
        this.downOut = downOut;
        this.teardown = new Thread(this::down, "qnix-cluster-down");
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
        }
        catch (final RuntimeException | InterruptedException ex)
        {
            // Nothing of ours to take down: a failed `up` removed what it made, and one refused (the name
            // is taken) must leave the other cluster alone.
            cluster.forget();
            throw ex;
        }
        return cluster;
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

    private void forget()
    {
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
