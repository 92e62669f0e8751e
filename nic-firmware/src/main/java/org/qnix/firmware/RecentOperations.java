package org.qnix.firmware;

import org.agrona.collections.LongHashSet;

/**
 * The operation ids of the last transfers completed from one sender NIC, so that a Permission_Request
 * repeated after its transfer finished is recognised and changes nothing (DESIGN.md 8, item 2).
 */
final class RecentOperations
{
    private final long[] ring;
    private final LongHashSet ids;
    private int next;
    private int size;

    RecentOperations(final int capacity)
    {
        ring = new long[capacity];
        ids = new LongHashSet(capacity * 2);
    }

    void add(final long operationId)
    {
        if (size == ring.length)
        {
            ids.remove(ring[next]);
        }
        else
        {
            size++;
        }
        ring[next] = operationId;
        ids.add(operationId);
        next = (next + 1) % ring.length;
    }

    boolean contains(final long operationId)
    {
        return ids.contains(operationId);
    }
}
