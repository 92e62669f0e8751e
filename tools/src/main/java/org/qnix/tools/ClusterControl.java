package org.qnix.tools;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterFootprint;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.FileModes;
import org.qnix.abi.HostClock;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicProcessor;
import org.qnix.abi.ProcessStartTicks;
import org.qnix.daemon.ClusterFiles;
import org.qnix.daemon.ClusterLock;
import org.qnix.daemon.ClusterState;
import org.qnix.daemon.DaemonMappings;
import org.qnix.firmware.IdleStrategies;

/**
 * Brings clusters up and down: starts the emulator daemon as a detached JVM, waits until it reports
 * the cluster up (or shows its log if it failed), and stops it again. Used by {@code qnix cluster},
 * {@code qnix demo} and the tests. Both hold the cluster's {@link ClusterLock} while they create or
 * remove its files, and neither touches a directory qnix did not create.
 *
 * <pre>{@code
 * ClusterControl.Settings settings = new ClusterControl.Settings("t", ClusterParameters.builder().torus(2, 2).build());
 * ClusterControl.up(settings, System.out);
 * ClusterControl.down(ClusterDirectory.of("t"), System.out);
 * }</pre>
 */
public final class ClusterControl
{
    static final String DAEMON_MAIN = "org.qnix.daemon.EmulatorDaemon";
    private static final long UP_TIMEOUT_MS = 180_000;
    private static final long DOWN_TIMEOUT_MS = 60_000;

    /** What to bring up. */
    public static final class Settings
    {
        final String name;
        final ClusterParameters params;
        String firmware = ClusterProperties.FIRMWARE_SHARED;
        String idle = "backoff";
        String nicCpu = "auto";
        boolean sharedWithGroup;
        final Map<NicCoordinates, Integer> debugPorts = new LinkedHashMap<>();

        public Settings(final String name, final ClusterParameters params)
        {
            ClusterDirectory.validateName(name);
            this.name = name;
            this.params = params;
        }

        public Settings firmware(final String mode)
        {
            this.firmware = ClusterProperties.checkFirmwareMode(mode);
            return this;
        }

        public Settings idle(final String idle)
        {
            try
            {
                IdleStrategies.parse(idle);
            }
            catch (final IllegalArgumentException ex)
            {
                // Here, not in the daemon: there it would fail after the cluster's files were made.
                throw new IllegalArgumentException("--idle " + idle + ": use " + IdleStrategies.BACKOFF + ", " +
                    IdleStrategies.YIELD + " or " + IdleStrategies.BUSY);
            }
            this.idle = idle;
            return this;
        }

        /**
         * @param cpu {@code auto} (the default: the highest-numbered CPU with the shared placement on two
         *            or more CPUs in this process's cpuset), {@code none}, or a CPU number: the CPU the
         *            firmware JVM binds itself to and registered programs keep off, but those the driver
         *            places there ({@code NicProcessor}).
         */
        public Settings nicCpu(final String cpu)
        {
            this.nicCpu = cpu;
            return this;
        }

        /**
         * Files 0660 and directories 0770 instead of 0600 and 0700, and drivers that accept processes of
         * the owner's group as well as the owner's.
         */
        public Settings sharedWithGroup(final boolean shared)
        {
            this.sharedWithGroup = shared;
            return this;
        }

        public Settings debug(final NicCoordinates node, final int port)
        {
            if (!params.hasNode(node))
            {
                throw new IllegalArgumentException("--debug-firmware " + node + ": no such node in a " +
                    params.torus() + " torus");
            }
            if (port < 1 || port > 65535)
            {
                throw new IllegalArgumentException("--debug-firmware port " + port + " is not a TCP port");
            }
            debugPorts.put(node, port);
            return this;
        }
    }

    private ClusterControl()
    {
    }

