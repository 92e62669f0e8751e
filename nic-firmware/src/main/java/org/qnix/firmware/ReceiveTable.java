package org.qnix.firmware;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.PermissionReplyFlyweight;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.VniContext;

/**
 * The receiving side of the message path: the processes' Receive Tables (thesis 3.3.3, Figure 6). A
 * Receive posted by a process (thesis 3.5.2, Receive steps 1-7) takes a message already staged for it
 * or waits; data packets (RX steps 1-2 and 4) go through the receive's Descriptor Map into the user's
 * buffer, or into staging; Transfer_Abort ends a transfer part-way. Every receive ends with its Receive
 * Doorbell. What fills the table, the answer to a Permission_Request (3.5.1) or an Eager_Short (3.7),
 * is {@link PermissionGrants}'s, which this class tells when a Receive is posted or takes a staged
 * message; the granted transfers themselves are kept by the {@link TransferTable}.
 *
 * <pre>{@code
 * receives.postReceive(slot, slot.receives[context]);
 * receives.permissionGrants(grants);            // wired once: grants.replay when a Receive is posted
 * receives.onDataPacket(header, buffer, index);   // the last packet rings the Receive Doorbell
 * }</pre>
 */
final class ReceiveTable
{
    private final int pageSize;
    private final int torusWidth;
    private final AtomicBuffer sdram;
    /** Reads the Receive Contexts, writes their completion fields. */
    private final VniContext context = new VniContext();
    private final AtomicBuffer host;
    private final NicCounters counters;
    private final NameTable names;
    private final ContextReader contexts;
    private final ProcessSlot[] slots;
    private final Doorbells doorbells;
    private final TransferTable transfers;
    private PermissionGrants grants;

    ReceiveTable(final FirmwareContext ctx, final TransferTable transfers)
    {
        final ClusterParameters params = ctx.parameters();
        this.pageSize = params.pageSize();
        this.torusWidth = params.torusWidth();
        this.sdram = ctx.sdram();
        this.host = ctx.hostMemory();
        this.counters = ctx.counters();
        this.names = ctx.nameTable();
        this.contexts = ctx.contextReader();
        this.slots = ctx.processSlots();
        this.doorbells = ctx.doorbells();
        this.transfers = transfers;
    }

    /** Wired after construction: the grants deliver through this table, and this table tells them of room. */
    void permissionGrants(final PermissionGrants grants)
    {
        this.grants = grants;
    }

    // ---------------------------------------------------------------------------------------------
    // Receive (thesis 3.5.2, steps 1-7)
    // ---------------------------------------------------------------------------------------------

    void postReceive(final ProcessSlot slot, final ReceiveOperation op)
    {
        if (op.active)
        {
            counters.commandsRejected.increment();
            return;
        }
        final int context = contexts.receiveContextAddress(slot.index, op.context);
        final VniContext fields = this.context.wrap(sdram, context);
        op.describe(fields.doorbellFlag(), fields.peerAi(), fields.peerPi(), fields.tag());
        final int capacity = contexts.length(context);
        if (capacity < 0 || !op.hasValidMatch())
        {
            completeReceive(slot, op, Doorbell.BAD_CONTEXT);
            return;
        }
        final int check = contexts.readBuffer(slot.index, slot.nicPid, context,
            contexts.receiveRegionAddress(slot.index, op.context), capacity, op.buffer);
        if (0 != check)
        {
            completeReceive(slot, op, check);
            return;
        }
        op.active = true;

        // Steps 1 and 4-7: a message already staged for it, the oldest first.
        for (Transfer t = slot.firstStaged(); null != t; t = t.next)
        {
            if (op.matches(t.senderAi, t.senderPi, t.tag))
            {
                slot.unstage(t);
                attachStaged(slot, op, t);
                // Staging room freed: this process's kept requests, and any receiver's kept for want of memory.
                grants.replayAll();
                return;
            }
        }
        if (ContextLayout.ANY != op.senderAi && null == names.lookup(op.senderAi, op.senderPi))
        {
            // Nobody of that name is registered: nothing could ever match.
            completeReceive(slot, op, Doorbell.PEER_GONE);
            return;
        }
        // Steps 2-3.
        slot.post(op);
        // A request kept for want of room may match this receive: granted now, not at its retry.
        grants.replay(slot);
    }

