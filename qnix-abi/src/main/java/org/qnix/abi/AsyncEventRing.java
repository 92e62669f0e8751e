package org.qnix.abi;

import static org.qnix.abi.ViaProcessStructuresLayout.ASYNC_EVENTS;
import static org.qnix.abi.ViaProcessStructuresLayout.ASYNC_HEAD_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.ASYNC_OVERFLOWED_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.ASYNC_WAITERS_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.EVENT_CQ_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.EVENT_DESCRIPTOR_HANDLE_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.EVENT_DESCRIPTOR_OFFSET_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.EVENT_ERROR_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.EVENT_OP_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.EVENT_RESOURCE_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.EVENT_VALID_OFFSET;
import static org.qnix.abi.ViaProcessStructuresLayout.EVENT_VI_OFFSET;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The asynchronous-event ring of a VIA process's VIA Process Structures ({@link
 * ViaProcessStructuresLayout}; {@code VipErrorCallback}) as its two parties use it: the NIC appends
 * an event at the Tail, its fields first and the Valid word last with release, then the Tail; the
 * process's error handler thread takes events at the Head, clearing Valid, and hands the Head back
 * with release. A full ring sets Overflowed instead, which the process takes with an atomic swap.
 * Tail and Head are 32-bit counts; an event's slot is its count's low 31 bits modulo the ring's 64
 * entries, which divide 2^31, so the slots go on in order across the wrap.
 *
 * <pre>{@code
 * // NIC (ViaCompletions.asyncEvent)
 * AsyncEventRing ring = new AsyncEventRing().wrap(host, (int)processEntry.viaStructures());
 * if (ring.append(vi, -1, 0, 0, 0, RESOURCE_VI, ERROR_CONN_LOST) && ring.hasSleepers()) { Futex.wakeAll(ring.tailAddress()); }
 *
 * // Process (AsyncEvents.poll)
 * AsyncEventRing ring = new AsyncEventRing().wrap(structures, 0);
 * int head = ring.head();
 * if (head != ring.tailVolatile() && ring.isWhole(head)) { int error = ring.error(head); ...; ring.take(head); }
 * }</pre>
 */
public final class AsyncEventRing
{
    private AtomicBuffer buffer;
    private int offset;

