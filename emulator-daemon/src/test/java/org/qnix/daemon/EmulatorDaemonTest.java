package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessStartTicks;
import org.qnix.firmware.NodeImage;

/** The emulator daemon as a process of its own, started by hand. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class EmulatorDaemonTest
{
    /** A hang guard for the daemon to refuse, not a timing assertion. */
    private static final long REFUSED_WITHIN_SECONDS = 60;
    private static final byte MARK = 0x5A;

    @TempDir
    Path base;

    /**
     * A cluster whose daemon (a stand-in process carrying the cluster's marker, as its cluster.properties
     * says) is running: a second daemon on its directory exits non-zero saying so, and leaves every file
     * as it was, the NIC's memory included (truncating it would kill every process that maps it with
     * SIGBUS).
     */
    @Test
    void aDaemonStartedOnALiveClusterRefusesAndTouchesNothing() throws Exception
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "live");
        final Process standIn = standInDaemon(dir);
        try
        {
            refusedOnLiveCluster(dir, standIn.toHandle());
        }
        finally
        {
            standIn.destroyForcibly();
            standIn.waitFor(REFUSED_WITHIN_SECONDS, TimeUnit.SECONDS);
        }
    }

    /**
     * A daemon started by hand without the cluster's marker on its command line, on a fresh directory:
     * every later look would take its cluster for stale (a reused pid) and let a second daemon or
     * {@code cluster up} remove the files its processes map, so it refuses, saying which flag to add,
     * and creates nothing.
     */
    @Test
    void aDaemonStartedWithoutTheClustersMarkerRefusesAndCreatesNothing() throws Exception
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "unmarked");
        final NicCoordinates node = NicCoordinates.ofIndex(0, 1);
        final Path log = base.resolve("unmarked-daemon.log");
        final Process daemon = startedByHand(dir, DriverTestCluster.parameters(1), log);

        final String output = Files.readString(log, StandardCharsets.UTF_8);
        assertNotEquals(0, daemon.exitValue(), output);
        final String refusal = "qnix-daemon: not starting on " + dir.path() + ": ";
        assertTrue(output.lines().anyMatch(line -> line.startsWith(refusal)), output);
        assertTrue(output.contains("add " + JvmFlags.clusterMarker(dir.path()) + " first on the java command line"),
            output);
        assertTrue(output.contains("./qnix cluster up"), output);

        assertFalse(Files.exists(dir.propertiesFile()), "no cluster.properties");
        assertFalse(Files.exists(dir.nodeDirectory(node)), "no node files");
        assertFalse(Files.exists(dir.path()), "no cluster directory");
    }

    /**
     * cluster.properties naming a live process that was not started for the cluster (a reused pid, or a
     * file rewritten by a member of a --shared-with-group group so that the owner's `down` would signal
     * one of the owner's processes): the cluster is stale, and nothing signals that process.
     */
    @Test
    void aDaemonPidOfAProcessWithoutTheClustersMarkerIsStale() throws Exception
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "forged");
        ClusterFiles.create(dir);
        writeProperties(dir, DriverTestCluster.parameters(1), ProcessHandle.current());
        final ClusterState state = ClusterState.inspect(dir);
        assertTrue(state.isStale(), state.reason());
        assertTrue(state.reason().contains("not started for this cluster"), state.reason());
    }

    /**
     * The clock set back or forward after the daemon started (a virtual machine's resume, an NTP step)
     * moves the wall-clock start the JDK reports for it, but not its start in clock ticks: the cluster
     * is still live, so no `cluster up` of the name takes its files for a stale cluster's.
     */
    @Test
    void aLiveDaemonIsLiveAfterTheClockMoved() throws Exception
    {
        final ClusterState state = stateOfLiveStandIn("clock", -3_600_000L, 0);
        assertTrue(state.isLive(), state.reason());
    }

    /** The daemon's pid, now another process's (another start in clock ticks): stale, whatever its wall-clock start. */
    @Test
    void aDaemonPidThatStartedAtOtherTicksIsStale() throws Exception
    {
        final ClusterState state = stateOfLiveStandIn("reused", 0, -1);
        assertTrue(state.isStale(), state.reason());
        assertTrue(state.reason().contains("that pid now belongs to another process"), state.reason());
    }

    /**
     * @return what {@link ClusterState#inspect} makes of a cluster whose properties name a live stand-in
     * daemon with its start moved by {@code startMsShift} ms and {@code startTicksShift} clock ticks.
     */
    private ClusterState stateOfLiveStandIn(final String name, final long startMsShift, final long startTicksShift)
        throws Exception
    {
        final ClusterDirectory dir = new ClusterDirectory(base, name);
        final Process standIn = standInDaemon(dir);
        try
        {
            ClusterFiles.create(dir);
            final long startMs = standIn.info().startInstant().map(Instant::toEpochMilli).orElseThrow();
            writeProperties(dir, DriverTestCluster.parameters(1), standIn.toHandle(), startMs + startMsShift,
                ProcessStartTicks.of(standIn.pid()) + startTicksShift);
            return ClusterState.inspect(dir);
        }
        finally
        {
            standIn.destroyForcibly().waitFor();
        }
    }

    /** @return a process that lives until destroyed, with the cluster's marker on its command line. */
    private static Process standInDaemon(final ClusterDirectory dir) throws Exception
    {
        // `; :` keeps the shell from exec-ing sleep, which would drop the marker ($0) from the command line.
        return new ProcessBuilder("sh", "-c", "sleep 600; :", JvmFlags.clusterMarker(dir.path())).start();
    }

    private static void writeProperties(final ClusterDirectory dir, final ClusterParameters params,
        final ProcessHandle daemon)
    {
        writeProperties(dir, params, daemon, daemon.info().startInstant().map(Instant::toEpochMilli).orElse(0L),
            ProcessStartTicks.of(daemon.pid()));
    }

    private static void writeProperties(final ClusterDirectory dir, final ClusterParameters params,
        final ProcessHandle daemon, final long startMs, final long startTicks)
    {
        ClusterProperties.of(params, daemon.pid(), startMs, startTicks, ClusterProperties.FIRMWARE_THREADS,
            ClusterProperties.STATE_UP).write(dir.propertiesFile());
    }

    private void refusedOnLiveCluster(final ClusterDirectory dir, final ProcessHandle standIn) throws Exception
    {
        final ClusterParameters params = DriverTestCluster.parameters(1);
        final NicCoordinates node = NicCoordinates.ofIndex(0, 1);
        ClusterFiles.create(dir);
        writeProperties(dir, params, standIn);
        NodeImage.create(dir, params, node).close();
        // Written through the file, not a mapping: this JVM must not map what the daemon may truncate.
        try (RandomAccessFile sdram = new RandomAccessFile(dir.nicSdram(node).toFile(), "rw"))
        {
            sdram.seek(sdram.length() - 1);
            sdram.write(MARK);
        }
        final byte[] propertiesBefore = Files.readAllBytes(dir.propertiesFile());
        final byte[] sdramBefore = Files.readAllBytes(dir.nicSdram(node));
        final byte[] hostBefore = Files.readAllBytes(dir.hostMemory(node));

        final Path log = base.resolve("second-daemon.log");
        final Process daemon = startedByHand(dir, params, log);
        final String output = Files.readString(log, StandardCharsets.UTF_8);
        assertNotEquals(0, daemon.exitValue(), output);
        assertTrue(output.contains("cluster 'live' is already up (daemon pid " + standIn.pid() + " is running)"),
            output);

        assertArrayEquals(propertiesBefore, Files.readAllBytes(dir.propertiesFile()), "cluster.properties untouched");
        assertArrayEquals(hostBefore, Files.readAllBytes(dir.hostMemory(node)), "host.mem untouched");
        final byte[] sdramAfter = Files.readAllBytes(dir.nicSdram(node));
        assertEquals(MARK, sdramAfter[sdramAfter.length - 1], "nic.sdram not truncated");
        assertArrayEquals(sdramBefore, sdramAfter, "nic.sdram untouched");
        assertFalse(Files.exists(dir.driverSocket(node)), "no driver socket");
        assertTrue(ClusterState.inspect(dir).isLive(), "the cluster is still up");
    }

    /**
     * @return a daemon started by hand on {@code dir} (no cluster marker on its command line, as a user's
     * own {@code java} command would have it), exited, its output in {@code log}.
     */
    private static Process startedByHand(final ClusterDirectory dir, final ClusterParameters params, final Path log)
        throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(JvmFlags.javaExecutable());
        command.addAll(JvmFlags.flags());
        command.addAll(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m", "-cp",
            JvmFlags.classPath(), EmulatorDaemon.class.getName(), "--cluster-dir=" + dir.path(),
            "--firmware=" + ClusterProperties.FIRMWARE_THREADS));
        for (final Map.Entry<String, String> setting : params.toMap().entrySet())
        {
            command.add("--set=" + setting.getKey() + "=" + setting.getValue());
        }
        final Process daemon =
            new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try
        {
            assertTrue(daemon.waitFor(REFUSED_WITHIN_SECONDS, TimeUnit.SECONDS), "the daemon started by hand exited");
        }
        finally
        {
            // Had it gone up instead of refusing, SIGTERM makes it remove what it made.
            daemon.destroy();
            daemon.waitFor(REFUSED_WITHIN_SECONDS, TimeUnit.SECONDS);
            daemon.destroyForcibly();
        }
        return daemon;
    }
}
