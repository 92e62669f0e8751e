package org.qnix.firmware;

import org.agrona.collections.IntArrayQueue;
import org.agrona.collections.Long2ObjectHashMap;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.PermissionRequestFlyweight;

/**
 * The transfers this NIC has granted (Receive Table entries for incoming messages, thesis 3.3.3): a
 * fixed table indexed by the handle the data packets carry, the live ones by sender NIC and operation
 * id so that a repeated Permission_Request is answered again and never granted twice, and the ids of
 * the last ones delivered from each NIC, so that one repeated after its transfer ended changes nothing
 * (DESIGN.md 8, item 2). Releasing a transfer frees its handle and its staging space.
 *
 * <pre>{@code
 * Transfer t = transfers.grant(receiverIndex, sourceNode, request, stagingOffset, stagingLength);
 * ...
 * transfers.release(t, true);
 * }</pre>
 */
final class TransferTable
{
    private static final int RECENT_OPERATIONS = 256;

    private final Transfer[] transfers;
    private final IntArrayQueue freeHandles;
    private final Long2ObjectHashMap<Transfer>[] liveTransfers;
    private final RecentOperations[] recentTransfers;
    private final StagingMemory staging;

    @SuppressWarnings("unchecked")
    TransferTable(final FirmwareContext ctx)
    {
        final ClusterParameters params = ctx.parameters();
        this.staging = ctx.stagingMemory();
        final int transferHandles = params.transferTableEntries();
        transfers = new Transfer[transferHandles];
        freeHandles = new IntArrayQueue(transferHandles, -1);
        for (int h = 0; h < transferHandles; h++)
        {
            transfers[h] = new Transfer(h);
            freeHandles.addInt(h);
        }
        liveTransfers = new Long2ObjectHashMap[params.nodeCount()];
        recentTransfers = new RecentOperations[params.nodeCount()];
        for (int n = 0; n < params.nodeCount(); n++)
        {
            liveTransfers[n] = new Long2ObjectHashMap<>();
        }
    }

    /** @return the live transfer of operation {@code operationId} from NIC {@code sourceNode}, or null. */
    Transfer live(final int sourceNode, final long operationId)
    {
        return liveTransfers[sourceNode].get(operationId);
    }

    /** @return true if that operation's transfer was delivered lately: a repeated request to ignore. */
    boolean recentlyDelivered(final int sourceNode, final long operationId)
    {
        return null != recentTransfers[sourceNode] && recentTransfers[sourceNode].contains(operationId);
    }

    /** @return the transfer a data packet's Context Tag names, or null if there is none such. */
    Transfer byHandle(final int handle)
    {
        return handle >= 0 && handle < transfers.length ? transfers[handle] : null;
    }

    boolean isFull()
    {
        return freeHandles.isEmpty();
    }

    /** Takes a free handle for the message {@code request} describes. The table must not be full. */
    Transfer grant(final int receiverIndex, final int sourceNode, final PermissionRequestFlyweight request,
        final long stagingOffset, final int stagingLength)
    {
        final Transfer t = transfers[freeHandles.pollInt()];
        t.grant(receiverIndex, sourceNode, request, stagingOffset, stagingLength);
        liveTransfers[sourceNode].put(t.operationId, t);
        return t;
    }

    /** Frees the staging space of a staged transfer whose packets went to its receive's buffer. */
    void unstageData(final Transfer t)
    {
        if (t.stagingLength > 0)
        {
            staging.free(t.stagingOffset, t.stagingLength);
            t.stagingLength = 0;
        }
    }

    /** Frees a transfer's handle and staging space; a delivered one is remembered as recent. */
    void release(final Transfer t, final boolean delivered)
    {
        if (!t.active)
        {
            return;
        }
        unstageData(t);
        liveTransfers[t.sourceNode].remove(t.operationId);
        if (delivered)
        {
            recent(t.sourceNode).add(t.operationId);
        }
        if (null != t.receive)
        {
            t.receive.transfer = null;
            t.receive = null;
        }
        t.active = false;
        freeHandles.addInt(t.handle);
    }

    private RecentOperations recent(final int node)
    {
        RecentOperations recent = recentTransfers[node];
        if (null == recent)
        {
            recent = new RecentOperations(RECENT_OPERATIONS);
            recentTransfers[node] = recent;
        }
        return recent;
    }

    /** Transfers granted and not yet released (tests, debugger). */
    int activeTransfers()
    {
        return transfers.length - freeHandles.size();
    }
}
