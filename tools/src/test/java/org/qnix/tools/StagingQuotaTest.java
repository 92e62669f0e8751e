package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.firmware.NicCounters;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixTimeoutException;
import org.qnix.lib.ReceiveStatus;

/**
 * Issue 17, item 3, across the real daemon and firmware JVMs: a process floods another, which never
 * posts a receive, with Send_Shorts. Before the per-process staging quota the node's transfer table
 * filled (4096 entries) and every later message to the node waited for ever. Now the flooded process
 * holds at most its quota, the flooder's further sends wait, two other processes keep exchanging
 * messages across the node, and once the flooded process receives, every message arrives exactly once.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StagingQuotaTest
{
    private static final int FLOOD_LIMIT = 5000;

    @Test
    void aProcessThatNeverReceivesCannotStopItsNodeFromReceivingAndNothingIsLost() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("q"), 2, 1, "processes");
        try (Qnix victim = TestClusters.registerAlone(dir, 601, "1-0");
             Qnix flooder = TestClusters.registerAlone(dir, 602, "0-0");
             Qnix bystander = TestClusters.registerAlone(dir, 603, "0-0");
             Qnix neighbour = TestClusters.registerAlone(dir, 604, "1-0"))
        {
            final int contexts = victim.parameters().contextsPerProcess();
            final UnsafeBuffer one = new UnsafeBuffer(new byte[4]);
            final ArrayDeque<Integer> waiting = new ArrayDeque<>();
            int sent = 0;
            while (sent < FLOOD_LIMIT && waiting.size() < contexts)
            {
                one.putInt(0, sent);
                final int tx = flooder.sendContextShort(victim.name(), sent, true, one, 0, 4);
                flooder.sendShort(tx);
                sent++;
                try
                {
                    flooder.pollForSend(tx, 100, TimeUnit.MILLISECONDS);
                }
                catch (final QnixTimeoutException ex)
                {
                    if (staged(dir) < ClusterParameters.STAGED_MESSAGES_PER_PROCESS)
                    {
                        // Not the quota: a slow machine. It completes once staged.
                        flooder.waitForSend(tx, 60, TimeUnit.SECONDS);
                    }
                    else
                    {
                        waiting.add(tx);
                    }
                }
            }
            System.out.println("flood: " + sent + " Send_Shorts, " + waiting.size() + " waiting");
            assertEquals(contexts, waiting.size(), "the flooder's sends wait once the quota is full");
            assertEquals((long)ClusterParameters.STAGED_MESSAGES_PER_PROCESS, staged(dir), "staged for the flooded process");

            // Across the node, another pair still exchanges messages: staged, then direct.
            final QnixBuffer out = bystander.allocateBuffer(8192);
            out.lock();
            final QnixBuffer in = neighbour.allocateBuffer(8192);
            in.lock();
            final ReceiveStatus status = new ReceiveStatus();
            for (int round = 0; round < 2; round++)
            {
                out.buffer().setMemory(0, 8192, (byte)(round + 1));
                final boolean staging = 0 == round;
                final int rx = staging ? -1 : neighbour.recvContext(bystander.name(), round, true, in, 0, 8192);
                if (!staging)
                {
                    neighbour.receive(rx);
                }
                final int tx = bystander.sendContext(neighbour.name(), round, true, out, 0, 8192);
                bystander.send(tx);
                bystander.waitForSend(tx, 60, TimeUnit.SECONDS);
                final int rx2 = staging ? neighbour.recvContext(bystander.name(), round, true, in, 0, 8192) : rx;
                if (staging)
                {
                    neighbour.receive(rx2);
                }
                neighbour.waitForReceive(rx2, status, 60, TimeUnit.SECONDS);
                for (int i = 0; i < 8192; i++)
                {
                    assertEquals(round + 1, in.buffer().getByte(i), "round " + round + " byte " + i);
                }
            }

            // The flooded process receives at last: every message once, its waiting sends complete.
            final QnixBuffer box = victim.allocateBuffer(4);
            box.lock();
            final BitSet seen = new BitSet(sent);
            for (int m = 0; m < sent; m++)
            {
                final int rx = victim.recvContext(flooder.name(), Qnix.ANY_TAG, true, box, 0, 4);
                victim.receive(rx);
                victim.waitForReceive(rx, status, 60, TimeUnit.SECONDS);
                final int tag = status.tag();
                assertEquals(tag, box.buffer().getInt(0), "payload of tag " + tag);
                assertTrue(tag >= 0 && tag < sent && !seen.get(tag), "tag " + tag + " once");
                seen.set(tag);
            }
            assertEquals(sent, seen.cardinality());
            for (final int tx : waiting)
            {
                flooder.waitForSend(tx, 60, TimeUnit.SECONDS);
            }
            TestClusters.assertNicsClean(dir, 2);
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    /** @return the messages node 1-0 (the flooded process's) has staged. */
    private static long staged(final ClusterDirectory dir)
    {
        return TestClusters.counters(dir, NicCoordinates.parse("1-0")).get(NicCounters.MESSAGES_STAGED);
    }
}
