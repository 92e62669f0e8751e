package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link NicProcessor}: the CPU list of {@code /sys}, {@code --nic-cpu}'s rules, and a process moving
 * off the NICs' CPU and back, read from {@code /proc} for every thread.
 */
class NicProcessorTest
{
    @Test
    void theCpusOfALinuxCpuList()
    {
        assertEquals(new TreeSet<>(List.of(0, 1, 2, 3, 8, 10, 11)), NicProcessor.cpuList("0-3,8,10-11\n"));
        assertEquals(0, NicProcessor.cpuList("0").last());
        assertEquals(1, NicProcessor.cpuList("0-1").last());
        assertEquals(11, NicProcessor.cpuList("0-3,8,10-11").last());
        assertEquals(8, NicProcessor.cpuList("2,8,4-5").last());
        for (final String list : List.of("0", "1", "0-1", "0-3,8,10-11", "2,4-5,8"))
        {
            assertEquals(list, NicProcessor.cpuListText(NicProcessor.cpuList(list)));
        }
        assertEquals("", NicProcessor.cpuListText(new TreeSet<>()));
    }

    /** A machine whose online CPUs have a gap: a CPU in the gap is refused, though below the highest. */
    @Test
    void aCpuBetweenOnlineOnesIsNotOnline()
    {
        final java.util.SortedSet<Integer> online = NicProcessor.cpuList("0-3,8");
        assertEquals(8, NicProcessor.resolve("auto", ClusterProperties.FIRMWARE_SHARED, online));
        assertEquals(8, NicProcessor.resolve("8", ClusterProperties.FIRMWARE_SHARED, online));
        assertEquals(3, NicProcessor.resolve("3", ClusterProperties.FIRMWARE_SHARED, online));
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> NicProcessor.resolve("5", ClusterProperties.FIRMWARE_SHARED, online))
            .getMessage().contains("--nic-cpu 5: CPU 5 is not online, or not in this process's cpuset (online " +
                "and allowed: [0, 1, 2, 3, 8])"));
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
            .getMessage().contains("CPU " + (highest + 1) + " is not online"));
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> NicProcessor.resolve("0", ClusterProperties.FIRMWARE_THREADS)).getMessage()
            .contains("only --firmware shared"));
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> NicProcessor.resolve("last", ClusterProperties.FIRMWARE_SHARED)).getMessage()
            .contains("use auto, none or a CPU number"));
    }

    @Test
    void everyThreadKeepsOffTheCpuUntilTheLastPlacementClosesThenGetsItsCpusBack() throws Exception
    {
        final int cpu = NicProcessor.highestOnlineCpu();
        final long pid = ProcessHandle.current().pid();
        final SortedSet<Integer> before = cpusOrSkip(pid, cpu);

        final NicProcessor.Placement first = NicProcessor.avoid(cpu, "test");
        final NicProcessor.Placement second = NicProcessor.avoid(cpu, "test");
        assertTrue(first.held() && second.held());
        assertNull(first.failure());
        assertFalse(NicProcessor.allowedCpus(pid).contains(cpu), "no thread on CPU " + cpu);
        // A thread started meanwhile inherits its starter's CPUs.
        final String[] startedOn = new String[1];
        final Thread started = new Thread(() -> startedOn[0] = ownCpus(), "started-while-avoiding");
        started.start();
        started.join();
        assertFalse(NicProcessor.cpuList(startedOn[0]).contains(cpu), startedOn[0]);

        first.close();
        first.close();
        assertFalse(NicProcessor.allowedCpus(pid).contains(cpu), "one avoidance is still open");
        second.close();
        assertEquals(before, NicProcessor.allowedCpus(pid), "every avoidance closed");

        assertFalse(NicProcessor.avoid(NicProcessor.NONE, "test").held(), "no CPU: nothing moves");
        assertFalse(NicProcessor.avoid(1 << 20, "test").held(), "a CPU no cpu_set_t can name: nothing moves");
        assertEquals(before, NicProcessor.allowedCpus(pid));
        assertTrue(NicProcessor.bindProcess(-7).contains("not one a cpu_set_t can name"));
        assertEquals(NicProcessor.NONE, new ClusterProperties(new java.util.Properties())
            .with(ClusterProperties.NIC_CPU, "one").nicCpu(), "a hand-edited value binds nothing");
    }

    @Test
    void placedOnTheCpuEveryThreadRunsThereAloneUntilTheLastPlacementClosesAndTheFirstPlacementHolds() throws Exception
    {
        final int cpu = NicProcessor.highestOnlineCpu();
        final long pid = ProcessHandle.current().pid();
        final SortedSet<Integer> before = cpusOrSkip(pid, cpu);

        final NicProcessor.Placement on = NicProcessor.place(cpu, true, "test");
        // A later registration's advice does not move a placed process.
        final NicProcessor.Placement off = NicProcessor.place(cpu, false, "test");
        assertTrue(on.held() && off.held());
        assertNull(on.failure());
        assertEquals(new TreeSet<>(List.of(cpu)), NicProcessor.allowedCpus(pid), "every thread on CPU " + cpu + " alone");
        final String[] startedOn = new String[1];
        final Thread started = new Thread(() -> startedOn[0] = ownCpus(), "started-while-placed");
        started.start();
        started.join();
        assertEquals(Integer.toString(cpu), startedOn[0]);

        on.close();
        assertEquals(new TreeSet<>(List.of(cpu)), NicProcessor.allowedCpus(pid), "one placement is still open");
        off.close();
        assertEquals(before, NicProcessor.allowedCpus(pid), "every placement closed");

        // Kept off the CPU by someone else (here: bound to another), a process placed on it stays off.
        final int other = before.first();
        assertNull(NicProcessor.bindProcess(other));
        try
        {
            final NicProcessor.Placement refused = NicProcessor.place(cpu, true, "test");
            assertFalse(refused.held());
            assertNull(refused.failure(), "nothing to say: it was put there on purpose");
            assertEquals(new TreeSet<>(List.of(other)), NicProcessor.allowedCpus(pid));
        }
        finally
        {
            taskset(pid, NicProcessor.cpuListText(before));
        }
        assertEquals(before, NicProcessor.allowedCpus(pid));
    }

    /**
     * An affinity mask is no limit (the firmware binds itself past it): a process under {@code taskset},
     * or placed off the NICs' CPU, brings up clusters with every online CPU.
     */
    @Test
    void tasksetAndAPlacementDoNotNarrowTheCpusAClusterMayUse() throws Exception
    {
        final int highest = NicProcessor.highestOnlineCpu();
        assumeTrue(highest >= 1, "needs two CPUs");
        final long pid = ProcessHandle.current().pid();
        final SortedSet<Integer> before = NicProcessor.allowedCpus(pid);
        assumeTrue(before.equals(NicProcessor.onlineCpus()), "this JVM may run on every online CPU: " + before);
        taskset(pid, "0");
        try
        {
            assertEquals(NicProcessor.onlineCpus(), NicProcessor.usableCpus());
            assertEquals(highest, NicProcessor.resolve("auto", ClusterProperties.FIRMWARE_SHARED));
            assertEquals(new TreeSet<>(List.of(0)), NicProcessor.allowedCpus(pid), "the probe moved no other thread");
        }
        finally
        {
            taskset(pid, NicProcessor.cpuListText(before));
        }
        try (NicProcessor.Placement placed = NicProcessor.avoid(highest, "test"))
        {
            assertTrue(placed.held());
            assertEquals(highest, NicProcessor.resolve("auto", ClusterProperties.FIRMWARE_SHARED));
        }
        assertEquals(before, NicProcessor.allowedCpus(pid));
    }

    /**
     * A cpuset is a limit: a process in a cpuset of one CPU (a cgroup made here, as a container's
     * {@code --cpuset-cpus} would be) brings up clusters without a NICs' CPU, and another CPU is refused.
     * Skipped where this process may not make cpusets (it needs cgroup v1's cpuset hierarchy, as root).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aCpusetOfOneCpuBringsUpClustersWithoutANicCpu() throws Exception
    {
        assumeTrue(NicProcessor.onlineCpus().size() >= 2, "needs two CPUs");
        final Path hierarchy = Path.of("/sys/fs/cgroup/cpuset");
        assumeTrue(Files.readAllLines(Path.of("/proc/self/mounts")).stream()
            .map(line -> line.split(" ")).anyMatch(f -> f.length > 3 && f[1].equals(hierarchy.toString()) &&
                f[2].equals("cgroup") && List.of(f[3].split(",")).contains("cpuset")) && Files.isWritable(hierarchy),
            "a writable cgroup v1 cpuset hierarchy at " + hierarchy);
        final SortedSet<Integer> parent = NicProcessor.cpuList(Files.readString(hierarchy.resolve("cpuset.effective_cpus")));
        final int inside = parent.first();
        final int outside = NicProcessor.onlineCpus().stream().filter(cpu -> cpu != inside).findFirst().orElseThrow();
        final Path cpuset = hierarchy.resolve("qnix-test-" + ProcessHandle.current().pid());
        Process child = null;
        try
        {
            try
            {
                Files.createDirectory(cpuset);
                Files.writeString(cpuset.resolve("cpuset.cpus"), Integer.toString(inside));
                Files.writeString(cpuset.resolve("cpuset.mems"), Files.readString(hierarchy.resolve("cpuset.mems")).trim());
            }
            catch (final IOException ex)
            {
                assumeTrue(false, "cannot make a cpuset of CPU " + inside + " here: " + ex);
            }
            final List<String> command = new java.util.ArrayList<>(List.of(JvmFlags.javaExecutable()));
            command.addAll(JvmFlags.flags());
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), UsableCpus.class.getName(),
                Integer.toString(outside)));
            child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            Files.writeString(cpuset.resolve("cgroup.procs"), Long.toString(child.pid()));
            child.getOutputStream().write('\n');
            child.getOutputStream().flush();
            final String output = new String(child.getInputStream().readAllBytes());
            assertEquals(0, child.waitFor(), output);
            assertTrue(output.lines().anyMatch(line -> line.equals("usable [" + inside + "], auto " + NicProcessor.NONE +
                ", CPU " + outside + ": --nic-cpu " + outside + ": CPU " + outside + " is not online, or not in this " +
                "process's cpuset (online and allowed: [" + inside + "])")), output);
        }
        finally
        {
            if (null != child)
            {
                child.destroyForcibly().waitFor();
            }
            try
            {
                Files.deleteIfExists(cpuset);
            }
            catch (final IOException ex)
            {
                // Not to hide the test's own failure: the cgroup is named after this JVM, to be found.
                System.err.println("could not remove " + cpuset + ": " + ex);
            }
        }
    }

    /** What a process started in a cpuset sees, once told it is in: for the cpuset test. */
    static final class UsableCpus
    {
        public static void main(final String[] args) throws Exception
        {
            System.in.read();
            String refusal = "accepted";
            try
            {
                NicProcessor.resolve(args[0], ClusterProperties.FIRMWARE_SHARED);
            }
            catch (final IllegalArgumentException ex)
            {
                refusal = ex.getMessage();
            }
            System.out.println("usable " + NicProcessor.usableCpus() + ", auto " +
                NicProcessor.resolve("auto", ClusterProperties.FIRMWARE_SHARED) + ", CPU " + args[0] + ": " + refusal);
        }
    }

    /** @return the CPUs the process may run on; skips the test unless {@code cpu} (not 0) and another are among them. */
    private static SortedSet<Integer> cpusOrSkip(final long pid, final int cpu)
    {
        assumeTrue(cpu >= 1, "needs two CPUs");
        final SortedSet<Integer> cpus = NicProcessor.allowedCpus(pid);
        assumeTrue(cpus.contains(cpu) && cpus.size() > 1, "process " + pid + " may run on CPU " + cpu + " and another: " +
            cpus);
        return cpus;
    }

    private static void taskset(final long pid, final String cpus) throws Exception
    {
        final Process taskset = new ProcessBuilder("taskset", "-a", "-p", "-c", cpus, Long.toString(pid))
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertEquals(0, taskset.waitFor());
    }

    @Test
    void anotherProcessMovesOntoTheCpuAndOffItButAProcessThatReusedThePidStays() throws Exception
    {
        final int cpu = NicProcessor.highestOnlineCpu();
        assumeTrue(cpu >= 1, "needs two CPUs");
        final Process child = new ProcessBuilder("sleep", "60").start();
        try
        {
            final long pid = child.pid();
            final SortedSet<Integer> before = cpusOrSkip(pid, cpu);
            final long ticks = ProcessStartTicks.of(pid);

            assertNull(NicProcessor.moveProcess(pid, ticks, cpu, true, before));
            assertEquals(new TreeSet<>(List.of(cpu)), NicProcessor.allowedCpus(pid));
            assertNull(NicProcessor.moveProcess(pid, ticks, cpu, false, before));
            final SortedSet<Integer> off = new TreeSet<>(before);
            off.remove(cpu);
            assertEquals(off, NicProcessor.allowedCpus(pid), "the CPUs it had, less the NICs'");

            assertEquals("process " + pid + " has exited", NicProcessor.moveProcess(pid, ticks + 1, cpu, true, before));
            assertEquals(off, NicProcessor.allowedCpus(pid), "another start: not the process placed");
            assertEquals("process " + pid + " may run on one side of CPU " + cpu + " only ([" + cpu + "])",
                NicProcessor.moveProcess(pid, ticks, cpu, false, new TreeSet<>(List.of(cpu))));
            assertEquals(off, NicProcessor.allowedCpus(pid));
            final long self = ProcessHandle.current().pid();
            assertEquals("it is the process that would move it",
                NicProcessor.moveProcess(self, ProcessStartTicks.of(self), cpu, true, before));

            child.destroyForcibly().waitFor();
            assertEquals("process " + pid + " has exited", NicProcessor.moveProcess(pid, ticks, cpu, true, before));
        }
        finally
        {
            child.destroyForcibly().waitFor();
        }
    }

    private static String ownCpus()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/thread-self/status")))
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
}
