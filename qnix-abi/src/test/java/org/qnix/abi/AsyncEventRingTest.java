package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The async-event ring flyweight: the NIC's events land where ViaProcessStructuresLayout says, Valid
 * last; the process takes them in order across the 31-bit wrap; a full ring sets Overflowed, taken once.
 */
class AsyncEventRingTest
{
    private static final int AT = 4096;

    private final UnsafeBuffer host = new UnsafeBuffer(ByteBuffer.allocateDirect(AT + ViaProcessStructuresLayout.LENGTH));
    private final AsyncEventRing nic = new AsyncEventRing().wrap(host, AT);
    private final AsyncEventRing process = new AsyncEventRing().wrap(host, AT);

    @Test
    void anEventsFieldsAreWhereTheLayoutSaysAndTakingItClearsValid()
    {
        assertTrue(nic.append(3, 5, 0x11, 0x220, 0x4, ViaProcessStructuresLayout.RESOURCE_DESCRIPTOR,
            ViaProcessStructuresLayout.ERROR_POST_DESC));

        final int event = AT + ViaProcessStructuresLayout.asyncEventOffset(0);
        assertEquals(3, host.getInt(event + ViaProcessStructuresLayout.EVENT_VI_OFFSET));
        assertEquals(5, host.getInt(event + ViaProcessStructuresLayout.EVENT_CQ_OFFSET));
        assertEquals(0x11, host.getInt(event + ViaProcessStructuresLayout.EVENT_DESCRIPTOR_HANDLE_OFFSET));
        assertEquals(0x220, host.getInt(event + ViaProcessStructuresLayout.EVENT_DESCRIPTOR_OFFSET_OFFSET));
        assertEquals(0x4, host.getInt(event + ViaProcessStructuresLayout.EVENT_OP_OFFSET));
        assertEquals(ViaProcessStructuresLayout.RESOURCE_DESCRIPTOR,
            host.getInt(event + ViaProcessStructuresLayout.EVENT_RESOURCE_OFFSET));
        assertEquals(ViaProcessStructuresLayout.ERROR_POST_DESC,
            host.getInt(event + ViaProcessStructuresLayout.EVENT_ERROR_OFFSET));
        assertEquals(1, host.getInt(event + ViaProcessStructuresLayout.EVENT_VALID_OFFSET));
        assertEquals(1, host.getInt(AT + ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET));

        assertEquals(1, process.tailVolatile());
        assertTrue(process.isWhole(0));
        assertEquals(3, process.vi(0));
        assertEquals(5, process.cq(0));
        assertEquals(0x11, process.descriptorHandle(0));
        assertEquals(0x220, process.descriptorOffset(0));
        assertEquals(0x4, process.op(0));
        assertEquals(ViaProcessStructuresLayout.RESOURCE_DESCRIPTOR, process.resource(0));
        assertEquals(ViaProcessStructuresLayout.ERROR_POST_DESC, process.error(0));
        process.take(0);
        assertFalse(process.isWhole(0));
        assertEquals(1, host.getInt(AT + ViaProcessStructuresLayout.ASYNC_HEAD_OFFSET));
        assertEquals(1, process.head());
    }

    @Test
    void aFullRingSetsOverflowedWhichIsTakenOnce()
    {
        for (int i = 0; i < ViaProcessStructuresLayout.ASYNC_EVENTS; i++)
        {
            assertTrue(nic.append(i, -1, 0, 0, 0, ViaProcessStructuresLayout.RESOURCE_VI,
                ViaProcessStructuresLayout.ERROR_CONN_LOST));
        }
        assertFalse(nic.append(99, -1, 0, 0, 0, ViaProcessStructuresLayout.RESOURCE_VI,
            ViaProcessStructuresLayout.ERROR_CONN_LOST));

        assertEquals(ViaProcessStructuresLayout.ASYNC_EVENTS, process.tailVolatile());
        assertEquals(0, process.vi(0), "the oldest event is kept");
        assertTrue(process.takeOverflowed());
        assertFalse(process.takeOverflowed());
    }

    @Test
    void closeRequestedIsItsOwnWordBesideTheRing()
    {
        final ViaCloseRequest request = new ViaCloseRequest().wrap(host, AT);
        assertFalse(request.isRequested());
        request.request();
        assertEquals(1, host.getInt(AT + ViaProcessStructuresLayout.CLOSE_REQUESTED_OFFSET));
        assertTrue(request.isRequested());
        assertEquals(0, process.head(), "the event ring's Head, on the same line, is untouched");
    }

    @Test
    void theSleepersAreTheWaitersWordAndTheFutexWordIsTheTail()
    {
        assertFalse(nic.hasSleepers());
        host.putInt(AT + ViaProcessStructuresLayout.ASYNC_WAITERS_OFFSET, 1);
        assertTrue(nic.hasSleepers());
        assertEquals(host.addressOffset() + AT + ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET, nic.tailAddress());
    }

    @Test
    void randomEventsAndTakesAcrossTheWrapComeOutInOrder()
    {
        final long seed = 20261129L;
        System.out.println("AsyncEventRingTest seed " + seed);
        final Random random = new Random(seed);
        final int start = Integer.MAX_VALUE - 40; // the count passes 2^31 - 1 and goes negative.
        host.putInt(AT + ViaProcessStructuresLayout.ASYNC_HEAD_OFFSET, start);
        host.putInt(AT + ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET, start);
        final ArrayDeque<Integer> model = new ArrayDeque<>();
        int head = process.head();
        int next = 0;
        int overflows = 0;
        for (int step = 0; step < 20_000; step++)
        {
            if (random.nextInt(100) < 55)
            {
                final boolean room = model.size() < ViaProcessStructuresLayout.ASYNC_EVENTS;
                assertEquals(room, nic.append(next, next + 1, next + 2, next + 3, next + 4, next + 5, next + 6),
                    "step " + step);
                if (room)
                {
                    final int sequence = head + model.size();
                    assertEquals(next, host.getInt(AT + ViaProcessStructuresLayout.asyncEventOffset(
                        sequence & Integer.MAX_VALUE) + ViaProcessStructuresLayout.EVENT_VI_OFFSET), "step " + step);
                    model.addLast(next++);
                }
                else
                {
                    assertTrue(process.takeOverflowed(), "step " + step);
                    overflows++;
                }
            }
            else if (model.isEmpty())
            {
                assertEquals(head, process.tailVolatile(), "step " + step);
            }
            else
            {
                final int expected = model.removeFirst();
                assertTrue(process.isWhole(head), "step " + step);
                assertEquals(expected, process.vi(head));
                assertEquals(expected + 1, process.cq(head));
                assertEquals(expected + 2, process.descriptorHandle(head));
                assertEquals(expected + 3, process.descriptorOffset(head));
                assertEquals(expected + 4, process.op(head));
                assertEquals(expected + 5, process.resource(head));
                assertEquals(expected + 6, process.error(head));
                process.take(head);
                head++;
                assertEquals(head, process.head());
            }
        }
        assertTrue(next > 1_000, "the run appended " + next);
        assertTrue(overflows > 0, "the run filled the ring");
        assertTrue(head < 0, "the Head crossed 2^31: " + head);
    }
}