    /**
     * Starts a cluster and returns once it is up. A stale cluster of the same name is cleaned up first;
     * a live one, one being brought up or down by another process, and a directory of that name qnix
     * did not create are refused, and so is a cluster whose files would not fit into the free space of
     * {@code $QNIX_DIR}'s file system (the daemon reserves every byte of them).
     *
     * @throws IllegalArgumentException naming the sizes if the cluster's files do not fit.
     * @throws IllegalStateException    with the reason (and the daemon's log) if it cannot come up.
     */
    public static ClusterDirectory up(final Settings settings, final PrintStream out)
        throws InterruptedException
    {
        final ClusterDirectory dir = ClusterDirectory.of(settings.name);
        final Path base = dir.path().getParent();
        if (Files.exists(base) && !Files.isDirectory(base))
        {
            throw new IllegalArgumentException("$QNIX_DIR " + base + " is not a directory: give a directory (default " +
                "/dev/shm/qnix) where clusters' files can live");
        }
        for (int i = 0; i < settings.params.nodeCount(); i++)
        {
            dir.checkSocketPathLength(NicCoordinates.ofIndex(i, settings.params.torusWidth()));
        }
        if (!settings.debugPorts.isEmpty() && ClusterProperties.FIRMWARE_THREADS.equals(settings.firmware))
        {
            throw new IllegalArgumentException("--debug-firmware needs --firmware shared or processes: " +
                "with threads, attach the debugger to the daemon JVM instead");
        }
        if (settings.debugPorts.values().stream().distinct().count() > 1 &&
            ClusterProperties.FIRMWARE_SHARED.equals(settings.firmware))
        {
            throw new IllegalArgumentException("--debug-firmware: with --firmware shared every NIC runs in one " +
                "firmware JVM, so give one node (its port is the JVM's); break on one node with a condition " +
                "such as nodeName.equals(\"1-0\") in SendScheduler or ReceiveTable");
        }
        // Here, not in the daemon: there it would fail after the cluster's files were made.
        NicProcessor.resolve(settings.nicCpu, settings.firmware);
        // Before anything is made: a sparse file that cannot grow would kill its JVM with SIGBUS later,
        // and a daemon past the kernel's mapping limit would die of native out-of-memory.
        new ClusterFootprint(settings.params).refusal(settings.name, dir.path().getParent())
            .or(() -> DaemonMappings.refusal(settings.params, settings.firmware))
            .ifPresent(reason ->
            {
                throw new IllegalArgumentException(reason);
            });
        refuseForeignOrBusy(dir);
        try (ClusterLock lock = ClusterLock.acquire(dir, ClusterLock.Purpose.UP))
        {
            return upLocked(settings, dir, out);
        }
    }