    /** DESIGN.md 8, item 4: staged packets go to the user buffer, the staging space is freed. */
    private void attachStaged(final ProcessSlot slot, final ReceiveOperation op, final Transfer t)
    {
        op.attach(t, pageSize);
        for (int packet = 0; packet < t.packetsArrived; packet++)
        {
            final int source = (int)(t.stagingOffset + MessageGeometry.offset(packet, t.firstPacketLength, pageSize));
            deliver(t, op.map, packet, sdram, source);
        }
        transfers.unstageData(t);
        if (t.complete())
        {
            completeReceive(slot, op, Doorbell.DONE);
        }
    }

    /**
     * Moves one packet's bytes to the one or two receive Descriptors its map entry names, after checking
     * again that their pages are still the receiver's locked memory (DESIGN.md 8, item 10): a page
     * unlocked or freed since the Receive was posted gets nothing, and the receive completes Protection.
     */
    void deliver(
        final Transfer t, final DescriptorMap map, final int packet, final DirectBuffer source, final int offset)
    {
        final int first = map.firstLength[packet];
        final int second = map.secondLength[packet];
        final int nicPid = ProcessTableLayout.nicPid(t.receiverIndex);
        if (!t.refused && (first > 0 && !contexts.isLockedBy(nicPid, map.firstAddress[packet]) ||
            second > 0 && !contexts.isLockedBy(nicPid, map.secondAddress[packet])))
        {
            t.refused = true;
        }
        if (t.refused)
        {
            return;
        }
        if (first > 0)
        {
            host.putBytes((int)map.firstAddress[packet], source, offset, first);
        }
        if (second > 0)
        {
            host.putBytes((int)map.secondAddress[packet], source, offset + first, second);
        }
    }

    /**
     * RX step 4 and Receive step 7: completion fields, then the doorbell (DESIGN.md 8, item 3). A
     * message longer than the buffer completes Truncated with its prefix delivered.
     */
    void completeReceive(final ProcessSlot slot, final ReceiveOperation op, final int status)
    {
        final int result = op.completionStatus(status);
        final Transfer t = op.transfer;
        if (null != t)
        {
            // Reader: the owner process, after the acquire of the doorbell rung below with release.
            context.wrap(sdram, contexts.receiveContextAddress(slot.index, op.context))
                .complete(t.senderAi, t.senderPi, t.tag, t.length);
            transfers.release(t, Doorbell.DONE == status);
            op.transfer = null;
        }
        op.active = false;
        if (Doorbell.DONE == result)
        {
            counters.receivesCompleted.increment();
        }
        else
        {
            counters.errorCompletions.increment();
        }
        // Reader: the owner process polling its Receive Doorbell (Doorbells.ring orders the writes above).
        doorbells.ring(slot.receiveDoorbells, op.context,
            Doorbell.DONE == result && !op.doorbellFlag ? Doorbell.FREE : result);
    }

    // ---------------------------------------------------------------------------------------------
    // Transfer_Abort
    // ---------------------------------------------------------------------------------------------

