package org.qnix.firmware;

import org.qnix.abi.ViaTablesLayout;

/**
 * The RDMA reads the peer of a VI asked of this NIC and that wait for their response (issue 14: "read
 * by request/response"), in arrival order: what to read (memory handle, address, length) and the
 * sequence number of the request, which the response carries back so the requester can match it. A
 * fixed ring made once per VI table entry; it never needs more room than a send queue holds, since
 * every request stands for a read descriptor on the peer's send queue.
 *
 * <pre>{@code
 * if (!requests.isFull()) { requests.add(handle, address, length, sequence); }
 * long address = requests.address();   // the oldest, answered first
 * requests.removeHead();
 * }</pre>
 */
final class ViaReadRequests
{
    static final int CAPACITY = ViaTablesLayout.MAX_DESCRIPTORS_PER_QUEUE;
    private static final int MASK = CAPACITY - 1;

    private final int[] handles = new int[CAPACITY];
    private final long[] addresses = new long[CAPACITY];
    private final int[] lengths = new int[CAPACITY];
    private final int[] sequences = new int[CAPACITY];
    private long head;
    private long tail;

    boolean isEmpty()
    {
        return head == tail;
    }

    boolean isFull()
    {
        return tail - head >= CAPACITY;
    }

    void add(final int handle, final long address, final int length, final int sequence)
    {
        final int i = (int)(tail & MASK);
        handles[i] = handle;
        addresses[i] = address;
        lengths[i] = length;
        sequences[i] = sequence;
        tail++;
    }

    int handle()
    {
        return handles[(int)(head & MASK)];
    }

    long address()
    {
        return addresses[(int)(head & MASK)];
    }

    int length()
    {
        return lengths[(int)(head & MASK)];
    }

    /** @return the sequence number of the request at the head. */
    int sequence()
    {
        return sequences[(int)(head & MASK)];
    }

    void removeHead()
    {
        head++;
    }

    void clear()
    {
        head = tail;
    }
}
