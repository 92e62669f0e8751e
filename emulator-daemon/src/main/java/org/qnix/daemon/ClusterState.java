package org.qnix.daemon;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.ProcessStartTicks;

/**
 * Whether a cluster is up, stale (its daemon died without cleaning up), absent, or not a cluster at
 * all (a directory qnix did not create), and how to clean up a stale one: stop any firmware JVM it
 * left behind, then remove its files by name ({@link ClusterFiles}).
 *
 * <pre>{@code
 * ClusterState state = ClusterState.inspect(ClusterDirectory.of("t"));
 * if (state.isStale()) { state.cleanUp(); }
 * }</pre>
 */
public final class ClusterState
{
    /** What a cluster directory holds. */
    public enum Kind
    {
        ABSENT, LIVE, STALE,
        /** Something qnix did not create has the cluster's name: never used, never removed. */
        FOREIGN
    }

    /** How long a left-over JVM has to run its shutdown hooks after SIGTERM. */
    private static final long TERM_GRACE_MS = 5_000;
    /** How long a left-over JVM may take to go after SIGKILL, on a loaded machine. */
    private static final long KILL_GRACE_MS = 10_000;

    /** A left-over JVM told to stop: its start, so that a later process given its pid is not waited for. */
    private record Stopping(ProcessHandle jvm, long startTicks, String what)
    {
    }

    private final ClusterDirectory dir;
    private final Kind kind;
    private final ClusterProperties props;
    private final String reason;

    private ClusterState(final ClusterDirectory dir, final Kind kind, final ClusterProperties props, final String reason)
    {
        this.dir = dir;
        this.kind = kind;
        this.props = props;
        this.reason = reason;
    }

    public static ClusterState inspect(final ClusterDirectory dir)
    {
        if (!Files.exists(dir.path(), LinkOption.NOFOLLOW_LINKS))
        {
            return new ClusterState(dir, Kind.ABSENT, null, "no cluster directory " + dir.path());
        }
        if (!ClusterFiles.isMarked(dir))
        {
            return new ClusterState(dir, Kind.FOREIGN, null, ClusterFiles.notOurs(dir));
        }
        final Optional<ClusterProperties> props;
        try
        {
            props = ClusterProperties.read(dir.propertiesFile());
        }
        catch (final UncheckedIOException ex)
        {
            return new ClusterState(dir, Kind.STALE, null, "unreadable " + dir.propertiesFile() + ": " + ex.getMessage());
        }
        if (props.isEmpty())
        {
            return new ClusterState(dir, Kind.STALE, null, "directory " + dir.path() + " has no cluster.properties");
        }
        final long pid = props.get().daemonPid();
        if (pid <= 0)
        {
            return new ClusterState(dir, Kind.STALE, props.get(), dir.propertiesFile() + " names no daemon pid");
        }
        final Optional<ProcessHandle> daemon = ProcessHandle.of(pid).filter(p -> Processes.isAlive(p.pid()));
        if (daemon.isEmpty())
        {
            return new ClusterState(dir, Kind.STALE, props.get(), "its daemon (pid " + pid + ") is not running");
        }
        if (!Processes.isSameProcess(daemon.get(), props.get().daemonStartTicks(), props.get().daemonStartMs()))
        {
            return new ClusterState(dir, Kind.STALE, props.get(),
                "its daemon (pid " + pid + ") is gone; that pid now belongs to another process");
        }
        final Optional<String> command = daemon.get().info().commandLine();
        if (command.isPresent() && !isClusterJvm(command.get(), JvmFlags.clusterMarker(dir.path())))
        {
            // Not a JVM started for this cluster: a reused pid, or a cluster.properties rewritten by a
            // member of a --shared-with-group group to make the owner's `down` signal one of the owner's
            // processes. Every daemon carries the marker first on its command line.
            return new ClusterState(dir, Kind.STALE, props.get(),
                "its daemon (pid " + pid + ") is gone; that pid is a process not started for this cluster");
        }
        return new ClusterState(dir, Kind.LIVE, props.get(), "daemon pid " + pid + " is running");
    }

