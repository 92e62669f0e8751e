package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

/**
 * {@link NicProcessor}: the CPU list of {@code /sys}, {@code --nic-cpu}'s rules, and a process moving
 * off the NICs' CPU and back, read from {@code /proc} for every thread.
 */
class NicProcessorTest
{
    @Test
    void theHighestCpuOfALinuxCpuList()
    {
        assertEquals(0, NicProcessor.highestOf("0"));
        assertEquals(1, NicProcessor.highestOf("0-1"));
        assertEquals(11, NicProcessor.highestOf("0-3,8,10-11"));
        assertEquals(8, NicProcessor.highestOf("2,8,4-5"));
    }

    @Test
    void nicCpuIsTheHighestOnlineCpuOnlyForTheSharedPlacementOnTwoOrMore()
    {
        final int highest = NicProcessor.highestOnlineCpu();
        assertEquals(highest >= 1 ? highest : NicProcessor.NONE,
            NicProcessor.resolve("auto", ClusterProperties.FIRMWARE_SHARED));
        assertEquals(NicProcessor.NONE, NicProcessor.resolve("auto", ClusterProperties.FIRMWARE_PROCESSES));
        assertEquals(NicProcessor.NONE, NicProcessor.resolve("none", ClusterProperties.FIRMWARE_SHARED));
        assertEquals(0, NicProcessor.resolve("0", ClusterProperties.FIRMWARE_SHARED));
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> NicProcessor.resolve(Integer.toString(highest + 1), ClusterProperties.FIRMWARE_SHARED))
            .getMessage().contains("CPUs 0 to " + highest + " are online"));
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> NicProcessor.resolve("0", ClusterProperties.FIRMWARE_THREADS)).getMessage()
            .contains("only --firmware shared"));
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> NicProcessor.resolve("last", ClusterProperties.FIRMWARE_SHARED)).getMessage()
            .contains("use auto, none or a CPU number"));
    }

    @Test
    void everyThreadKeepsOffTheCpuUntilTheLastAvoidanceClosesThenGetsItsCpusBack() throws Exception
    {
        final int cpu = NicProcessor.highestOnlineCpu();
        assumeTrue(cpu >= 1, "needs two CPUs");
        final Map<Integer, TreeSet<Integer>> before = allowedCpus();
        assumeTrue(before.values().stream().allMatch(cpus -> cpus.contains(cpu) && cpus.size() > 1),
            "this JVM may run on CPU " + cpu + " and another: " + before);

        final NicProcessor.Avoidance first = NicProcessor.avoid(cpu, "test");
        final NicProcessor.Avoidance second = NicProcessor.avoid(cpu, "test");
        assertTrue(first.held() && second.held());
        assertNull(first.failure());
        allowedCpus().forEach((tid, cpus) -> assertFalse(cpus.contains(cpu), "thread " + tid + " on " + cpus));
        // A thread started meanwhile inherits its starter's CPUs.
        final String[] startedOn = new String[1];
        final Thread started = new Thread(() -> startedOn[0] = ownCpus(), "started-while-avoiding");
        started.start();
        started.join();
        assertFalse(cpus(startedOn[0]).contains(cpu), startedOn[0]);

        first.close();
        first.close();
        allowedCpus().forEach((tid, cpus) -> assertFalse(cpus.contains(cpu), "one avoidance is still open: " + cpus));
        second.close();
        final Map<Integer, TreeSet<Integer>> after = allowedCpus();
        after.forEach((tid, cpus) -> assertEquals(before.values().iterator().next(), cpus, "thread " + tid));

        assertFalse(NicProcessor.avoid(NicProcessor.NONE, "test").held(), "no CPU: nothing moves");
    }

    /** @return each thread of this JVM and the CPUs it may run on, from /proc/self/task/TID/status. */
    private static Map<Integer, TreeSet<Integer>> allowedCpus() throws IOException
    {
        final Map<Integer, TreeSet<Integer>> allowed = new TreeMap<>();
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(Path.of("/proc/self/task")))
        {
            for (final Path thread : threads)
            {
                final String status;
                try
                {
                    status = Files.readString(thread.resolve("status"));
                }
                catch (final IOException ex)
                {
                    continue;   // the thread ended since the listing
                }
                for (final String line : status.split("\n"))
                {
                    if (line.startsWith("Cpus_allowed_list:"))
                    {
                        allowed.put(Integer.parseInt(thread.getFileName().toString()),
                            cpus(line.substring(line.indexOf(':') + 1).trim()));
                    }
                }
            }
        }
        return allowed;
    }

    private static String ownCpus()
    {
        try
        {
            for (final String line : Files.readString(Path.of("/proc/thread-self/status")).split("\n"))
            {
                if (line.startsWith("Cpus_allowed_list:"))
                {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
            return "";
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    static TreeSet<Integer> cpus(final String list)
    {
        final TreeSet<Integer> cpus = new TreeSet<>();
        for (final String range : list.split(","))
        {
            final int dash = range.indexOf('-');
            final int from = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
            final int to = Integer.parseInt(dash < 0 ? range : range.substring(dash + 1));
            for (int c = from; c <= to; c++)
            {
                cpus.add(c);
            }
        }
        return cpus;
    }
}
