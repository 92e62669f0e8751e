package org.qnix.firmware;

import org.agrona.collections.Long2LongHashMap;

/**
 * The Eager_Short messages this NIC sent back to the permission protocol and whose Permission_Request
 * it has not answered yet, by sender (NIC and PID), receiving process and Context Tag. While such a
 * triple has one, every later Eager_Short of it falls back too, and of its Permission_Requests only
 * those of operations no younger than its oldest fallback may be granted (operation ids grow in the
 * order the sending NIC started its sends). So messages with the same tag between two processes are
 * matched in the order they were sent, as without eager messages (thesis 3.7; the argument, and why a
 * younger message never waits for ever on an older one, is in docs/IMPLEMENTATION.md, "Eager short
 * messages"). The entries go as the receiving NIC answers those requests (granted, or the receiver
 * gone), or when their sender or receiver is deleted.
 *
 * <pre>{@code
 * if (fallbacks.pending(sourceNode, senderPid, receiverIndex, tag)) { ... fall back ... }
 * fallbacks.fellBack(sourceNode, senderPid, receiverIndex, tag, operationId);
 * if (!fallbacks.mayGrant(sourceNode, senderPid, receiverIndex, tag, operationId)) { ... no reply yet ... }
 * fallbacks.answered(sourceNode, operationId);   // its Permission_Request was answered
 * }</pre>
 */
final class EagerFallbacks
{
    private static final long NONE = -1;
    private static final int PID_SHIFT = 48;
    private static final int RECEIVER_SHIFT = 32;
    private static final long TAG_MASK = 0xFFFF_FFFFL;

    /** Per sender NIC: operation id -> key; created for the first fallback from that NIC. */
    private final Long2LongHashMap[] keyByOperation;
    /** Per sender NIC: key -> operations with that key that fell back and are not answered yet. */
    private final Long2LongHashMap[] pendingByKey;
    private int pending;

    EagerFallbacks(final int nodeCount)
    {
        keyByOperation = new Long2LongHashMap[nodeCount];
        pendingByKey = new Long2LongHashMap[nodeCount];
    }

    /** Sender PID, receiving process and tag in one long; the sender NIC is the array index. */
    private static long key(final int senderPid, final int receiverIndex, final int tag)
    {
        return (long)(senderPid & 0xFFFF) << PID_SHIFT | (long)(receiverIndex & 0xFFFF) << RECEIVER_SHIFT |
            (tag & TAG_MASK);
    }

    /** @return true if an older Eager_Short with these ids fell back and its request is not answered. */
    boolean pending(final int sourceNode, final int senderPid, final int receiverIndex, final int tag)
    {
        return 0 != pending && null != pendingByKey[sourceNode] &&
            0 != pendingByKey[sourceNode].get(key(senderPid, receiverIndex, tag));
    }

    /**
     * @return false if a fallback with these ids older than {@code operationId} still waits: that
     * request must wait for it (no reply; its sender asks again).
     */
    boolean mayGrant(final int sourceNode, final int senderPid, final int receiverIndex, final int tag,
        final long operationId)
    {
        if (!pending(sourceNode, senderPid, receiverIndex, tag))
        {
            return true;
        }
        final long key = key(senderPid, receiverIndex, tag);
        // The pending fallbacks of one sender NIC are few (at most its sends in flight): a scan.
        final Long2LongHashMap.EntryIterator it = keyByOperation[sourceNode].entrySet().iterator();
        while (it.hasNext())
        {
            it.next();
            if (it.getLongValue() == key && it.getLongKey() < operationId)
            {
                return false;
            }
        }
        return true;
    }

    /** Operation {@code operationId} with these ids was told to ask for permission. */
    void fellBack(final int sourceNode, final int senderPid, final int receiverIndex, final int tag,
        final long operationId)
    {
        if (null == keyByOperation[sourceNode])
        {
            keyByOperation[sourceNode] = new Long2LongHashMap(NONE);
            pendingByKey[sourceNode] = new Long2LongHashMap(0);
        }
        final long key = key(senderPid, receiverIndex, tag);
        if (NONE == keyByOperation[sourceNode].put(operationId, key))
        {
            pendingByKey[sourceNode].put(key, pendingByKey[sourceNode].get(key) + 1);
            pending++;
        }
    }

    /** The Permission_Request of an operation from {@code sourceNode} was answered; a no-op for others. */
    void answered(final int sourceNode, final long operationId)
    {
        if (0 == pending || null == keyByOperation[sourceNode])
        {
            return;
        }
        final long key = keyByOperation[sourceNode].remove(operationId);
        if (NONE != key)
        {
            drain(sourceNode, key);
        }
    }

    /** The process of Process Table entry {@code receiverIndex} was deleted: its entries go. */
    void receiverDeleted(final int receiverIndex)
    {
        removeIf(-1, -1, receiverIndex);
    }

    /** Process {@code senderPid} of NIC {@code sourceNode} was deleted: its entries go. */
    void senderDeleted(final int sourceNode, final int senderPid)
    {
        removeIf(sourceNode, senderPid, -1);
    }

    /** Operations whose Permission_Request this NIC has not answered yet (tests, debugger). */
    int pendingOperations()
    {
        return pending;
    }

    /** Deletion path only, not the data path: walks the operations. */
    private void removeIf(final int sourceNode, final int senderPid, final int receiverIndex)
    {
        for (int node = 0; node < keyByOperation.length && 0 != pending; node++)
        {
            if (null == keyByOperation[node] || sourceNode >= 0 && node != sourceNode)
            {
                continue;
            }
            final Long2LongHashMap.EntryIterator it = keyByOperation[node].entrySet().iterator();
            while (it.hasNext())
            {
                it.next();
                final long key = it.getLongValue();
                if ((senderPid < 0 || (int)(key >>> PID_SHIFT & 0xFFFF) == (senderPid & 0xFFFF)) &&
                    (receiverIndex < 0 || (int)(key >>> RECEIVER_SHIFT & 0xFFFF) == (receiverIndex & 0xFFFF)))
                {
                    it.remove();
                    drain(node, key);
                }
            }
        }
    }

    private void drain(final int sourceNode, final long key)
    {
        final Long2LongHashMap counts = pendingByKey[sourceNode];
        final long left = counts.get(key) - 1;
        if (left > 0)
        {
            counts.put(key, left);
        }
        else
        {
            counts.remove(key);
        }
        pending--;
    }
}
