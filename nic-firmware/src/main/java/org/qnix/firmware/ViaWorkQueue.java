package org.qnix.firmware;

import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * One work queue of a VI as the NIC holds it (issue 14): the descriptors posted and not yet completed,
 * in posting order, each as the memory handle and offset its post named, with the sequence number a
 * send went out under, its status op bits (what a flush reports) and, once its end is known, the
 * status it completes with. A fixed ring made once per VI table entry, so posting allocates nothing. A
 * send queue has a second cursor, {@link #transmit}: descriptors before it are on the wire and wait
 * for their completion (Reliable Reception for the peer's acknowledgement, an RDMA read for its
 * response). VIA completes a queue in posting order (issue 14), so a descriptor whose end is known is
 * only {@link #finish finished} and completes when every older one has; so is one that failed its
 * checks at its post on a VI that stays in its state, added already finished.
 *
 * <pre>{@code
 * if (!queue.isFull()) { queue.add(handle, offset, ViplDescriptor.STATUS_OP_SEND); }
 * queue.finish(position, ViplDescriptor.STATUS_OP_SEND, length);
 * while (queue.head() < queue.transmit && queue.isFinished(queue.head())) { ...complete...; queue.removeHead(); }
 * }</pre>
 */
final class ViaWorkQueue
{
    static final int CAPACITY = ViaTablesLayout.MAX_DESCRIPTORS_PER_QUEUE;
    private static final int MASK = CAPACITY - 1;

    private final int[] handles = new int[CAPACITY];
    private final int[] offsets = new int[CAPACITY];
    private final int[] sequences = new int[CAPACITY];
    private final int[] lengths = new int[CAPACITY];
    private final int[] ops = new int[CAPACITY];
    /** The status a finished descriptor completes with (DONE set), 0 while its end is unknown. */
    private final int[] statuses = new int[CAPACITY];
    private long head;
    private long tail;
    /** Send queues: the next descriptor to put on the wire. */
    long transmit;

    boolean isEmpty()
    {
        return head == tail;
    }

    boolean isFull()
    {
        return tail - head >= CAPACITY;
    }

    /** @return true if a descriptor waits to go on the wire. */
    boolean hasUntransmitted()
    {
        return transmit < tail;
    }

    /** @param op the status op bits of the descriptor as posted (what a flush completes it with). */
    void add(final int handle, final int offset, final int op)
    {
        final int i = (int)(tail & MASK);
        handles[i] = handle;
        offsets[i] = offset;
        sequences[i] = 0;
        lengths[i] = 0;
        ops[i] = op;
        statuses[i] = 0;
        tail++;
    }

    long head()
    {
        return head;
    }

    long tail()
    {
        return tail;
    }

    int handle(final long position)
    {
        return handles[(int)(position & MASK)];
    }

    int offset(final long position)
    {
        return offsets[(int)(position & MASK)];
    }

    int sequence(final long position)
    {
        return sequences[(int)(position & MASK)];
    }

    /** @return the length a send went out with: what its completion reports. */
    int length(final long position)
    {
        return lengths[(int)(position & MASK)];
    }

    /** @return the status op bits the descriptor's completion carries (Send, RDMA Write, RDMA Read, Receive). */
    int op(final long position)
    {
        return ops[(int)(position & MASK)];
    }

    void transmitted(final long position, final int sequence, final int length, final int op)
    {
        sequences[(int)(position & MASK)] = sequence;
        lengths[(int)(position & MASK)] = length;
        ops[(int)(position & MASK)] = op;
    }

    /** The end of the descriptor at {@code position} is known: it completes with {@code status}, in its turn. */
    void finish(final long position, final int status, final int length)
    {
        statuses[(int)(position & MASK)] = status | ViplDescriptor.STATUS_DONE;
        lengths[(int)(position & MASK)] = length;
    }

    boolean isFinished(final long position)
    {
        return 0 != statuses[(int)(position & MASK)];
    }

    /** @return the status a finished descriptor completes with, or what a flush gives an unfinished one. */
    int finalStatus(final long position)
    {
        final int i = (int)(position & MASK);
        return 0 != statuses[i] ? statuses[i] : ops[i] | ViplDescriptor.STATUS_DESC_FLUSHED_ERROR;
    }

    /** @return the length a descriptor completes with: 0 unless it finished. */
    int finalLength(final long position)
    {
        final int i = (int)(position & MASK);
        return 0 != statuses[i] ? lengths[i] : 0;
    }

    /** @return true if the descriptor at {@code position} is an RDMA read. */
    boolean isRead(final long position)
    {
        return ViplDescriptor.STATUS_OP_RDMA_READ == ops[(int)(position & MASK)];
    }

    void removeHead()
    {
        head++;
        if (transmit < head)
        {
            transmit = head;
        }
    }

    /** Everything is forgotten: after a flush, or for the next VI of the table entry. */
    void clear()
    {
        head = tail;
        transmit = tail;
    }
}
