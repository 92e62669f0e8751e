package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.firmware.NicCounters;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixProtectionException;
import org.qnix.lib.QnixTimeoutException;
import org.qnix.lib.ReceiveStatus;

/**
 * Issue 17, item 1, across the real daemon and firmware JVMs: a Send that waits for permission (the
 * receiver's staging is full) while its process frees the buffer and the driver hands the pages to
 * another process on the node. The NIC checks each page at its DMA read: the send ends with
 * {@link QnixProtectionException} and not one byte of the new owner's buffer reaches the receiver.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FreedSendPagesTest
{
    private static final int SECRET = 0x5A;

    @Test
    void aSendWhoseFreedPagesWentToAnotherProcessEndsProtectionAndLeaksNothing() throws Exception
    {
        // Staging room for exactly one largest message: the smallest SDRAM a cluster may have.
        final ClusterParameters roomy = ClusterParameters.builder().torus(2, 1).hostMemoryBytes(64L << 20).build();
        final ClusterParameters params = ClusterParameters.builder().torus(2, 1).hostMemoryBytes(64L << 20)
            .sdramBytes(new NicSdramLayout(roomy).minimumSdramBytes()).build();
        final int largest = params.maxMessageBytes();
        final int victimLength = 16 * params.pageSize();
        final ClusterDirectory dir = ClusterControl.up(
            new ClusterControl.Settings(TestClusters.uniqueName("fp"), params).firmware("processes"), TestClusters.quiet());
        try (Qnix receiver = TestClusters.registerAlone(dir, 501, "1-0");
             Qnix sender = TestClusters.registerAlone(dir, 502, "0-0");
             Qnix newOwner = TestClusters.registerAlone(dir, 503, "0-0"))
        {
            final QnixBuffer big = sender.allocateBuffer(largest, 0, false);
            big.lock();
            big.buffer().setMemory(0, largest, (byte)0x11);
            final int first = sender.sendContext(receiver.name(), 1, true, big, 0, largest);
            sender.send(first);
            sender.waitForSend(first, 60, TimeUnit.SECONDS);

            final QnixBuffer victim = sender.allocateBuffer(victimLength, 0, false);
            victim.lock();
            victim.buffer().setMemory(0, victimLength, (byte)0x22);
            final Set<Long> freedPages = new HashSet<>(TestClusters.pages(victim));
            final int second = sender.sendContext(receiver.name(), 2, true, victim, 0, victimLength);
            sender.send(second);
            // The NIC has read the command (and checked its pages) once the receiver defers its request.
            TestClusters.await("the receiver's NIC to defer the second message", () ->
            {
                final Map<String, Long> counters = TestClusters.counters(dir, NicCoordinates.parse("1-0"));
                return counters.get(NicCounters.REQUESTS_DEFERRED_RECEIVER_QUOTA) +
                    counters.get(NicCounters.REQUESTS_DEFERRED_STAGING_FULL) > 0;
            });
            assertFalse(sender.pollForSend(second), "the second send waits: the receiver's staging is full");

            // The sender frees its buffer; the driver gives its pages to the other process, which
            // fills them with what must never leave it.
            // (The driver holds freed pages back until the NIC ends its duty cycle, then hands out the
            // highest free pages first: those of the freed buffer.)
            victim.close();
            QnixBuffer taken = null;
            final Set<Long> reused = new HashSet<>();
            for (int attempt = 0; attempt < 100 && reused.isEmpty(); attempt++)
            {
                if (null != taken)
                {
                    taken.close();
                    Thread.sleep(20);
                }
                taken = newOwner.allocateBuffer(victimLength, 0, false);
                reused.addAll(TestClusters.pages(taken));
                reused.retainAll(freedPages);
            }
            assertFalse(reused.isEmpty(), "the new owner never got a page of the freed buffer");
            taken.lock();
            taken.buffer().setMemory(0, victimLength, (byte)SECRET);

            // Staging frees up: the waiting send is granted, and its DMA read is refused.
            final QnixBuffer in = receiver.allocateBuffer(largest, 0, false);
            in.lock();
            final ReceiveStatus status = new ReceiveStatus();
            final int rx = receiver.recvContext(sender.name(), 1, true, in, 0, largest);
            receiver.receive(rx);
            receiver.waitForReceive(rx, status, 60, TimeUnit.SECONDS);
            assertEquals((long)largest, status.length());

            assertThrows(QnixProtectionException.class, () -> sender.waitForSend(second, 60, TimeUnit.SECONDS));
            TestClusters.await("the receiving NIC to drop the aborted transfer", () -> Long.valueOf(1L).equals(
                TestClusters.counters(dir, NicCoordinates.parse("1-0")).get(NicCounters.TRANSFERS_ABORTED)));
            in.buffer().setMemory(0, victimLength, (byte)0);
            final int rx2 = receiver.recvContext(Qnix.ANY_PROC, Qnix.ANY_TAG, true, in, 0, victimLength);
            receiver.receive(rx2);
            assertThrows(QnixTimeoutException.class,
                () -> receiver.waitForReceive(rx2, status, 500, TimeUnit.MILLISECONDS), "nothing more arrives");
            for (int i = 0; i < victimLength; i++)
            {
                assertEquals(0, in.buffer().getByte(i), "byte " + i + " of the receive buffer");
            }
            assertEquals(1L, TestClusters.counters(dir, NicCoordinates.parse("0-0")).get(NicCounters.SENDS_ABORTED));
            assertTrue(taken.buffer().getByte(0) == SECRET, "the new owner's data is untouched");
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