    /** Brings the cluster up; the caller holds its lock, so what is found in its directory stays put. */
    private static ClusterDirectory upLocked(final Settings settings, final ClusterDirectory dir, final PrintStream out)
        throws InterruptedException
    {
        final ClusterState state = ClusterState.inspect(dir);
        refuseForeign(state);
        if (state.isLive())
        {
            throw new IllegalStateException(state.alreadyUp());
        }
        if (state.isStale())
        {
            out.println("cluster '" + settings.name + "' was stale (" + state.reason() + "); cleaning it up:");
            state.cleanUp().forEach(line -> out.println("  " + line));
            if (!ClusterState.inspect(dir).isAbsent())
            {
                throw new IllegalStateException(dir.path() + " still holds files qnix did not create: not reusing it. " +
                    "Move them away, then run: qnix cluster down --name " + settings.name);
            }
        }

        // The marker goes in first, before the daemon or its log: it is what allows removing them again.
        ClusterFiles.create(dir, settings.sharedWithGroup);
        // Made here, so that it has the cluster's mode rather than the umask's.
        FileModes.createFileOrThrow(dir.daemonLog());
        final List<String> command = new ArrayList<>();
        if (new File("/usr/bin/setsid").canExecute())
        {
            // Its own session: closing the terminal that ran `cluster up` must not take the cluster down.
            command.add("/usr/bin/setsid");
        }
        command.add(JvmFlags.javaExecutable());
        command.add(JvmFlags.clusterMarker(dir.path()));
        command.add(JvmFlags.DAEMON_ROLE);
        command.addAll(JvmFlags.flags());
        command.addAll(JvmFlags.crashFiles(dir));
        command.add("-Xmx512m");
        command.add("-XX:+UseSerialGC");
        command.add("-cp");
        command.add(JvmFlags.classPath());
        command.add(DAEMON_MAIN);
        command.add("--cluster-dir=" + dir.path());
        command.add("--firmware=" + settings.firmware);
        command.add("--idle=" + settings.idle);
        command.add("--nic-cpu=" + settings.nicCpu);
        if (settings.sharedWithGroup)
        {
            command.add("--shared-with-group");
        }
        for (final Map.Entry<String, String> e : settings.params.toMap().entrySet())
        {
            command.add("--set=" + e.getKey() + "=" + e.getValue());
        }
        for (final Map.Entry<NicCoordinates, Integer> debug : settings.debugPorts.entrySet())
        {
            command.add("--debug-port=" + debug.getKey() + "=" + debug.getValue());
        }
        final Process daemon;
        try
        {
            daemon = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.daemonLog().toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot start the emulator daemon", ex);
        }

        final long deadline = HostClock.millis() + UP_TIMEOUT_MS;
        while (true)
        {
            final Optional<ClusterProperties> props = readQuietly(dir);
            if (props.isPresent() && ClusterProperties.STATE_UP.equals(props.get().state()))
            {
                return dir;
            }
            final boolean failed = props.isPresent() && ClusterProperties.STATE_FAILED.equals(props.get().state());
            if (failed || !daemon.isAlive() || HostClock.millis() > deadline)
            {
                final boolean timedOut = !failed && daemon.isAlive();
                if (timedOut)
                {
                    daemon.destroy();
                }
                daemon.waitFor(30, TimeUnit.SECONDS);
                final String log = readLog(dir);
                final List<String> left = ClusterState.inspect(dir).cleanUp().stream()
                    .filter(line -> line.startsWith("left ") || line.startsWith("could not ")).toList();
                left.forEach(out::println);
                throw new IllegalStateException("cluster '" + settings.name + "' did not come up" +
                    (timedOut ? " within " + UP_TIMEOUT_MS + " ms" : "") + ". Daemon log:\n" + log);
            }
            Thread.sleep(20);
        }
    }

    /**
     * Stops a live cluster (SIGTERM to its daemon, which stops its firmware and removes its files) or
     * cleans up a stale one. Files in its directory that qnix did not create are left there and listed.
     *
     * @return false if there was no such cluster.
     * @throws IllegalStateException if a directory of that name was not created by qnix, or another
     *                               process is bringing the cluster up or down.
     */
    public static boolean down(final ClusterDirectory dir, final PrintStream out) throws InterruptedException
    {
        if (ClusterState.inspect(dir).isAbsent())
        {
            removeOrphanLockFile(dir, out);
            return false;
        }
        // A shutdown hook's `down` (tests, bench) lets this JVM's own `up`, interrupted, finish first.
        ClusterLock.awaitReleasedHere(dir, UP_TIMEOUT_MS + DOWN_TIMEOUT_MS);
        refuseForeignOrBusy(dir);
        try (ClusterLock lock = ClusterLock.acquire(dir, ClusterLock.Purpose.DOWN))
        {
            return downLocked(dir, out);
        }
    }

    /**
     * The lock file of a cluster that is not there, left by a process that died holding it (killed in
     * the middle of an `up` or a `down`): taken and released, which deletes it, since the directory is
     * gone (ClusterLock#close). One a live process holds (an `up` just starting) is left to it.
     */
    private static void removeOrphanLockFile(final ClusterDirectory dir, final PrintStream out)
    {
        if (!Files.exists(dir.lockFile(), LinkOption.NOFOLLOW_LINKS) ||
            ClusterLock.holder(dir).isPresent())
        {
            return;
        }
        ClusterLock.acquire(dir, ClusterLock.Purpose.DOWN).close();
        if (!Files.exists(dir.lockFile(), LinkOption.NOFOLLOW_LINKS))
        {
            out.println("removed " + dir.lockFile() + ", left by a process that died holding it");
        }
    }

