package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.CloseHelper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.NicProcessor;
import org.qnix.lib.Qnix;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplNic;

/**
 * The NICs' processor on a real cluster: with the shared placement the firmware JVM runs on the
 * cluster's NIC CPU alone, a process keeps off it while it holds a QNIX or VIPL registration and gets
 * its CPUs back when it closes the last; {@code --firmware processes} and {@code --nic-cpu none} bind
 * nothing; a CPU that is not online is refused before anything is made.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class NicProcessorClusterTest
{
    @Test
    void theFirmwareRunsOnTheNicCpuAndARegisteredProcessKeepsOffItUntilItsLastRegistrationCloses() throws Exception
    {
        final int cpu = nicCpuOrSkip();
        final SortedSet<Integer> mine = NicProcessor.allowedCpus(ProcessHandle.current().pid());

        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("cpu"), 2, 1, "shared");
        try
        {
            assertEquals(cpu, ClusterProperties.read(dir.propertiesFile()).orElseThrow().nicCpu());
            final long firmware = ClusterStatus.read(dir).nodes().get(0).firmwarePid();
            assertEquals(new TreeSet<>(List.of(cpu)), NicProcessor.allowedCpus(firmware), "every thread of the firmware JVM");
            final CliResult status = CliResult.run("cluster", "status", "--name", dir.name());
            assertTrue(status.out.contains("firmware as shared on CPU " + cpu), status.out);

            // Closed on failure too: a registration left open would keep this JVM, and every cluster the
            // later tests of this JVM bring up, off the NICs' CPU.
            Qnix qnix = null;
            ViplNic nic = null;
            try
            {
                qnix = TestClusters.registerAlone(dir, 811, "0-0");
                final SortedSet<Integer> registered = NicProcessor.allowedCpus(ProcessHandle.current().pid());
                assertFalse(registered.contains(cpu), "registered: " + registered);
                nic = Vipl.openNic("1-0", dir.name());
                qnix.close();
                assertFalse(NicProcessor.allowedCpus(ProcessHandle.current().pid()).contains(cpu),
                    "the VIPL NIC is still open");
                nic.close();
                assertEquals(mine, NicProcessor.allowedCpus(ProcessHandle.current().pid()), "every registration closed");
            }
            finally
            {
                CloseHelper.quietCloseAll(nic, qnix);
            }
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    /**
     * The driver's placement (issue 13; the daemon's NicCpuPlacement), seen from outside: of a job of
     * four, rank 3 runs on the NICs' CPU alone, beside the firmware, and ranks 0, 1 and 2 off it, as
     * {@code qnix ps} shows.
     */
    @Test
    void rankThreeOfAJobOfFourRunsOnTheNicCpuAndTheOthersOffIt() throws Exception
    {
        final int cpu = nicCpuOrSkip();

        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("cpu"), 2, 2, "shared");
        final Path hold = Files.createTempFile("qnix-hold", ".flag");
        HeldJob job = null;
        try
        {
            job = HeldJob.start(dir, 4, 821, hold);
            job.awaitGreetings();

            final Map<Integer, SortedSet<Integer>> cpusByRank = new TreeMap<>();
            for (final ClusterStatus.Process process : ClusterStatus.read(dir).registered())
            {
                cpusByRank.put(process.name().pi(), NicProcessor.allowedCpus(process.osPid()));
            }
            assertEquals(4, cpusByRank.size(), cpusByRank.toString());
            assertEquals(new TreeSet<>(List.of(cpu)), cpusByRank.get(3), "rank 3: " + cpusByRank);
            for (final int rank : List.of(0, 1, 2))
            {
                assertFalse(cpusByRank.get(rank).contains(cpu), "rank " + rank + ": " + cpusByRank);
            }
            final CliResult ps = CliResult.run("ps", "--cluster", dir.name());
            assertEquals(QnixCommand.OK, ps.exit, ps.err);
            assertTrue(ps.out.lines().anyMatch(l -> l.startsWith("(821,3)") && l.contains(" " + cpu + " ")), ps.out);

            Files.delete(hold);
            assertEquals(0, job.exit(), job.output());
        }
        finally
        {
            Files.deleteIfExists(hold);
            TestClusters.down(dir);
            HeldJob.joinAll(job);
        }
    }

    /**
     * The driver places processes again when others leave: of two jobs of two, the second's rank 1 runs
     * on the NICs' CPU while the first job runs, and moves off it once the first has ended, since a pair
     * alone with one member beside the firmware takes 1.4-1.8 times as long one way.
     */
    @Test
    void aPairWhoseOtherJobEndsMovesItsMemberOffTheNicCpu() throws Exception
    {
        final int cpu = nicCpuOrSkip();

        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("cpu"), 2, 1, "shared");
        final Path holdFirst = Files.createTempFile("qnix-hold", ".flag");
        final Path holdSecond = Files.createTempFile("qnix-hold", ".flag");
        HeldJob first = null;
        HeldJob second = null;
        try
        {
            first = HeldJob.start(dir, 2, 831, holdFirst);
            first.awaitGreetings();
            second = HeldJob.start(dir, 2, 832, holdSecond);
            second.awaitGreetings();
            assertEquals(new TreeSet<>(List.of(cpu)), cpusOf(dir, 832, 1), "four processes: the fourth beside the firmware");
            assertFalse(cpusOf(dir, 832, 0).contains(cpu));

            Files.delete(holdFirst);
            assertEquals(0, first.exit(), first.output());
            TestClusters.await("(832,1) off CPU " + cpu, () -> !cpusOf(dir, 832, 1).contains(cpu));
            assertFalse(cpusOf(dir, 832, 1).isEmpty(), "still registered, and running");
            assertFalse(cpusOf(dir, 832, 0).contains(cpu));

            Files.delete(holdSecond);
            assertEquals(0, second.exit(), second.output());
        }
        finally
        {
            Files.deleteIfExists(holdFirst);
            Files.deleteIfExists(holdSecond);
            TestClusters.down(dir);
            HeldJob.joinAll(first, second);
        }
    }

    /** @return the CPUs the registered process (application, rank) may run on; empty if it is not registered. */
    private static SortedSet<Integer> cpusOf(final ClusterDirectory dir, final int application, final int rank)
    {
        for (final ClusterStatus.Process process : ClusterStatus.read(dir).registered())
        {
            if (process.name().ai() == application && process.name().pi() == rank)
            {
                return NicProcessor.allowedCpus(process.osPid());
            }
        }
        return new TreeSet<>();
    }

    /** A job of Hello programs that hold their registrations while a file exists. */
    private static final class HeldJob
    {
        final AtomicInteger greetings = new AtomicInteger();
        final AtomicInteger exit = new AtomicInteger(-1);
        final ByteArrayOutputStream output = new ByteArrayOutputStream();
        int size;
        Thread runner;

        static HeldJob start(final ClusterDirectory dir, final int size, final int application, final Path hold)
        {
            final HeldJob job = new HeldJob();
            job.size = size;
            final ProgramLauncher launcher = new ProgramLauncher(dir, size, "Hello", List.of("--hold-while", hold.toString()))
                .applicationId(application).onLine(line -> job.greetings.addAndGet(line.startsWith("Hello from") ? 1 : 0));
            job.runner = new Thread(() ->
            {
                try
                {
                    job.exit.set(launcher.run(new PrintStream(job.output, true, StandardCharsets.UTF_8)));
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            });
            job.runner.start();
            return job;
        }

        /** Waits until every member has said hello: every one is registered. */
        void awaitGreetings() throws InterruptedException
        {
            TestClusters.await(size + " greetings", () -> greetings.get() == size);
        }

        int exit() throws InterruptedException
        {
            runner.join();
            return exit.get();
        }

        String output()
        {
            return output.toString(StandardCharsets.UTF_8);
        }

        /** Waits for the runners of the jobs started (null: not started), once the cluster is down. */
        static void joinAll(final HeldJob... jobs) throws InterruptedException
        {
            for (final HeldJob job : jobs)
            {
                if (null != job)
                {
                    job.runner.join();
                }
            }
        }
    }

    /** @return the NICs' CPU a shared cluster gets here; skips the test unless this JVM may run on it and another. */
    private static int nicCpuOrSkip()
    {
        final int cpu = NicProcessor.resolve("auto", ClusterProperties.FIRMWARE_SHARED);
        assumeTrue(cpu >= 1, "needs two CPUs");
        final SortedSet<Integer> mine = NicProcessor.allowedCpus(ProcessHandle.current().pid());
        assumeTrue(mine.contains(cpu) && mine.size() > 1, "this JVM may run on CPU " + cpu + " and another: " + mine);
        return cpu;
    }

    @Test
    void processesPlacementAndNoneBindNothingAndAnOfflineCpuIsRefused() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("cpu"), 2, 1, "processes");
        try
        {
            assertEquals(NicProcessor.NONE, ClusterProperties.read(dir.propertiesFile()).orElseThrow().nicCpu());
            for (final ClusterStatus.Node node : ClusterStatus.read(dir).nodes())
            {
                assertNotEquals(1, NicProcessor.allowedCpus(node.firmwarePid()).size(), "unbound: the firmware JVM of " + node.node());
            }
        }
        finally
        {
            TestClusters.down(dir);
        }

        final String name = TestClusters.uniqueName("cpu");
        final CliResult none = CliResult.run("cluster", "up", "--name", name, "--torus", "1x1", "--nic-cpu", "none",
            "--sdram", "64M", "--host-mem", "64M");
        try
        {
            assertEquals(QnixCommand.OK, none.exit, none.err);
            assertFalse(none.out.contains(" on CPU "), none.out);
            assertEquals(NicProcessor.NONE,
                ClusterProperties.read(ClusterDirectory.of(name).propertiesFile()).orElseThrow().nicCpu());
        }
        finally
        {
            TestClusters.down(ClusterDirectory.of(name));
        }

        final String refused = TestClusters.uniqueName("cpu");
        final CliResult offline = CliResult.run("cluster", "up", "--name", refused, "--nic-cpu", "4096");
        assertNotEquals(QnixCommand.OK, offline.exit);
        assertTrue(offline.err.contains("--nic-cpu 4096: CPU 4096 is not online"), offline.err);
        assertFalse(Files.exists(ClusterDirectory.of(refused).path()), "nothing made");
    }
}
