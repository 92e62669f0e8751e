package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
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
            // The library would keep them until the send is done: this process frees them past it.
            freeAsAProcessSkippingTheLibrarysCheck(victim);
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

    /**
     * The same process's next buffer could get a freed buffer's pages, which the NIC's check lets through
     * (they are the process's, and locked): so a buffer closed while an operation posted on it is in
     * flight keeps its pages until it is done, and a context made on a buffer closed since is not posted.
     * Found by a probe: a Receive posted into a closed buffer completed into the next one, and a Send sent
     * the next one's bytes.
     */
    @Test
    void aBufferClosedInFlightKeepsItsPagesTillDoneAndAContextOnAClosedBufferIsNotPosted() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("fb"), 2, 1, "threads");
        try (Qnix receiver = TestClusters.registerAlone(dir, 511, "1-0");
             Qnix sender = TestClusters.registerAlone(dir, 512, "0-0"))
        {
            final int length = 8192;
            final QnixBuffer in = receiver.allocateBuffer(length);
            in.lock();
            final Set<Long> inPages = new HashSet<>(TestClusters.pages(in));
            final int rx = receiver.recvContext(sender.name(), 1, true, in, 0, length);
            receiver.receive(rx);
            in.close();
            final QnixBuffer next = receiver.allocateBuffer(length);
            next.lock();
            next.buffer().setMemory(0, length, (byte)'X');
            final Set<Long> shared = new HashSet<>(TestClusters.pages(next));
            shared.retainAll(inPages);
            assertEquals(Set.of(), shared, "the closed buffer's pages stay its own while its receive is posted");
            final int freeWhileInFlight = ClusterStatus.read(dir).nodes().get(1).freePages();

            // A Send Context made on a buffer that is then closed, its pages free for the next buffer.
            final QnixBuffer old = sender.allocateBuffer(length);
            old.lock();
            final int stale = sender.sendContext(receiver.name(), 1, true, old, 0, length);
            old.close();
            final QnixBuffer out = sender.allocateBuffer(length);
            out.lock();
            out.buffer().setMemory(0, length, (byte)'S');
            final IllegalStateException notPosted = assertThrows(IllegalStateException.class, () -> sender.send(stale));
            assertTrue(notPosted.getMessage().contains("closed since the context was made"), notPosted.getMessage());

            // The receive still takes the next message, into the closed buffer's pages: the next buffer
            // keeps what it holds. Then the next context taken gives those pages back.
            final int tx = sender.sendContext(receiver.name(), 1, true, out, 0, length);
            sender.send(tx);
            sender.waitForSend(tx, 60, TimeUnit.SECONDS);
            final ReceiveStatus status = new ReceiveStatus();
            receiver.waitForReceive(rx, status, 60, TimeUnit.SECONDS);
            assertEquals((long)length, status.length());
            // A context whose completion was taken is not held: waiting on it again ends at once.
            assertThrows(IllegalStateException.class, () -> receiver.waitForReceive(rx, status, 60, TimeUnit.SECONDS));
            assertThrows(IllegalStateException.class, () -> sender.waitForSend(tx, 60, TimeUnit.SECONDS));
            for (int i = 0; i < length; i++)
            {
                assertEquals((byte)'X', next.buffer().getByte(i), "byte " + i + " of the next buffer");
            }
            receiver.recvContext(sender.name(), 2, true, next, 0, length);
            TestClusters.await("the closed buffer's pages given back", () ->
                ClusterStatus.read(dir).nodes().get(1).freePages() == freeWhileInFlight + inPages.size());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    /**
     * Frees a buffer the way a process that does not use this library's check would: the driver takes a
     * BUFFER_FREE at any time, and the NIC's page check is what then protects the pages' next owner.
     */
    private static void freeAsAProcessSkippingTheLibrarysCheck(final QnixBuffer buffer) throws Exception
    {
        final Method unmap = QnixBuffer.class.getDeclaredMethod("unmap");
        unmap.setAccessible(true);
        unmap.invoke(buffer);
        final Method owner = QnixBuffer.class.getDeclaredMethod("owner");
        owner.setAccessible(true);
        // The library's DmaMemory, under Qnix's deferral of a buffer in flight: BUFFER_FREE at once.
        final Field memoryField = Qnix.class.getDeclaredField("memory");
        memoryField.setAccessible(true);
        final Object memory = memoryField.get(owner.invoke(buffer));
        final Method free = memory.getClass().getDeclaredMethod("freeBuffer", QnixBuffer.class);
        free.setAccessible(true);
        free.invoke(memory, buffer);
    }
}
