package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ProcessName;
import org.qnix.firmware.NicCounters;
import org.qnix.host.DoorbellWait;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixNicDeadException;
import org.qnix.lib.QnixPeerGoneException;
import org.qnix.lib.QnixTimeoutException;
import org.qnix.lib.ReceiveStatus;

/**
 * Point-to-point messaging across JVMs (issue 3): real daemon, firmware JVMs and user JVMs running
 * {@link MessagingWorker}, every byte checked in the receiving process.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class MessagingTest
{
    @Test
    void everyLengthAlignmentAndKindArrivesIntactOnTheSameNodeAndAcrossNodes() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("m"), 2, 1, "shared");
        try
        {
            // Packed: ranks 0 and 1 share node 0-0, rank 2 is on 1-0.
            final String output = TestClusters.run(new ProgramLauncher(dir, 3, MessagingWorker.class.getName(), List.of("matrix"))
                .nodeMap("packed"));
            assertEquals(2, output.lines().filter(l -> l.contains("OK matrix rank")).count(), output);
            TestClusters.assertNicsClean(dir, 2);
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void anySourceOutstandingOperationsTruncationAndProtection() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("f"), 2, 1, "processes");
        try
        {
            final String output = TestClusters.run(new ProgramLauncher(dir, 2, MessagingWorker.class.getName(), List.of("features")));
            for (final String expected : List.of("OK rank 0: 32 outstanding", "OK rank 1: 32 outstanding",
                "OK ANY_PROC/ANY_TAG reported source (", "OK truncated", "OK protection: the refused send moved no byte"))
            {
                assertEquals(true, output.contains(expected), expected + " missing in:\n" + output);
            }
            TestClusters.assertNicsClean(dir, 2);
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void stressRandomLengthsToRandomPeersArriveExactlyOnce() throws Exception
    {
        final long seed = Long.getLong("qnix.stress.seed", 20_261_129L);
        final int perRank = 2500;
        System.out.println("stress: seed " + seed + " (rerun with -Dqnix.stress.seed=" + seed + "), 8 processes, " +
            8 * perRank + " messages");
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("s"), 2, 2, "shared");
        try
        {
            final String output = TestClusters.run(new ProgramLauncher(dir, 8, MessagingWorker.class.getName(),
                List.of("stress", Long.toString(seed), Integer.toString(perRank))));
            assertEquals(8, output.lines().filter(l -> l.contains("OK stress rank")).count(), output);
            final Map<String, Long> totals = TestClusters.assertNicsClean(dir, 4);
            assertEquals(8L * perRank, totals.get(NicCounters.RECEIVES_COMPLETED), "receives completed, all NICs");
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void everyWaitTimesOutEndsWithNicDeadWhenTheFirmwareStopsAndPeerGoneWhenThePeerLeaves() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("d"), 2, 1, "processes");
        try (Qnix waiter = Qnix.options().name(new ProcessName(401, 0)).group(401, 1).cluster(dir.name())
                .node("0-0").init();
             QnixBuffer buffer = waiter.allocateBuffer(64))
        {
            buffer.lock();
            final ReceiveStatus status = new ReceiveStatus();

            // A peer that registers, then leaves while the waiter expects a message from it.
            try (Qnix peer = Qnix.options().name(new ProcessName(402, 0)).group(402, 1).cluster(dir.name())
                .node("1-0").init())
            {
                final int fromPeer = waiter.recvContext(peer.name(), 1, true, buffer, 0, 64);
                waiter.receive(fromPeer);
                assertEquals(false, waiter.pollForReceive(fromPeer, status));
                peer.close();
                assertThrows(QnixPeerGoneException.class,
                    () -> waiter.waitForReceive(fromPeer, status, 60, TimeUnit.SECONDS));
            }

            final int rx = waiter.recvContext(Qnix.ANY_PROC, Qnix.ANY_TAG, true, buffer, 0, 64);
            waiter.receive(rx);
            for (final DoorbellWait wait : DoorbellWait.values())
            {
                // Nothing is coming: every way of waiting gives up at its deadline, the receive stays posted.
                assertThrows(QnixTimeoutException.class,
                    () -> waiter.awaitReceive(rx, status, wait, 200, TimeUnit.MILLISECONDS), wait.label());
            }
            TestClusters.killFirmware(dir, "0-0");
            for (final DoorbellWait wait : DoorbellWait.values())
            {
                final QnixNicDeadException dead = assertThrows(QnixNicDeadException.class,
                    () -> waiter.awaitReceive(rx, status, wait, 60, TimeUnit.SECONDS), wait.label());
                assertTrue(dead.getMessage().contains("node 0-0"), dead.getMessage());
            }
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
