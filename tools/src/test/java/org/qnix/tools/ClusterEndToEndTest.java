package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ProcessName;
import org.qnix.abi.PublishedTables;
import org.qnix.daemon.ClusterState;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixException;
import org.qnix.lib.QnixTimeoutException;
import org.qnix.lib.ReceiveStatus;

/**
 * Multi-JVM tests: a real daemon, real firmware JVMs (or threads), real user JVMs launched by
 * {@code qnix run}, all talking through the cluster's files and driver sockets.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ClusterEndToEndTest
{
    @Test
    void twoGroupsRegisteringConcurrentlyAreKnownToEveryNic() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("a"), 2, 2, "shared");
        final Path hold = Files.createTempFile("qnix-hold", ".flag");
        try
        {
            final ByteArrayOutputStream output = new ByteArrayOutputStream();
            final PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8);
            final AtomicInteger greetings = new AtomicInteger();
            final ProgramLauncher first = new ProgramLauncher(dir, 4, "Hello", List.of("--hold-while", hold.toString()))
                .applicationId(101).onLine(line -> greetings.addAndGet(line.startsWith("Hello from") ? 1 : 0));
            final ProgramLauncher second = new ProgramLauncher(dir, 4, "Hello", List.of("--hold-while", hold.toString()))
                .applicationId(102).nodeMap("packed")
                .onLine(line -> greetings.addAndGet(line.startsWith("Hello from") ? 1 : 0));
            final AtomicInteger exits = new AtomicInteger();
            final Thread a = new Thread(() -> exits.addAndGet(runQuietly(first, out)));
            final Thread b = new Thread(() -> exits.addAndGet(runQuietly(second, out)));
            a.start();
            b.start();

            // Registered at the NIC is not yet done asking for the group: wait for every greeting, which
            // each process prints after its query, before letting any of them go.
            TestClusters.await("8 greetings", () -> greetings.get() == 8);
            assertEquals(8, ClusterStatus.read(dir).registered().size());
            final ClusterStatus status = ClusterStatus.read(dir);
            assertEquals(4, status.registered().stream().map(ClusterStatus.Process::node).distinct().count());
            final Set<ProcessName> everyone = new HashSet<>();
            for (int pi = 0; pi < 4; pi++)
            {
                everyone.add(new ProcessName(101, pi));
                everyone.add(new ProcessName(102, pi));
            }
            for (final ClusterStatus.Node node : status.nodes())
            {
                assertEquals(everyone, node.names().stream().map(PublishedTables.NameEntry::name).collect(Collectors.toSet()),
                    "Name Table of " + node.node());
                for (final int group : new int[]{ 101, 102 })
                {
                    final PublishedTables.GroupEntry entry = node.groups().stream()
                        .filter(g -> g.group() == group).findFirst().orElseThrow();
                    assertEquals(4, entry.expectedSize());
                    assertEquals(4, entry.members().size(), "group " + group + " on " + node.node());
                }
            }

            Files.delete(hold);
            a.join();
            b.join();
            assertEquals(0, exits.get(), output.toString(StandardCharsets.UTF_8));
            final String text = output.toString(StandardCharsets.UTF_8);
            assertEquals(8, text.lines().filter(l -> l.contains("Hello from") && l.contains("has 4 members")).count(), text);
            TestClusters.await("no process registered", () -> ClusterStatus.read(dir).processes().isEmpty());

            // Without a hold each member lists the whole group all the same: none leaves before all printed.
            for (final int application : new int[]{ 103, 104, 105 })
            {
                final String again = TestClusters.run(new ProgramLauncher(dir, 4, "Hello", List.of()).applicationId(application));
                assertEquals(4, again.lines().filter(l -> l.contains("Hello from") && l.contains("has 4 members")).count(),
                    again);
            }
        }
        finally
        {
            Files.deleteIfExists(hold);
            TestClusters.down(dir);
        }
    }

    @Test
    void killedProcessVanishesFromEveryNicAndItsMemoryIsFreed() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("b"), 2, 1, "threads");
        final Path hold = Files.createTempFile("qnix-hold", ".flag");
        try
        {
            final int baseline = ClusterStatus.read(dir).nodes().get(0).freePages();
            final ProgramLauncher launcher =
                new ProgramLauncher(dir, 1, "Hello", List.of("--hold-while", hold.toString())).applicationId(201);
            final int[] exit = { -1 };
            final Thread run = new Thread(() -> exit[0] = runQuietly(launcher, TestClusters.quiet()));
            run.start();
            try (Qnix survivor = Qnix.options().name(new ProcessName(202, 0)).group(202, 1).cluster(dir.name())
                .node("1-0").init())
            {
                TestClusters.await("2 processes registered", () -> ClusterStatus.read(dir).registered().size() == 2);
                assertTrue(ClusterStatus.read(dir).nodes().get(0).freePages() < baseline);

                final ClusterStatus.Process victim = ClusterStatus.read(dir).registered().stream()
                    .filter(p -> p.name().equals(new ProcessName(201, 0))).findFirst().orElseThrow();
                final ProcessHandle handle = ProcessHandle.of(victim.osPid()).orElseThrow();
                assertTrue(handle.destroyForcibly(), "kill -9");

                TestClusters.await("(201,0) gone from every NIC and its pages free", () ->
                {
                    final ClusterStatus status = ClusterStatus.read(dir);
                    return status.processes().stream().noneMatch(p -> p.name().equals(victim.name())) &&
                        status.nodes().stream().allMatch(n ->
                            n.names().stream().noneMatch(e -> e.name().equals(victim.name())) &&
                            n.groups().stream().allMatch(g -> !g.members().contains(victim.name()))) &&
                        status.nodes().get(0).freePages() == baseline;
                });
                // The survivor, on another node, is untouched.
                assertEquals(List.of(survivor.name()),
                    ClusterStatus.read(dir).registered().stream().map(ClusterStatus.Process::name).toList());
                assertEquals(1, survivor.groupMembers(202).size());
            }
            run.join();
            assertNotEquals(0, exit[0], "the launcher reports the killed rank's exit code");
        }
        finally
        {
            Files.deleteIfExists(hold);
            TestClusters.down(dir);
        }
    }

    /** The libraries' exception names what happened; each rank says it in one line, without a stack trace. */
    @Test
    void anExampleWhoseClusterGoesDownSaysSoInOneLine() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("o"), 2, 1, "threads");
        final Path hold = Files.createTempFile("qnix-hold", ".flag");
        final ByteArrayOutputStream output = new ByteArrayOutputStream();
        Thread run = null;
        try
        {
            final ProgramLauncher launcher =
                new ProgramLauncher(dir, 2, "Hello", List.of("--hold-while", hold.toString())).applicationId(251);
            final int[] exit = { -1 };
            final PrintStream printed = new PrintStream(output, true, StandardCharsets.UTF_8);
            run = new Thread(() -> exit[0] = runQuietly(launcher, printed));
            run.start();
            TestClusters.await("2 processes registered", () -> ClusterStatus.read(dir).registered().size() == 2);
            TestClusters.down(dir);
            Files.delete(hold);
            run.join(120_000);
            assertFalse(run.isAlive(), "the ranks end");
            final String text = output.toString(StandardCharsets.UTF_8);
            assertEquals(1, exit[0], text);
            final List<String> failures = text.lines()
                .filter(line -> line.matches("\\[[01]\\] Hello: Qnix\\w*Exception: .*")).toList();
            assertFalse(failures.isEmpty(), text);
            assertFalse(text.contains("\tat ") || text.contains("Exception in thread"), "no stack trace: " + text);
        }
        finally
        {
            Files.deleteIfExists(hold);
            if (null != run)
            {
                run.join(120_000);
            }
            TestClusters.down(dir);
        }
    }

    /**
     * A size above the cluster's largest message is the user's mistake: refused before any rank starts
     * (it used to start both, and each failed in allocateBuffer).
     */
    @Test
    void anExampleAskedForMoreThanTheClusterTakesIsRefusedBeforeAnyRankStarts() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("l"), 2, 1, "threads");
        try
        {
            final int tooLarge =
                ClusterState.inspect(dir).properties().orElseThrow().parameters().maxMessageBytes() + 1;
            final ByteArrayOutputStream output = new ByteArrayOutputStream();
            final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () ->
                new ProgramLauncher(dir, 2, "PingPong", List.of("--sizes", Integer.toString(tooLarge)))
                    .run(new PrintStream(output, true, StandardCharsets.UTF_8)));
            assertEquals("PingPong --sizes: " + tooLarge + " is more than " + (tooLarge - 1) + " bytes, the largest " +
                "message of cluster '" + dir.name() + "'", refused.getMessage());
            assertEquals("", output.toString(StandardCharsets.UTF_8), "no rank started");
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void initWithAMemberThatNeverArrivesTimesOutNamingIt() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("c"), 2, 1, "threads");
        try
        {
            final QnixTimeoutException timeout = assertThrows(QnixTimeoutException.class, () ->
                Qnix.options().name(new ProcessName(301, 0)).group(301, 3).cluster(dir.name()).node("1-0")
                    .timeout(Duration.ofSeconds(2)).init());
            assertEquals(List.of(new ProcessName(301, 1), new ProcessName(301, 2)), timeout.missing());
            assertTrue(timeout.getMessage().contains("missing: (301,1) (301,2)"), timeout.getMessage());
            TestClusters.await("the timed-out process de-registered",
                () -> ClusterStatus.read(dir).processes().isEmpty());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void clusterDownLeavesNoProcessAndNoFile() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("d"), 2, 2, "processes");
        final long daemon = ClusterState.inspect(dir).properties().orElseThrow().daemonPid();
        assertEquals(5, TestClusters.processesOf(dir).size(), "daemon and 4 firmware JVMs");
        final Qnix closed;
        try (Qnix qnix = Qnix.options().name(new ProcessName(401, 0)).group(401, 1).cluster(dir.name()).node("1-1").init())
        {
            assertEquals(1, ClusterStatus.read(dir).registered().size());
            closed = qnix;
        }
        // A poll after qx_end is a program error: an exception, not a crash in unmapped memory.
        final int context = 0;
        final QnixException afterClose = assertThrows(QnixException.class, () -> closed.pollForSend(context));
        assertTrue(afterClose.getMessage().contains("is closed"), afterClose.getMessage());
        assertThrows(QnixException.class, () -> closed.pollForReceive(context, new ReceiveStatus()));
        assertTrue(Files.exists(dir.lockFile()), "the cluster is up: its lock file is kept");
        TestClusters.down(dir);
        assertFalse(Files.exists(dir.path()), dir.path() + " still exists");
        assertFalse(Files.exists(dir.lockFile()), dir.lockFile() + " still exists");
        assertTrue(TestClusters.isGone(daemon), "daemon still alive");
        assertEquals(List.of(), TestClusters.processesOf(dir));
    }

    @Test
    void staleClusterIsReportedAndCleanedUp() throws Exception
    {
        final String name = TestClusters.uniqueName("e");
        ClusterDirectory dir = TestClusters.up(name, 2, 1, "processes");
        try
        {
            final long daemon = ClusterState.inspect(dir).properties().orElseThrow().daemonPid();
            ProcessHandle.of(daemon).orElseThrow().destroyForcibly();
            TestClusters.await("daemon dead", () -> TestClusters.isGone(daemon));

            assertTrue(ClusterState.inspect(dir).isStale());
            final CliResult status = CliResult.run("cluster", "status", "--name", name);
            assertEquals(QnixCommand.FAILED, status.exit);
            assertTrue(status.out.contains("STALE") && status.out.contains(Long.toString(daemon)), status.out);
            // Firmware JVMs notice their daemon is gone and stop by themselves.
            TestClusters.await("firmware JVMs gone", () -> TestClusters.processesOf(dir).isEmpty());

            final CliResult up = CliResult.run("cluster", "up", "--name", name, "--torus", "2x1", "--firmware", "threads",
                "--host-mem", "64M");
            assertEquals(QnixCommand.OK, up.exit, up.out + up.err);
            assertTrue(up.out.contains("was stale"), up.out);
            assertTrue(ClusterState.inspect(dir).isLive());

            final long second = ClusterState.inspect(dir).properties().orElseThrow().daemonPid();
            ProcessHandle.of(second).orElseThrow().destroyForcibly();
            TestClusters.await("second daemon dead", () -> TestClusters.isGone(second));
            final CliResult down = CliResult.run("cluster", "down", "--name", name);
            assertEquals(QnixCommand.OK, down.exit);
            assertTrue(down.out.contains("stale"), down.out);
            assertFalse(Files.exists(dir.path()));
            assertFalse(Files.exists(dir.lockFile()), "a stale cluster's lock file goes with it");
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    private static int runQuietly(final ProgramLauncher launcher, final PrintStream out)
    {
        try
        {
            return launcher.run(out);
        }
        catch (final Exception ex)
        {
            ex.printStackTrace(out);
            return 99;
        }
    }
}
