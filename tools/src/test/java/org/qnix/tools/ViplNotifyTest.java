package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.ViplResult;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplNic;

/**
 * {@code VipSendNotify}, {@code VipRecvNotify} and {@code VipCQNotify} on a real cluster (issue 14): the
 * call returns at once; the handler runs once, on a library thread, with the next completed descriptor
 * (taken off its queue) or CQ entry (taken off the CQ); a second notification on the same queue while
 * one is pending is INVALID_STATE; a completion after the handler ran calls nothing.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplNotifyTest extends ViplClusterTest
{
    /** What a handler saw: the VI or CQ, the descriptor or entry, and the thread it ran on. */
    private record Call(Object source, Object completed, String thread)
    {
    }

    @Test
    void recvAndSendNotifyCallTheirHandlerOnceFromALibraryThreadWithTheDescriptor() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final ViplCqTest.Pair pair =
                ViplCqTest.Pair.connect(serverNic, clientNic, Reliability.RELIABLE_DELIVERY, null, "notify-vi");
            final BlockingQueue<Call> received = new ArrayBlockingQueue<>(4);
            final AtomicInteger calls = new AtomicInteger();
            pair.postReceive(0, 16);
            pair.server.recvNotify((vi, d) ->
            {
                calls.incrementAndGet();
                received.add(new Call(vi, d, Thread.currentThread().getName()));
            });
            // Returned at once; nothing has arrived, so nothing was called.
            assertEquals(0, calls.get());
            assertEquals(ViplResult.INVALID_STATE, assertThrows(ViplException.class,
                () -> pair.server.recvNotify((vi, d) -> { })).result(), "one notification per queue at a time");

            final Descriptor send = pair.send(0, 12, 0x5EED);
            final Call got = received.poll(60, TimeUnit.SECONDS);
            assertSame(pair.server, got.source());
            assertSame(pair.received(0).memory(), ((Descriptor)got.completed()).memory());
            assertEquals(0, ((Descriptor)got.completed()).offset());
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, ((Descriptor)got.completed()).status());
            assertEquals(12, ((Descriptor)got.completed()).length());
            assertEquals(0x5EED, pair.serverMemory.buffer().getInt(ViplCqTest.DATA));
            assertTrue(got.thread().startsWith("vipl-notify-"), got.thread());
            assertNull(pair.server.recvDone(), "the handler's descriptor was taken off the queue");

            // Once: the next receive completes without a call.
            pair.postReceive(1, 16);
            pair.send(1, 4, 7);
            assertEquals(1, pair.server.recvWait(60_000).offset() / ViplDescriptor.ALIGNMENT);
            assertEquals(1, calls.get());

            // A send notification, asked before the send completes or after: the descriptor sent.
            final BlockingQueue<Call> sent = new ArrayBlockingQueue<>(4);
            pair.postReceive(2, 16);
            final Descriptor next = pair.clientMemory.descriptor(70 * ViplDescriptor.ALIGNMENT);
            next.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(4)
                .dataSegment(0, pair.clientMemory.address(ViplCqTest.DATA), pair.clientRegion.handle(), 4);
            pair.client.sendNotify((vi, d) -> sent.add(new Call(vi, d, Thread.currentThread().getName())));
            pair.client.postSend(next, pair.clientRegion);
            final Call s = sent.poll(60, TimeUnit.SECONDS);
            assertSame(pair.client, s.source());
            assertSame(next, s.completed());
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, next.status());
            assertNull(pair.client.sendDone());
            assertTrue(send.isDone());
            pair.server.recvWait(60_000);
            pair.close();
        }
    }

    @Test
    void cqNotifyCallsItsHandlerOnceWithTheEntryTakenOffTheCq() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final CompletionQueue cq = serverNic.createCq(8);
            final ViplCqTest.Pair pair =
                ViplCqTest.Pair.connect(serverNic, clientNic, Reliability.UNRELIABLE, cq, "notify-cq");
            final BlockingQueue<Call> entries = new ArrayBlockingQueue<>(4);
            final AtomicInteger calls = new AtomicInteger();
            cq.notify((queue, c) ->
            {
                calls.incrementAndGet();
                entries.add(new Call(queue, c, Thread.currentThread().getName()));
            });
            assertEquals(0, calls.get());
            assertEquals(ViplResult.INVALID_STATE,
                assertThrows(ViplException.class, () -> cq.notify((queue, c) -> { })).result());
            assertEquals(ViplResult.INVALID_STATE, assertThrows(ViplException.class, cq::close).result(),
                "the ring stays while a notification waits on it");

            pair.postReceive(0, 16);
            pair.send(0, 8, 42);
            final Call got = entries.poll(60, TimeUnit.SECONDS);
            assertSame(cq, got.source());
            final CompletionQueue.Completion entry = (CompletionQueue.Completion)got.completed();
            assertSame(pair.server, entry.vi());
            assertTrue(!entry.sendQueue());
            assertTrue(got.thread().startsWith("vipl-notify-"), got.thread());
            assertNull(cq.done(), "the entry was taken off the CQ");
            final Vi vi = entry.vi();
            assertEquals(42, vi.recvDone() == null ? -1 : pair.serverMemory.buffer().getInt(ViplCqTest.DATA),
                "the descriptor itself is still taken from the VI's queue");

            pair.postReceive(1, 16);
            pair.send(1, 8, 43);
            assertSame(entry, cq.await(60_000), "the VI's own entry value again");
            assertEquals(1, calls.get());
            pair.close();
        }
    }
}
