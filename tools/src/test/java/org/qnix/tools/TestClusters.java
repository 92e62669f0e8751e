package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;


import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.HostClock;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessStartTicks;
import org.qnix.firmware.NicCounters;
import org.qnix.host.PageTable;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;

/**
 * Clusters for multi-JVM tests: unique short names, and teardown that happens even when a test fails
 * or the test JVM is interrupted (a shutdown hook downs whatever is still up).
 */
final class TestClusters
{
    private static final Set<ClusterDirectory> LIVE = ConcurrentHashMap.newKeySet();
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    static
    {
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            for (final ClusterDirectory dir : LIVE)
            {
                try
                {
                    ClusterControl.down(dir, new PrintStream(new ByteArrayOutputStream()));
                }
                catch (final Exception ignore)
                {
                }
            }
        }, "test-clusters-down"));
    }

    private TestClusters()
    {
    }

    static String uniqueName(final String prefix)
    {
        return prefix + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet();
    }

    static ClusterDirectory up(final String name, final int width, final int height, final String firmware)
        throws InterruptedException
    {
        return up(new ClusterControl.Settings(name, small(width, height).build()).firmware(firmware));
    }

    /** Brings up a cluster of {@code settings} that is taken down even if the test JVM is interrupted. */
    static ClusterDirectory up(final ClusterControl.Settings settings) throws InterruptedException
    {
        LIVE.add(ClusterDirectory.of(settings.name));
        return ClusterControl.up(settings, quiet());
    }

    /** @return parameters of a {@code width} x {@code height} torus with 64 MiB of SDRAM and of host memory. */
    static ClusterParameters.Builder small(final int width, final int height)
    {
        return ClusterParameters.builder().torus(width, height).sdramBytes(64L << 20).hostMemoryBytes(64L << 20);
    }

    static void down(final ClusterDirectory dir) throws InterruptedException
    {
        keepLogs(dir);
        ClusterControl.down(dir, quiet());
        LIVE.remove(dir);
    }

    /**
     * Copies the daemon and firmware logs to target/cluster-logs/NAME, to read after a failure. A
     * cluster already down (the command under test tore it down) has none left to keep.
     */
    static void keepLogs(final ClusterDirectory dir)
    {
        if (!java.nio.file.Files.isDirectory(dir.path()))
        {
            return;
        }
        final java.nio.file.Path target = java.nio.file.Path.of("target", "cluster-logs", dir.name());
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(dir.path()))
        {
            java.nio.file.Files.createDirectories(target);
            for (final java.nio.file.Path log : files.filter(p -> p.toString().endsWith(".log")).toList())
            {
                java.nio.file.Files.copy(log, target.resolve(dir.path().relativize(log).toString().replace('/', '_')),
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
        catch (final java.io.IOException ex)
        {
            System.err.println("could not keep the logs of " + dir.name() + ": " + ex);
        }
    }

    static PrintStream quiet()
    {
        return new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    }

    /**
     * Kills with SIGKILL the firmware JVM that runs {@code node}'s control program (in shared placement,
     * every node's) and waits for it to be gone: a NIC that stops as a crash would stop it.
     */
    static void killFirmware(final ClusterDirectory dir, final String node) throws Exception
    {
        final long firmware = ClusterStatus.read(dir).nodes().stream()
            .filter(n -> n.node().equals(NicCoordinates.parse(node))).findFirst().orElseThrow().firmwarePid();
        final ProcessHandle handle = ProcessHandle.of(firmware).orElseThrow();
        assertTrue(handle.destroyForcibly(), "kill -9 the firmware of node " + node);
        handle.onExit().get(60, TimeUnit.SECONDS);
    }

    /**
     * @return whether {@code process} has exited. Not {@code !isAlive()}: that counts a zombie alive, and
     * an orphan (a rank whose launcher was killed, a daemon whose {@code cluster up} ended) is reaped by
     * whatever adopted it, which in a container may be never.
     */
    static boolean isGone(final ProcessHandle process)
    {
        return isGone(process.pid());
    }

    /** @return whether the process of that pid has exited ({@link #isGone(ProcessHandle)}). */
    static boolean isGone(final long pid)
    {
        return 0 == ProcessStartTicks.ofLiving(pid);
    }

    /** @return a child's output file as it is now, for a condition that polls it. */
    static String read(final Path file)
    {
        try
        {
            return Files.readString(file);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /** Polls a condition with a generous bound; the bound is a hang guard, not a timing assertion. */
    static void await(final String what, final BooleanSupplier condition) throws InterruptedException
    {
        final long deadline = HostClock.millis() + 60_000;
        while (!condition.getAsBoolean())
        {
            if (HostClock.millis() > deadline)
            {
                throw new AssertionError("gave up waiting for: " + what);
            }
            Thread.sleep(20);
        }
    }

    /** @return live processes started for the cluster (daemon and firmware JVMs). */
    static List<ProcessHandle> processesOf(final ClusterDirectory dir)
    {
        final String marker = org.qnix.abi.JvmFlags.clusterMarker(dir.path());
        return ProcessHandle.allProcesses()
            .filter(p -> p.pid() != ProcessHandle.current().pid())
            .filter(p -> p.info().commandLine().map(c -> (c + " ").contains(marker + " ")).orElse(false))
            .toList();
    }

    /**
     * Staging memory is empty again, no packet was ever dropped (DESIGN.md 8, item 11), and every entry
     * of the VIA tables is free: no VI, memory region or CQ outlives the test (issue 14).
     *
     * @return the counters summed over the NICs.
     */
    static Map<String, Long> assertNicsClean(final ClusterDirectory dir, final int nodes) throws Exception
    {
        final Map<String, Long> totals = new HashMap<>();
        for (int i = 0; i < nodes; i++)
        {
            final NicCoordinates node = NicCoordinates.ofIndex(i, nodes > 2 ? 2 : nodes);
            final Map<String, Long> values = new HashMap<>();
            await("staging on " + node + " to drain", () ->
            {
                values.clear();
                values.putAll(counters(dir, node));
                return 0 == values.get(NicCounters.STAGING_BYTES_IN_USE);
            });
            assertEquals(0L, values.get(NicCounters.PACKETS_DROPPED), "packets dropped on " + node);
            values.forEach((k, v) -> totals.merge(k, v, Long::sum));
        }
        assertViaTablesFree(dir);
        return totals;
    }

    /**
     * Every VI, memory region and CQ entry of every NIC is free again (a process's death frees them
     * asynchronously: waited for, with the usual hang guard).
     */
    static void assertViaTablesFree(final ClusterDirectory dir) throws InterruptedException
    {
        final String[] held = new String[1];
        try
        {
            await("the VIA tables to be free", () ->
            {
                final ClusterStatus.Vipl vipl = ClusterStatus.read(dir).vipl();
                held[0] = vipl.vis() + " " + vipl.regions() + " " + vipl.cqs();
                return vipl.vis().isEmpty() && vipl.regions().isEmpty() && vipl.cqs().isEmpty();
            });
        }
        catch (final AssertionError ex)
        {
            throw new AssertionError("VIA table entries still in use: " + held[0], ex);
        }
    }

    static Map<String, Long> counters(final ClusterDirectory dir, final NicCoordinates node)
    {
        return NicStatistics.counters(dir, node);
    }

    /**
     * Registers a test's own process (AI, 0), alone in its application's group, on {@code node}: the
     * init timeout is a hang guard, not a timing assertion.
     */
    static Qnix registerAlone(final ClusterDirectory dir, final int ai, final String node)
    {
        return Qnix.options().name(new ProcessName(ai, 0)).group(ai, 1).cluster(dir.name()).node(node)
            .timeout(Duration.ofSeconds(120)).init();
    }

    /** @return the physical page addresses of a buffer, in its mapping's order. */
    static List<Long> pages(final QnixBuffer buffer)
    {
        final PageTable table = buffer.translate();
        final List<Long> pages = new ArrayList<>();
        for (int i = 0; i < table.descriptors(); i++)
        {
            pages.add(table.address(i));
        }
        return pages;
    }

    /** Runs a parallel program to completion; it must exit 0. @return its output. */
    static String run(final ProgramLauncher launcher) throws InterruptedException
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        final int exit = launcher.run(out);
        final String output = bytes.toString(StandardCharsets.UTF_8);
        System.out.println(output);
        assertEquals(0, exit, output);
        return output;
    }
}
