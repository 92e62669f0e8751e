package org.qnix.firmware;

import org.qnix.abi.ViaTablesLayout;

/**
 * One work queue of a VI as the NIC holds it (issue 14): the descriptors posted and not yet completed,
 * in posting order, each as the memory handle and offset its post named, with the sequence number a
 * send went out under. A fixed ring made once per VI table entry, so posting allocates nothing. A send
 * queue has a second cursor, {@link #transmit}: descriptors before it are on the wire and wait only
 * for their completion (Reliable Reception waits for the peer's acknowledgement).
 *
 * <pre>{@code
 * if (!queue.isFull()) { queue.add(handle, offset); }
 * int handle = queue.handle(queue.head());  // the oldest, completed first
 * queue.removeHead();
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

    void add(final int handle, final int offset)
    {
        final int i = (int)(tail & MASK);
        handles[i] = handle;
        offsets[i] = offset;
        sequences[i] = 0;
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

    /** @return the status op bits a send's completion carries (Send or RDMA Write). */
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
