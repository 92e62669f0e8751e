package org.qnix.abi;

import static org.qnix.abi.CqRingLayout.ENTRY_QUEUE_OFFSET;
import static org.qnix.abi.CqRingLayout.ENTRY_VI_OFFSET;
import static org.qnix.abi.CqRingLayout.HEAD_OFFSET;
import static org.qnix.abi.CqRingLayout.OVERFLOWED_OFFSET;
import static org.qnix.abi.CqRingLayout.QUEUE_EMPTY;
import static org.qnix.abi.CqRingLayout.TAIL_OFFSET;
import static org.qnix.abi.CqRingLayout.WAITERS_OFFSET;

import org.agrona.concurrent.AtomicBuffer;

/**
 * A completion queue's ring ({@link CqRingLayout}) as its two parties use it: the NIC appends at the
 * Tail (its own word) and the process takes at the Head (its own word); each reads the other's word
 * with acquire. An entry's VI word goes first and its Queue word last with release, so a Queue word
 * that is not {@link CqRingLayout#QUEUE_EMPTY} says the entry is whole; the process clears it when it
 * takes the entry. Wrapped with the ring's Entries, which the NIC reads from the CQ table entry and
 * the process knows from its create or resize.
 *
 * <pre>{@code
 * // NIC (ViaCompletions): an entry per completed descriptor of a queue attached to the CQ.
 * CqRing ring = new CqRing().wrap(host, (int)cqEntry.ringAddress(), cqEntry.entries());
 * if (ring.append(viIndex, CqRingLayout.QUEUE_SEND) && ring.hasSleepers()) { Futex.wakeAll(ring.tailAddress()); }
 *
 * // Process (VipCQDone): the oldest entry, if there is one.
 * CqRing ring = new CqRing().wrap(mappedRing, 0, entries);
 * int head = ring.head();
 * int queue = ring.queue(head);
 * if (CqRingLayout.QUEUE_EMPTY != queue) { int vi = ring.vi(head); ring.take(head); ... }
 * }</pre>
 */
public final class CqRing
{
    private AtomicBuffer buffer;
    private int offset;
    private int entries;
    /** slots(Entries) - 1: the slot of entry n is n & mask (CqRingLayout). */
    private int mask;

    /**
     * @param offset  the ring's first byte in {@code buffer}.
     * @param entries the ring's capacity (at least 1).
     */
    public CqRing wrap(final AtomicBuffer buffer, final int offset, final int entries)
    {
        this.buffer = buffer;
        this.offset = offset;
        this.entries = entries;
        this.mask = CqRingLayout.slots(entries) - 1;
        return this;
    }

    /**
     * NIC side: appends an entry for a descriptor {@code queue} ({@link CqRingLayout#QUEUE_SEND} or
     * {@link CqRingLayout#QUEUE_RECEIVE}) of VI {@code vi} completed, or, if the ring holds Entries
     * already, sets Overflowed (VIA 1.0: the CQ is broken from then on) and appends nothing.
     *
     * @return true if the entry was appended.
     */
    public boolean append(final int vi, final int queue)
    {
        // The NIC's own word: it is the Tail's only writer.
        final int tail = buffer.getInt(offset + TAIL_OFFSET);
        // Writer: the process, taking entries (VipCQDone).
        final int head = buffer.getIntVolatile(offset + HEAD_OFFSET);
        if (tail - head >= entries)
        {
            // Reader: the process's isOverflowed(), and its error handler after the async event.
            buffer.putIntRelease(offset + OVERFLOWED_OFFSET, 1);
            return false;
        }
        final int entry = entryOffset(tail);
        buffer.putInt(entry + ENTRY_VI_OFFSET, vi);
        // Reader: the process taking the entry; the Queue word says it is whole.
        buffer.putIntRelease(entry + ENTRY_QUEUE_OFFSET, queue);
        // Reader: the process asleep on the Tail (VipCQWait). A volatile write, as a doorbell's: with
        // the process's volatile write of Waiters before its last look, one of the two sees the other.
        buffer.putIntVolatile(offset + TAIL_OFFSET, tail + 1);
        return true;
    }

    /** NIC side: @return true while a process sleeps on the Tail (its Waiters word, acquire). */
    public boolean hasSleepers()
    {
        return 0 != buffer.getIntVolatile(offset + WAITERS_OFFSET);
    }

    /** @return the ring's offset in the buffer it wraps: its host address. */
    public int offset()
    {
        return offset;
    }

