package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ProcessName;
import org.qnix.firmware.NicCounters;
import org.qnix.lib.GroupMember;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixPeerGoneException;
import org.qnix.lib.QnixTimeoutException;

/**
 * Groups and collectives across JVMs (issue 4): a real daemon, firmware JVMs and user JVMs running
 * {@link CollectivesWorker}.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CollectivesClusterTest
{
    @Test
    void aThousandBarriersOnEightProcessesNeverLetAnyoneLeaveEarly() throws Exception
    {
        final long seed = Long.getLong("qnix.barrier.seed", 20_261_129L);
        final int processes = 8;
        final int barriers = 1000;
        System.out.println("barriers: seed " + seed + " (rerun with -Dqnix.barrier.seed=" + seed + "), " +
            processes + " processes on 4 nodes, " + barriers + " barriers");
        final Path counters = Files.createTempFile("qnix-barrier-counters", ".bin");
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("b"), 2, 2, "shared");
        try
        {
            try (RandomAccessFile file = new RandomAccessFile(counters.toFile(), "rw"))
            {
                file.setLength((long)processes * CollectivesWorker.COUNTER_STRIDE);
            }
            final String output = TestClusters.run(new ProgramLauncher(dir, processes, CollectivesWorker.class.getName(),
                List.of("barriers", counters.toString(), Integer.toString(barriers), Long.toString(seed))));
            assertEquals(processes, output.lines().filter(l -> l.contains("OK barriers rank")).count(), output);
            final Map<String, Long> totals = TestClusters.assertNicsClean(dir, 4);
            // Every process completed every barrier, and nothing else ran on the cluster.
            assertEquals((long)processes * barriers, totals.get(NicCounters.BARRIERS_COMPLETED));
        }
        finally
        {
            TestClusters.down(dir);
            Files.deleteIfExists(counters);
        }
    }

    @Test
    void broadcastsAndMulticastsOfEveryLengthReachEveryReceiverAndReadTheBufferOnce() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("c"), 2, 2, "processes");
        try
        {
            // Packed: ranks 0-1 on 0-0, 2-3 on 1-0, 4-5 on 0-1.
            final String output = TestClusters.run(new ProgramLauncher(dir, 6, CollectivesWorker.class.getName(), List.of("casts"))
                .nodeMap("packed"));
            assertEquals(6, output.lines().filter(l -> l.contains("OK casts rank")).count(), output);
            // 5 lengths x 2 kinds + 3 short lengths x 2 kinds, each checked by its root.
            assertEquals(16, output.lines().filter(l -> l.contains("DMA copies")).count(), output);
            assertTrue(output.contains("OK broadcast of 2097152 bytes from rank 3 to 5 processes: 2097152 bytes read " +
                "from host memory in 1 DMA copies") ||
                output.contains("OK broadcast of 2097152 bytes from rank 0 to 5 processes: 2097152 bytes read " +
                "from host memory in 1 DMA copies"), output);
            TestClusters.assertNicsClean(dir, 4);
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void groupsJoinedAtRunTimeBySubsetsWorkSideBySide() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("g"), 2, 2, "shared");
        try
        {
            final String output = TestClusters.run(new ProgramLauncher(dir, 6, CollectivesWorker.class.getName(), List.of("groups")));
            assertEquals(6, output.lines().filter(l -> l.contains("barriers and a broadcast in each")).count(), output);
            assertTrue(output.contains("OK rank 2 joined A B"), output);
            assertTrue(output.contains("OK rank 3 joined A B"), output);
            TestClusters.assertNicsClean(dir, 4);
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void aMemberKilledDuringABarrierEndsItWithPeerGoneAndEveryNicForgetsIt() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("k"), 2, 2, "processes");
        final List<Qnix> members = new ArrayList<>();
        final AtomicLong victimPid = new AtomicLong();
        Thread victimRun = null;
        try
        {
            final int group = 501;
            for (final String node : List.of("0-0", "1-0", "0-1"))
            {
                // Three one-process applications, so that each init returns at once.
                final int app = 510 + members.size();
                members.add(Qnix.options().name(new ProcessName(app, 0)).group(app, 1).cluster(dir.name()).node(node)
                    .init());
            }
            // The fourth member is another JVM, on node 0-0 with member 0.
            final ProgramLauncher victim = new ProgramLauncher(dir, 1, CollectivesWorker.class.getName(),
                List.of("victim", Integer.toString(group), "4")).applicationId(502)
                .onLine(line ->
                {
                    final int at = line.indexOf("VICTIM READY pid=");
                    if (at >= 0)
                    {
                        victimPid.set(Long.parseLong(line.substring(at + "VICTIM READY pid=".length()).trim()));
                    }
                });
            victimRun = new Thread(() ->
            {
                try
                {
                    victim.run(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
                }
                catch (final InterruptedException ignore)
                {
                }
            }, "victim");
            victimRun.start();

            final int[] joins = new int[members.size()];
            for (int i = 0; i < members.size(); i++)
            {
                joins[i] = members.get(i).groupContext();
                members.get(i).joinGroup(joins[i], group, 4);
            }
            for (int i = 0; i < members.size(); i++)
            {
                members.get(i).waitForSend(joins[i], 120, TimeUnit.SECONDS);
            }
            TestClusters.await("the victim to report its join", () -> 0 != victimPid.get());
            assertEquals(4, members.get(1).groupMembers(group).size());

            // Members 1 and 2 enter the barrier and poll; member 0 waits with a timeout, which passes:
            // its barrier stays posted, and the library frees the context once the NIC completes it.
            final int[] barriers = new int[members.size()];
            for (int i = 1; i < members.size(); i++)
            {
                barriers[i] = members.get(i).groupContext();
                members.get(i).barrier(barriers[i], group, 4);
            }
            assertThrows(QnixTimeoutException.class,
                () -> members.get(0).awaitBarrier(group, 4, 300, TimeUnit.MILLISECONDS));
            for (int i = 1; i < members.size(); i++)
            {
                assertFalse(members.get(i).pollForSend(barriers[i]), "the victim has not entered the barrier");
            }
            ProcessHandle.of(victimPid.get()).orElseThrow().destroyForcibly();

            for (int i = 1; i < members.size(); i++)
            {
                final int m = i;
                assertThrows(QnixPeerGoneException.class,
                    () -> members.get(m).waitForSend(barriers[m], 120, TimeUnit.SECONDS));
            }
            for (final Qnix member : members)
            {
                final List<GroupMember> known = member.groupMembers(group);
                assertEquals(3, known.size(), "on " + member.node() + ": " + known);
                assertTrue(known.stream().noneMatch(g -> g.name().ai() == 502), known.toString());
            }
            // The group stays broken: a new barrier ends at once rather than wait for the dead.
            for (final Qnix member : members)
            {
                assertThrows(QnixPeerGoneException.class, () -> member.awaitBarrier(group, 4, 120, TimeUnit.SECONDS));
            }
        }
        finally
        {
            for (final Qnix member : members)
            {
                member.close();
            }
            if (0 != victimPid.get())
            {
                ProcessHandle.of(victimPid.get()).ifPresent(ProcessHandle::destroyForcibly);
            }
            if (null != victimRun)
            {
                victimRun.join(60_000);
            }
            TestClusters.down(dir);
        }
    }
}