    /**
     * Transfer_Abort: the sending NIC ended a granted message part-way (see {@link SendScheduler}). A
     * receive attached to it completes {@link Doorbell#SEND_ABORTED} with the prefix that arrived; a
     * staged one is dropped with its staging space.
     */
    void onTransferAbort(final int sourceNode, final PermissionReplyFlyweight abort)
    {
        final Transfer t = transfers.live(sourceNode, abort.operationId());
        if (null == t || t.handle != abort.handle() || !t.isFrom(sourceNode, abort.senderPid(), abort.receiverPid()))
        {
            counters.systemMessagesRejected.increment();
            return;
        }
        counters.transfersAborted.increment();
        final ProcessSlot slot = slots[t.receiverIndex];
        if (null != t.receive)
        {
            completeReceive(slot, t.receive, Doorbell.SEND_ABORTED);
        }
        else
        {
            slot.unstage(t);
            transfers.release(t, false);
            grants.replayAll();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // RX steps 1-2 and 4: a data packet
    // ---------------------------------------------------------------------------------------------

    void onDataPacket(final PacketHeader header, final MutableDirectBuffer buffer, final int index)
    {
        final Transfer t = transfers.byHandle(header.contextTag());
        final int sourceNode = NicCoordinates.indexOfPacked(header.source(), torusWidth);
        if (null == t || !t.isFrom(sourceNode, header.senderPid(), header.receiverPid()) || !t.expects(header, pageSize))
        {
            // DESIGN.md 8, item 11: cannot happen while flow control is right; counted, never delivered.
            counters.packetsDropped.increment();
            return;
        }
        final int packet = header.counter();
        final int length = header.packetLength();
        final int payload = index + PacketHeader.LENGTH;
        final ReceiveOperation receive = t.receive;
        if (null != receive)
        {
            deliver(t, receive.map, packet, buffer, payload);
        }
        else
        {
            sdram.putBytes((int)(t.stagingOffset + MessageGeometry.offset(packet, t.firstPacketLength, pageSize)),
                buffer, payload, length);
        }
        t.packetsArrived = packet + 1;
        counters.dataPacketsReceived.increment();
        counters.dataBytesReceived.getAndAddRelease(length);
        if (null != receive && t.complete())
        {
            completeReceive(slots[t.receiverIndex], receive, Doorbell.DONE);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Processes leaving (Delete_Process; DESIGN.md 8, item 12)
    // ---------------------------------------------------------------------------------------------

    /** The process of {@code slot} is being deleted: its receives end without doorbells, its staging is freed. */
    void processDeleted(final ProcessSlot slot)
    {
        grants.receiverDeleted(slot.index);
        for (final ReceiveOperation op : slot.receives)
        {
            if (op.active)
            {
                if (null == op.transfer)
                {
                    slot.unpost(op);
                }
                else
                {
                    transfers.release(op.transfer, false);
                }
                op.transfer = null;
                op.active = false;
            }
        }
        Transfer staged;
        while (null != (staged = slot.firstStaged()))
        {
            slot.unstage(staged);
            transfers.release(staged, false);
        }
        grants.replayAll();
    }

    /**
     * A process somewhere was deleted: receives of {@code slot} waiting on it complete with Peer Gone,
     * its unfinished staged messages are freed. Messages it finished sending stay deliverable.
     */
    void peerDeleted(final ProcessSlot slot, final int nodeIndex, final int nicPid, final int ai, final int pi)
    {
        grants.senderDeleted(nodeIndex, nicPid);
        for (final ReceiveOperation op : slot.receives)
        {
            if (!op.active)
            {
                continue;
            }
            final Transfer t = op.transfer;
            if (null != t)
            {
                if (t.sourceNode == nodeIndex && t.senderPid == nicPid && !t.complete())
                {
                    completeReceive(slot, op, Doorbell.PEER_GONE);
                }
            }
            else if (op.senderAi == ai && op.senderPi == pi)
            {
                slot.unpost(op);
                completeReceive(slot, op, Doorbell.PEER_GONE);
            }
        }
        Transfer t = slot.firstStaged();
        while (null != t)
        {
            final Transfer next = t.next;
            if (t.sourceNode == nodeIndex && t.senderPid == nicPid && !t.complete())
            {
                slot.unstage(t);
                transfers.release(t, false);
            }
            t = next;
        }
        grants.replayAll();
    }
}
