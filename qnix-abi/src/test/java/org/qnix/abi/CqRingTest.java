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
 * The CQ ring flyweight: the NIC's appends and the process's takes meet where CqRingLayout says,
 * in order, across the 32-bit wrap of Head and Tail, and a full ring overflows instead of
 * overwriting.
 */
class CqRingTest
{
    private static final int AT = 256;
    private static final int ENTRIES = 5;

    private final UnsafeBuffer host = new UnsafeBuffer(ByteBuffer.allocateDirect(AT + 2 * CqRingLayout.length(64)));
    private final CqRing nic = new CqRing().wrap(host, AT, ENTRIES);
    private final CqRing process = new CqRing().wrap(host, AT, ENTRIES);

    @Test
    void anAppendWritesTheEntryWhereTheLayoutSaysAndTheProcessTakesIt()
    {
        assertTrue(nic.append(7, CqRingLayout.QUEUE_RECEIVE));

        final int slot = AT + CqRingLayout.entryOffset(ENTRIES, 0);
        assertEquals(7, host.getInt(slot + CqRingLayout.ENTRY_VI_OFFSET));
        assertEquals(CqRingLayout.QUEUE_RECEIVE, host.getInt(slot + CqRingLayout.ENTRY_QUEUE_OFFSET));
        assertEquals(1, host.getInt(AT + CqRingLayout.TAIL_OFFSET));
        assertEquals(1, process.queued());

        assertEquals(CqRingLayout.QUEUE_RECEIVE, process.queue(process.head()));
        assertEquals(7, process.vi(process.head()));
        process.take(process.head());
        assertEquals(1, host.getInt(AT + CqRingLayout.HEAD_OFFSET));
        assertEquals(CqRingLayout.QUEUE_EMPTY, host.getInt(slot + CqRingLayout.ENTRY_QUEUE_OFFSET));
        assertEquals(CqRingLayout.QUEUE_EMPTY, process.queue(process.head()), "nothing at the next Head yet");
        assertEquals(0, process.queued());
    }

    @Test
    void aFullRingOverflowsAndKeepsWhatItHeld()
    {
        for (int i = 0; i < ENTRIES; i++)
        {
            assertTrue(nic.append(i, CqRingLayout.QUEUE_SEND));
        }
        assertFalse(process.isOverflowed());

        assertFalse(nic.append(99, CqRingLayout.QUEUE_SEND));

        assertTrue(process.isOverflowed());
        assertEquals(1, host.getInt(AT + CqRingLayout.OVERFLOWED_OFFSET));
        assertEquals(ENTRIES, process.queued());
        for (int i = 0; i < ENTRIES; i++)
        {
            assertEquals(i, process.vi(process.head()));
            process.take(process.head());
        }
    }

    @Test
    void theSleepersAreTheWaitersWordAndTheFutexWordIsTheTail()
    {
        assertFalse(nic.hasSleepers());
        host.putInt(AT + CqRingLayout.WAITERS_OFFSET, 2);
        assertTrue(nic.hasSleepers());
        assertEquals(host.addressOffset() + AT + CqRingLayout.TAIL_OFFSET, nic.tailAddress());
    }

    @Test
    void randomAppendsAndTakesAcrossTheWrapComeOutInOrder()
    {
        final long seed = 20261129L;
        System.out.println("CqRingTest seed " + seed);
        final Random random = new Random(seed);
        final int start = -17; // Head and Tail at 2^32 - 17: the run crosses the wrap.
        host.putInt(AT + CqRingLayout.HEAD_OFFSET, start);
        host.putInt(AT + CqRingLayout.TAIL_OFFSET, start);
        final ArrayDeque<Integer> model = new ArrayDeque<>();
        int next = 0;
        for (int step = 0; step < 10_000; step++)
        {
            if (random.nextBoolean())
            {
                final boolean room = model.size() < ENTRIES;
                assertEquals(room, nic.append(next, 1 + (next & 1)), "step " + step);
                if (room)
                {
                    final int sequence = process.head() + model.size();
                    assertEquals(next, host.getInt(AT + CqRingLayout.entryOffset(ENTRIES, sequence & 0xFFFFFFFFL) +
                        CqRingLayout.ENTRY_VI_OFFSET), "step " + step);
                    model.addLast(next++);
                }
                else
                {
                    host.putInt(AT + CqRingLayout.OVERFLOWED_OFFSET, 0);
                }
            }
            else if (model.isEmpty())
            {
                assertEquals(CqRingLayout.QUEUE_EMPTY, process.queue(process.head()), "step " + step);
            }
            else
            {
                final int expected = model.removeFirst();
                assertEquals(1 + (expected & 1), process.queue(process.head()), "step " + step);
                assertEquals(expected, process.vi(process.head()), "step " + step);
                process.take(process.head());
            }
            assertEquals(model.size(), process.queued(), "step " + step);
        }
        assertTrue(next > 1_000, "the run appended " + next);
    }

    @Test
    void movingEntriesKeepsTheirSequenceNumbersInARingOfAnotherSize()
    {
        final int start = -3;
        host.putInt(AT + CqRingLayout.HEAD_OFFSET, start);
        host.putInt(AT + CqRingLayout.TAIL_OFFSET, start);
        for (int i = 0; i < 4; i++)
        {
            nic.append(10 + i, CqRingLayout.QUEUE_SEND);
        }
        process.take(process.head());
        host.putInt(AT + CqRingLayout.OVERFLOWED_OFFSET, 1);
        final int newAt = AT + CqRingLayout.length(64);
        final CqRing bigger = new CqRing().wrap(host, newAt, 16);

        nic.moveEntriesTo(bigger, nic.headVolatile(), nic.tail());

        assertEquals(start + 1, bigger.head());
        assertEquals(start + 4, bigger.tailVolatile());
        assertTrue(bigger.isOverflowed());
        for (int i = 1; i < 4; i++)
        {
            assertEquals(CqRingLayout.QUEUE_SEND, bigger.queue(bigger.head()));
            assertEquals(10 + i, bigger.vi(bigger.head()));
            bigger.take(bigger.head());
        }
        assertEquals(0, bigger.queued());
    }

    @Test
    void aRingResizedAwayMovesItsTailPastTheHeadOnlyWhenEmpty()
    {
        nic.append(1, CqRingLayout.QUEUE_SEND);
        process.releaseWaitsAtHead();
        assertEquals(1, process.tailVolatile(), "an entry is there: the Tail already passes the Head");

        process.take(process.head());
        process.releaseWaitsAtHead();
        assertEquals(2, process.tailVolatile());
        assertEquals(1, process.head());
    }
}