    public Kind kind()
    {
        return kind;
    }

    public boolean isLive()
    {
        return Kind.LIVE == kind;
    }

    public boolean isStale()
    {
        return Kind.STALE == kind;
    }

    public boolean isAbsent()
    {
        return Kind.ABSENT == kind;
    }

    /** @return whether the cluster's name is taken by something qnix did not create. */
    public boolean isForeign()
    {
        return Kind.FOREIGN == kind;
    }

    public Optional<ClusterProperties> properties()
    {
        return Optional.ofNullable(props);
    }

    public String reason()
    {
        return reason;
    }

    /** @return why a live cluster may not be brought up again, and how to stop it. */
    public String alreadyUp()
    {
        return "cluster '" + dir.name() + "' is already up (" + reason + "); stop it first with: " +
            "qnix cluster down --name " + dir.name();
    }

    public ClusterDirectory directory()
    {
        return dir;
    }

    /**
     * Stops the firmware JVMs a dead daemon left behind and removes the cluster's files: those qnix
     * names, leaving (and reporting) any other. A directory qnix did not create is not touched.
     *
     * @return what was done and what was left, one line each.
     */
    public List<String> cleanUp()
    {
        if (isForeign())
        {
            return List.of(reason);
        }
        final List<String> done = new ArrayList<>();
        // Every JVM is told first, then each is waited for: they shut down side by side.
        final List<Stopping> told = new ArrayList<>();
        for (final ProcessHandle jvm : leftoverFirmware(dir.path()))
        {
            // The daemon too, when it lives on in a directory found stale (its properties damaged).
            final boolean daemon = jvm.info().commandLine()
                .map(cmd -> (cmd + " ").contains(" " + JvmFlags.DAEMON_ROLE + " ")).orElse(false);
            told.add(new Stopping(jvm, ProcessStartTicks.ofLiving(jvm.pid()),
                (daemon ? "daemon" : "firmware JVM") + " pid " + jvm.pid()));
            jvm.destroy();
        }
        final long termDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TERM_GRACE_MS);
        for (final Stopping stopping : told)
        {
            final long pid = stopping.jvm().pid();
            final long termLeftMs = Math.max(0, TimeUnit.NANOSECONDS.toMillis(termDeadline - System.nanoTime()));
            if (!ProcessStartTicks.awaitExit(pid, stopping.startTicks(), termLeftMs))
            {
                stopping.jvm().destroyForcibly();
                if (!ProcessStartTicks.awaitExit(pid, stopping.startTicks(), KILL_GRACE_MS))
                {
                    // Its files are removed below all the same: it maps them, and they go when it does.
                    done.add("could not stop " + stopping.what());
                    continue;
                }
            }
            done.add("stopped " + stopping.what());
        }
        done.addAll(ClusterFiles.remove(dir));
        return done;
    }

    /** @return live JVMs started for this cluster (firmware, daemon) other than this one. */
    static List<ProcessHandle> leftoverFirmware(final Path clusterPath)
    {
        final String marker = JvmFlags.clusterMarker(clusterPath);
        final List<ProcessHandle> result = new ArrayList<>();
        ProcessHandle.allProcesses()
            .filter(p -> p.pid() != ProcessHandle.current().pid())
            .forEach(p -> p.info().commandLine().ifPresent(cmd ->
            {
                if (isClusterJvm(cmd, marker))
                {
                    result.add(p);
                }
            }));
        return result;
    }

    /**
     * @param marker the cluster's {@link JvmFlags#clusterMarker}.
     * @return true if {@code commandLine} carries the cluster's marker, as its daemon and firmware JVMs do.
     */
    private static boolean isClusterJvm(final String commandLine, final String marker)
    {
        return (commandLine + " ").contains(marker + " ");
    }
}