    /** @return the ring's Entries, its capacity. */
    public int entries()
    {
        return entries;
    }

    /** @return the Tail's address: the futex word the process sleeps on. */
    public long tailAddress()
    {
        return buffer.addressOffset() + offset + TAIL_OFFSET;
    }

    /** NIC side: @return the Tail, the NIC's own word (plain). */
    public int tail()
    {
        return buffer.getInt(offset + TAIL_OFFSET);
    }

    /** NIC side: @return the Head, which the process writes with release (acquire). */
    public int headVolatile()
    {
        return buffer.getIntVolatile(offset + HEAD_OFFSET);
    }

    /**
     * NIC side, Via_Resize_Cq: moves the entries {@code head} .. {@code tail} (the caller read and
     * checked them) and the Overflowed word to {@code to}, at the same sequence numbers, then gives it
     * the Tail with release. The process maps the new ring only after the NIC's answer.
     */
    public void moveEntriesTo(final CqRing to, final int head, final int tail)
    {
        for (int sequence = head; sequence != tail; sequence++)
        {
            final int from = entryOffset(sequence);
            final int into = to.entryOffset(sequence);
            to.buffer.putInt(into + ENTRY_VI_OFFSET, buffer.getInt(from + ENTRY_VI_OFFSET));
            to.buffer.putInt(into + ENTRY_QUEUE_OFFSET, buffer.getInt(from + ENTRY_QUEUE_OFFSET));
        }
        to.buffer.putInt(to.offset + HEAD_OFFSET, head);
        to.buffer.putInt(to.offset + OVERFLOWED_OFFSET, buffer.getIntVolatile(offset + OVERFLOWED_OFFSET));
        // Reader: the process, once the driver answered its resize (after the NIC's doorbell).
        to.buffer.putIntRelease(to.offset + TAIL_OFFSET, tail);
    }

    /** Process side: @return the Head, the process's own word (plain). */
    public int head()
    {
        return buffer.getInt(offset + HEAD_OFFSET);
    }

    /** Process side: @return the Tail, which the NIC writes (acquire). */
    public int tailVolatile()
    {
        return buffer.getIntVolatile(offset + TAIL_OFFSET);
    }

    /**
     * Process side: @return the Queue word of entry {@code sequence} (acquire; the NIC writes it last),
     * {@link CqRingLayout#QUEUE_EMPTY} while the NIC has not appended it.
     */
    public int queue(final int sequence)
    {
        return buffer.getIntVolatile(entryOffset(sequence) + ENTRY_QUEUE_OFFSET);
    }

    /** Process side: @return the VI of entry {@code sequence}; only after {@link #queue(int)} saw it. */
    public int vi(final int sequence)
    {
        return buffer.getInt(entryOffset(sequence) + ENTRY_VI_OFFSET);
    }

    /** Process side: takes entry {@code sequence}, the one at the Head, then hands the Head on past it with release. */
    public void take(final int sequence)
    {
        buffer.putInt(entryOffset(sequence) + ENTRY_QUEUE_OFFSET, QUEUE_EMPTY);
        // Reader: the NIC, which appends only while Tail - Head leaves room.
        buffer.putIntRelease(offset + HEAD_OFFSET, sequence + 1);
    }

    /** Process side: @return the entries appended and not taken. */
    public int queued()
    {
        return tailVolatile() - head();
    }

    /** @return true once an append found the ring full (acquire; the NIC writes it with release). */
    public boolean isOverflowed()
    {
        return 0 != buffer.getIntVolatile(offset + OVERFLOWED_OFFSET);
    }

    /**
     * Process side, on a ring the NIC no longer appends to (resized away): moves the Tail past the
     * Head, so that a thread that read the Head and is about to sleep on this Tail finds it moved.
     * The caller then wakes the sleepers.
     */
    public void releaseWaitsAtHead()
    {
        final int head = head();
        if (tailVolatile() - head <= 0)
        {
            // Reader: a thread of this process about to sleep on the Tail, its last look volatile.
            buffer.putIntVolatile(offset + TAIL_OFFSET, head + 1);
        }
    }

    private int entryOffset(final int sequence)
    {
        // As CqRingLayout.entryOffset, with the mask worked out once at wrap.
        return offset + CqRingLayout.ENTRIES_OFFSET + (sequence & mask) * CqRingLayout.ENTRY_LENGTH;
    }
}