    /** Takes the cluster down; the caller holds its lock, so no `up` is half-way through building it. */
    private static boolean downLocked(final ClusterDirectory dir, final PrintStream out) throws InterruptedException
    {
        final ClusterState state = ClusterState.inspect(dir);
        if (state.isAbsent())
        {
            return false;
        }
        refuseForeign(state);
        if (state.isStale())
        {
            out.println("cluster '" + dir.name() + "' was stale (" + state.reason() + "); cleaning it up:");
            state.cleanUp().forEach(line -> out.println("  " + line));
            return true;
        }
        final long pid = state.properties().orElseThrow().daemonPid();
        final Optional<ProcessHandle> daemon = ProcessHandle.of(pid);
        if (daemon.isPresent())
        {
            // Its start, before it is told: a zombie (an orphan whose adopter never reaps) or a later
            // process given its pid is not waited for. ProcessHandle.onExit would wait for the reap.
            final long startTicks = ProcessStartTicks.ofLiving(pid);
            if (!daemon.get().destroy() && !ProcessStartTicks.hasExited(pid, startTicks))
            {
                // Another user's daemon, in a directory shared with --shared-with-group.
                throw new IllegalStateException("cluster '" + dir.name() + "': not permitted to stop its daemon, pid " +
                    pid + "; its owner can take it down");
            }
            if (!ProcessStartTicks.awaitExit(pid, startTicks, DOWN_TIMEOUT_MS))
            {
                out.println("daemon pid " + pid + " did not stop within " + DOWN_TIMEOUT_MS + " ms; killing it");
                daemon.get().destroyForcibly();
                if (!ProcessStartTicks.awaitExit(pid, startTicks, DOWN_TIMEOUT_MS))
                {
                    throw new IllegalStateException("cluster '" + dir.name() + "': daemon pid " + pid +
                        " did not stop even when killed; its files are left in " + dir.path());
                }
            }
        }
        final ClusterState after = ClusterState.inspect(dir);
        if (!after.isAbsent())
        {
            // What the daemon could not remove: the files of its firmware if it was killed, or a user's.
            after.cleanUp().stream().filter(line -> !line.startsWith("removed ")).forEach(line -> out.println("  " + line));
        }
        out.println("cluster '" + dir.name() + "' is down");
        return true;
    }

    /**
     * Refuses, before taking the lock, a directory qnix did not create: taking it would leave a lock
     * file beside a user's directory. A directory without its marker may also be one an {@code up}
     * holding the lock has just created and not yet marked: that one is busy, not foreign.
     */
    private static void refuseForeignOrBusy(final ClusterDirectory dir)
    {
        if (!ClusterState.inspect(dir).isForeign())
        {
            return;
        }
        final Optional<ClusterLock.Holder> holder = ClusterLock.holder(dir);
        if (holder.isPresent())
        {
            throw new IllegalStateException(holder.get().refusal(dir));
        }
        // Asked again: an `up` marks its directory before it lets go of the lock.
        refuseForeign(ClusterState.inspect(dir));
    }

    private static void refuseForeign(final ClusterState state)
    {
        if (state.isForeign())
        {
            throw new IllegalStateException("cluster '" + state.directory().name() + "': " + state.reason());
        }
    }

    private static Optional<ClusterProperties> readQuietly(final ClusterDirectory dir)
    {
        try
        {
            return ClusterProperties.read(dir.propertiesFile());
        }
        catch (final UncheckedIOException ex)
        {
            return Optional.empty();
        }
    }

    static String readLog(final ClusterDirectory dir)
    {
        final Path log = dir.daemonLog();
        try
        {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "(no log)";
        }
        catch (final IOException ex)
        {
            return "(cannot read " + log + ": " + ex.getMessage() + ")";
        }
    }
}
