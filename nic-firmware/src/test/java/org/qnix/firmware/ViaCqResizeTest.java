package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.Test;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.CqTableEntry;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplDescriptor;

/**
 * Via_Resize_Cq ({@code VipResizeCQ}), stepped: b's receive queue reports to CQ {@link #CQ} (16
 * entries); messages from a fill it; the process takes some entries as libvipl does; the driver
 * command moves the rest to a new ring, in their sequence positions, and later completions go there.
 */
class ViaCqResizeTest extends ViaSteppedTest
{
    private static final int OLD_ENTRIES = 16;

    @Test
    void theQueuedEntriesMoveToTheNewRingInOrderAndLaterCompletionsFollowThem()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        // 18 messages, the first 14 taken: the 4 queued ones straddle the end of the old ring (sequences 14..17).
        exchange(14);
        take(ringB, OLD_ENTRIES, 14);
        exchange(4);
        final long newRing = b.newRing();
        final int position = b.resizeCq(CQ, 5, 1);
        cluster.settle();

        assertEquals(Doorbell.DONE, cluster.driverDoorbell(1, position));
        final CqTableEntry entry = cqEntry();
        assertEquals(newRing, entry.ringAddress());
        assertEquals(5, entry.entries());
        assertTrue(entry.isOwnedBy(b.index));
        assertEquals(18, host().getIntVolatile((int)newRing + CqRingLayout.TAIL_OFFSET));
        assertEquals(14, host().getInt((int)newRing + CqRingLayout.HEAD_OFFSET));
        for (int sequence = 14; sequence < 18; sequence++)
        {
            assertEntry(newRing, 5, sequence, RECEIVE_VI, CqRingLayout.QUEUE_RECEIVE);
        }
        // Sequence 18 is position 3 of the new ring: still empty, then the next completion's.
        assertEntry(newRing, 5, 18, 0, CqRingLayout.QUEUE_EMPTY);
        exchange(1);
        assertEquals(19, host().getIntVolatile((int)newRing + CqRingLayout.TAIL_OFFSET));
        assertEntry(newRing, 5, 18, RECEIVE_VI, CqRingLayout.QUEUE_RECEIVE);
        assertEquals(18, host().getIntVolatile((int)ringB + CqRingLayout.TAIL_OFFSET), "the old ring is left alone");
    }

    @Test
    void aNewSizeSmallerThanTheQueuedEntriesIsRefusedAndTheOldRingKeepsWorking()
    {
        connect(ViTableEntry.UNRELIABLE);
        exchange(3);
        final int position = b.resizeCq(CQ, 2, 1);
        cluster.settle();

        assertEquals(Doorbell.NO_RESOURCES, cluster.driverDoorbell(1, position));
        assertEquals(ringB, cqEntry().ringAddress());
        assertEquals(OLD_ENTRIES, cqEntry().entries());
        assertEquals(0, host().getInt((int)b.newRing() + CqRingLayout.TAIL_OFFSET), "nothing was copied");
        exchange(1);
        assertEquals(4, host().getIntVolatile((int)ringB + CqRingLayout.TAIL_OFFSET));
    }

    @Test
    void aResizeForAnotherGenerationOrOwnerOrWithAHeadPastTheTailMovesNothing()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        exchange(2);
        final int staleGeneration = b.resizeCq(CQ, 8, 2);
        cluster.settle();
        assertEquals(Doorbell.BAD_COMMAND, cluster.driverDoorbell(1, staleGeneration));
        final int notTheOwners = cluster.post(1, DriverCommand.VIA_RESIZE_CQ,
            new ProcessName((int)b.newRing(), (int)ringB), 8, CQ, 0, b.index + 1, 1);
        cluster.settle();
        assertEquals(Doorbell.BAD_COMMAND, cluster.driverDoorbell(1, notTheOwners));
        // A process that wrote its Head past the Tail (its own word, untrusted).
        host().putInt((int)ringB + CqRingLayout.HEAD_OFFSET, 7);
        final int badHead = b.resizeCq(CQ, 8, 1);
        cluster.settle();
        assertEquals(Doorbell.BAD_COMMAND, cluster.driverDoorbell(1, badHead));
        assertEquals(ringB, cqEntry().ringAddress());
        assertEquals(OLD_ENTRIES, cqEntry().entries());
        assertEquals(0, host().getInt((int)b.newRing() + CqRingLayout.TAIL_OFFSET));
    }

    /** {@code count} one-byte messages from a's SEND_VI into receives b posted, one at a time. */
    private void exchange(final int count)
    {
        for (int m = 0; m < count; m++)
        {
            final ViplDescriptor recv = oneSegmentReceive(DATA, 64);
            b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
            final ViplDescriptor send = oneSegmentSend(0, 1);
            cluster.settle();
            a.postSend(SEND_VI, handleA, DESCRIPTORS);
            cluster.settle();
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status(), "message " + m);
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status(), "message " + m);
        }
    }

    /**
     * A ring of 5 entries (not a power of two) whose Head and Tail are two short of the 32-bit wrap, as
     * after 2^32 - 2 completions: the entries before and after the wrap each get a slot of their own, in
     * order (with 5 slots, entries 2^32 - 1 and 0 would share one).
     */
    @Test
    void aRingOfAnySizeGoesOnAcrossTheWrapOfItsHeadAndTail()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        final long newRing = b.newRing();
        final int position = b.resizeCq(CQ, 5, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(1, position));
        host().putInt((int)newRing + CqRingLayout.TAIL_OFFSET, -2);
        host().putInt((int)newRing + CqRingLayout.HEAD_OFFSET, -2);

        exchange(4);
        assertEquals(2, host().getIntVolatile((int)newRing + CqRingLayout.TAIL_OFFSET));
        assertEquals(0, host().getInt((int)newRing + CqRingLayout.OVERFLOWED_OFFSET));
        take(newRing, 5, 4);
        exchange(3);
        take(newRing, 5, 3);
        assertEquals(5, host().getInt((int)newRing + CqRingLayout.HEAD_OFFSET));
    }

    /** {@code VipCQDone} {@code count} times, as libvipl does it: the Queue word cleared, then Head + 1. */
    private void take(final long ring, final int entries, final int count)
    {
        final AtomicBuffer host = host();
        for (int i = 0; i < count; i++)
        {
            final int head = host.getInt((int)ring + CqRingLayout.HEAD_OFFSET);
            final int entry = (int)ring + CqRingLayout.entryOffset(entries, head & 0xFFFFFFFFL);
            assertEquals(CqRingLayout.QUEUE_RECEIVE, host.getIntVolatile(entry + CqRingLayout.ENTRY_QUEUE_OFFSET),
                "entry " + Integer.toUnsignedString(head));
            assertEquals(RECEIVE_VI, host.getInt(entry + CqRingLayout.ENTRY_VI_OFFSET));
            host.putInt(entry + CqRingLayout.ENTRY_QUEUE_OFFSET, CqRingLayout.QUEUE_EMPTY);
            host.putIntRelease((int)ring + CqRingLayout.HEAD_OFFSET, head + 1);
        }
    }

    private void assertEntry(final long ring, final int entries, final int sequence, final int vi, final int queue)
    {
        final int entry = (int)ring + CqRingLayout.entryOffset(entries, sequence);
        assertEquals(queue, host().getInt(entry + CqRingLayout.ENTRY_QUEUE_OFFSET), "queue of sequence " + sequence);
        if (CqRingLayout.QUEUE_EMPTY != queue)
        {
            assertEquals(vi, host().getInt(entry + CqRingLayout.ENTRY_VI_OFFSET), "VI of sequence " + sequence);
        }
    }

    private CqTableEntry cqEntry()
    {
        return new CqTableEntry().wrap(cluster.images.get(1).sdram(), (int)cluster.images.get(1).sdramLayout().via().cqOffset(CQ));
    }

    private AtomicBuffer host()
    {
        return cluster.images.get(1).hostMemory();
    }
}