    /** @param offset the VIA Process Structures' first byte in {@code buffer}. */
    public AsyncEventRing wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * NIC side: appends an event, or, if the ring holds {@link ViaProcessStructuresLayout#ASYNC_EVENTS}
     * already, sets Overflowed and appends nothing.
     *
     * @param vi         the VI the event is about (NIC VI table index), -1 for none.
     * @param cq         the CQ the event is about, -1 for none.
     * @param handle     the descriptor's memory handle, 0 unless the event is about a descriptor.
     * @param descriptor the descriptor's offset in that region, 0 unless it is about one.
     * @param op         the descriptor's completion status op bits, 0 unless it is about one.
     * @param resource   a {@code RESOURCE_*} code.
     * @param error      an {@code ERROR_*} code.
     * @return true if the event was appended.
     */
    public boolean append(final int vi, final int cq, final int handle, final int descriptor, final int op,
        final int resource, final int error)
    {
        // The NIC's own word: it is the Tail's only writer.
        final int tail = buffer.getInt(offset + ASYNC_TAIL_OFFSET);
        // Writer: the process, taking events.
        final int head = buffer.getIntVolatile(offset + ASYNC_HEAD_OFFSET);
        if (tail - head >= ASYNC_EVENTS)
        {
            // Reader: the process's handler thread, which takes it with a swap once the ring is empty.
            buffer.putIntRelease(offset + ASYNC_OVERFLOWED_OFFSET, 1);
            return false;
        }
        final int event = eventOffset(tail);
        buffer.putInt(event + EVENT_VI_OFFSET, vi);
        buffer.putInt(event + EVENT_CQ_OFFSET, cq);
        buffer.putInt(event + EVENT_DESCRIPTOR_HANDLE_OFFSET, handle);
        buffer.putInt(event + EVENT_DESCRIPTOR_OFFSET_OFFSET, descriptor);
        buffer.putInt(event + EVENT_OP_OFFSET, op);
        buffer.putInt(event + EVENT_RESOURCE_OFFSET, resource);
        buffer.putInt(event + EVENT_ERROR_OFFSET, error);
        // Reader: the process's error handler thread; Valid says the entry is whole.
        buffer.putIntRelease(event + EVENT_VALID_OFFSET, 1);
        // Reader: the handler thread asleep on the Tail; volatile, as a doorbell's (no lost wake-up
        // against its volatile write of Waiters before its last look).
        buffer.putIntVolatile(offset + ASYNC_TAIL_OFFSET, tail + 1);
        return true;
    }

    /** NIC side: @return true while the process's handler thread sleeps on the Tail (acquire). */
    public boolean hasSleepers()
    {
        return 0 != buffer.getIntVolatile(offset + ASYNC_WAITERS_OFFSET);
    }

    /** @return the Tail's address: the futex word the handler thread sleeps on. */
    public long tailAddress()
    {
        return buffer.addressOffset() + offset + ASYNC_TAIL_OFFSET;
    }

    /** Process side: @return the Head, the process's own word (plain). */
    public int head()
    {
        return buffer.getInt(offset + ASYNC_HEAD_OFFSET);
    }

    /** Process side: @return the Tail, which the NIC writes after an event's Valid word (acquire). */
    public int tailVolatile()
    {
        return buffer.getIntVolatile(offset + ASYNC_TAIL_OFFSET);
    }

    /** Process side: @return true once event {@code sequence}'s Valid word says it is whole (acquire). */
    public boolean isWhole(final int sequence)
    {
        return 0 != buffer.getIntVolatile(eventOffset(sequence) + EVENT_VALID_OFFSET);
    }

    public int vi(final int sequence)
    {
        return buffer.getInt(eventOffset(sequence) + EVENT_VI_OFFSET);
    }

    public int cq(final int sequence)
    {
        return buffer.getInt(eventOffset(sequence) + EVENT_CQ_OFFSET);
    }

    public int descriptorHandle(final int sequence)
    {
        return buffer.getInt(eventOffset(sequence) + EVENT_DESCRIPTOR_HANDLE_OFFSET);
    }

    public int descriptorOffset(final int sequence)
    {
        return buffer.getInt(eventOffset(sequence) + EVENT_DESCRIPTOR_OFFSET_OFFSET);
    }

    public int op(final int sequence)
    {
        return buffer.getInt(eventOffset(sequence) + EVENT_OP_OFFSET);
    }

    public int resource(final int sequence)
    {
        return buffer.getInt(eventOffset(sequence) + EVENT_RESOURCE_OFFSET);
    }

    public int error(final int sequence)
    {
        return buffer.getInt(eventOffset(sequence) + EVENT_ERROR_OFFSET);
    }

    /** Process side: clears event {@code sequence}'s Valid word and hands the Head on past it with release. */
    public void take(final int sequence)
    {
        buffer.putInt(eventOffset(sequence) + EVENT_VALID_OFFSET, 0);
        // Reader: the NIC, which appends only while Tail - Head leaves room.
        buffer.putIntRelease(offset + ASYNC_HEAD_OFFSET, sequence + 1);
    }

    /**
     * Process side: @return true if an append found the ring full since the last call. An atomic swap,
     * so that an overflow after the look is not cleared unseen.
     */
    public boolean takeOverflowed()
    {
        return 0 != buffer.getAndSetInt(offset + ASYNC_OVERFLOWED_OFFSET, 0);
    }

    private int eventOffset(final int sequence)
    {
        return offset + ViaProcessStructuresLayout.asyncEventOffset(sequence & Integer.MAX_VALUE);
    }
}
