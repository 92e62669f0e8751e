package org.qnix.firmware;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.PermissionReplyFlyweight;
import org.qnix.abi.PermissionRequestFlyweight;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.VniContext;

/**
 * The receiving side of the message path: the processes' Receive Tables (thesis 3.3.3, Figure 6) and
 * the flow control that fills them. A Receive posted by a process (thesis 3.5.2, Receive steps 1-7)
 * takes a message already staged for it or waits; a Permission_Request (3.5.1) is granted into a
 * matching posted receive, or into staging in NIC managed memory within the receiver's quota, or gets
 * no reply for now; data packets (RX steps 1-2 and 4) go through the receive's Descriptor Map into the
 * user's buffer, or into staging; Transfer_Abort ends a transfer part-way. Every receive ends with its
 * Receive Doorbell. The granted transfers themselves are kept by the {@link TransferTable}. An
 * Eager_Short (thesis 3.7) is what a Permission_Request granted at once and its one data packet would
 * be: delivered into a matching posted receive, or staged within the same quotas, or else sent back
 * to the permission protocol ({@link EagerFallbacks}).
 *
 * <p>About 590 lines, past the ~500 of the others: the eager path shares this class's matching,
 * staging quotas, delivery and completion with the permission path, and splitting it means first
 * giving those their own class (the receive-side half of issue 13's fast-path work).
 *
 * <pre>{@code
 * receives.postReceive(slot, slot.receives[context]);
 * receives.onPermissionRequest(sourceNode, request);
 * receives.onEagerShort(sourceNode, request, packet, dataIndex, dataLength);
 * receives.onDataPacket(header, buffer, index);   // the last packet rings the Receive Doorbell
 * }</pre>
 */
final class ReceiveTable
{
    private final ClusterParameters params;
    private final int pageSize;
    private final int torusWidth;
    private final AtomicBuffer sdram;
    /** Reads the Receive Contexts, writes their completion fields. */
    private final VniContext context = new VniContext();
    private final String nodeName;
    private final AtomicBuffer host;
    private final NicCounters counters;
    private final NameTable names;
    private final ContextReader contexts;
    private final StagingMemory staging;
    private final ProcessSlot[] slots;
    private final SystemMessageSender messages;
    private final Doorbells doorbells;
    private final TransferTable transfers;
    private final EagerFallbacks fallbacks;
    private final DeferredRequests deferred = new DeferredRequests();
    private final DeferredRequests.Handler answerDeferred = this::answerRequest;
    private final EpochClock clock;
    /** A kept request being answered again: its deferral was counted when it arrived. */
    private boolean replaying;
    private final int shortThreshold;
    /** Staged bytes one receiving process may hold: a quarter of managed memory, at least one message. */
    private final long stagingBytesPerProcess;

    ReceiveTable(final FirmwareContext ctx, final TransferTable transfers)
    {
        this.nodeName = ctx.nodeName();
        this.params = ctx.parameters();
        this.pageSize = params.pageSize();
        this.torusWidth = params.torusWidth();
        this.sdram = ctx.sdram();
        this.host = ctx.hostMemory();
        this.counters = ctx.counters();
        this.names = ctx.nameTable();
        this.contexts = ctx.contextReader();
        this.staging = ctx.stagingMemory();
        this.slots = ctx.processSlots();
        this.messages = ctx.systemMessages();
        this.doorbells = ctx.doorbells();
        this.transfers = transfers;
        this.fallbacks = new EagerFallbacks(params.nodeCount());
        this.clock = ctx.cachedClock();
        this.shortThreshold = params.shortThreshold();
        stagingBytesPerProcess = Math.max(params.maxMessageBytes(), ctx.sdramLayout().managedMemoryLength() / 4);
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
                replayDeferred(slot);
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
        if (deferred.size() > 0)
        {
            // A request kept for want of room may match this receive: granted now, not at its retry.
            replayDeferred(slot);
        }
    }

    /**
     * A Receive took a staged message and freed its room, or was posted and may match one: the requests
     * of its process left unanswered for want of staging room are answered now rather than at their
     * senders' retries.
     */
    private void replayDeferred(final ProcessSlot slot)
    {
        replaying = true;
        try
        {
            deferred.replay(slot.index, clock.time(), answerDeferred);
        }
        finally
        {
            replaying = false;
        }
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
    private void deliver(
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
    private void completeReceive(final ProcessSlot slot, final ReceiveOperation op, final int status)
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
    // Permission_Request (thesis 3.5.1) and Transfer_Abort
    // ---------------------------------------------------------------------------------------------

    void onPermissionRequest(final int sourceNode, final PermissionRequestFlyweight request)
    {
        counters.permissionRequestsReceived.increment();
        // A retry: whatever this answer is, a copy kept from an earlier ask is not needed any more.
        deferred.forget(sourceNode, request.operationId());
        answerRequest(sourceNode, request);
    }

    /** The rules of thesis 3.5.1 for one Permission_Request, arrived or kept ({@link DeferredRequests}). */
    private void answerRequest(final int sourceNode, final PermissionRequestFlyweight request)
    {
        final int receiverPid = request.receiverPid();
        final int senderPid = request.senderPid();
        final long operationId = request.operationId();
        final int length = request.messageLength();
        final int firstPacketLength = request.firstPacketLength();
        final int packets = request.packets();

        final int index = ProcessTableLayout.index(receiverPid);
        final ProcessSlot slot = activeSlot(index, request.receiverIncarnation());
        if (null == slot)
        {
            fallbacks.answered(sourceNode, operationId);
            reply(sourceNode, receiverPid, senderPid, operationId, Doorbell.PEER_GONE, 0);
            return;
        }
        final Transfer live = transfers.live(sourceNode, operationId);
        if (null != live)
        {
            // DESIGN.md 8, item 2: answered again, never granted twice.
            counters.permissionDuplicates.increment();
            reply(sourceNode, receiverPid, senderPid, operationId, Doorbell.DONE, live.handle);
            return;
        }
        if (transfers.recentlyDelivered(sourceNode, operationId))
        {
            counters.permissionDuplicates.increment();
            return;
        }
        if (length < 0 || length > params.maxMessageBytes() || senderPid < 1 ||
            packets != MessageGeometry.packets(length, firstPacketLength, pageSize))
        {
            counters.systemMessagesRejected.increment();
            fallbacks.answered(sourceNode, operationId);
            reply(sourceNode, receiverPid, senderPid, operationId, Doorbell.BAD_CONTEXT, 0);
            return;
        }
        if (!fallbacks.mayGrant(sourceNode, senderPid, index, request.tag(), operationId))
        {
            // Thesis 3.7: an older Eager_Short with this sender and tag fell back and waits; this comes after it.
            if (!replaying)
            {
                counters.requestsDeferredEagerOrder.increment();
            }
            deferred.keep(sourceNode, index, request, clock.time());
            return;
        }
        final int senderAi = request.senderAi();
        final int senderPi = request.senderPi();
        final int tag = request.tag();
        final ReceiveOperation match = firstPosted(slot, senderAi, senderPi, tag);
        // Whatever cannot be granted now gets no reply: the sender asks again, within the interval its
        // request names, until the receive is posted or room frees up (thesis 3.2, Reliability).
        if (null == match && overStagingQuota(slot, length))
        {
            // Issue 17, item 3: a process that does not post its receives holds no more of the
            // NIC's staging and transfer table than its quota; traffic to the others keeps flowing.
            if (!replaying)
            {
                counters.requestsDeferredReceiverQuota.increment();
            }
            deferred.keep(sourceNode, index, request, clock.time());
            return;
        }
        if (transfers.isFull())
        {
            // Cannot happen while the quotas hold (the table has room for them all); counted if it does.
            counters.requestsDeferredTransferTable.increment();
            return;
        }
        long stagingAddress = 0;
        if (null == match && length > 0)
        {
            stagingAddress = staging.allocate(length);
            if (stagingAddress < 0)
            {
                if (!replaying)
                {
                    counters.requestsDeferredStagingFull.increment();
                }
                deferred.keep(sourceNode, index, request, clock.time());
                return;
            }
        }

        final Transfer t = transfers.grant(index, sourceNode, request, stagingAddress, null == match ? length : 0);
        fallbacks.answered(sourceNode, operationId);
        FirmwareEvents.permissionGranted(nodeName, sourceNode, t.handle, null == match);
        if (null != match)
        {
            // Steps 1-3: the Descriptor Map of the posted receive.
            slot.unpost(match);
            match.attach(t, pageSize);
        }
        else
        {
            t.quotaBytes = pageRounded(length);
            slot.stage(t);
            counters.messagesStaged.increment();
        }
        reply(sourceNode, receiverPid, senderPid, operationId, Doorbell.DONE, t.handle);
        if (null != match && t.complete())
        {
            completeReceive(slot, match, Doorbell.DONE);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Eager_Short (thesis 3.7)
    // ---------------------------------------------------------------------------------------------

    /**
     * An Eager_Short: a Send_Short (or a short cast's destination) with its data. Taken as a
     * Permission_Request would be, with its one packet at once: into the oldest matching posted
     * receive, else into staging within the receiver's quota and the staging memory, else, like a
     * request that gets no reply for now, sent back to the permission protocol (the sending NIC still
     * holds the data and asks for permission with the same operation id). While an earlier one of the
     * same sender and tag waits on that path, this one follows it there: it never overtakes that one.
     * Every Eager_Short is answered with one Eager_Short_Reply.
     *
     * @param request    the Permission_Request's fields at the start of the payload.
     * @param data       where the message bytes are, {@code dataLength} of them.
     */
    void onEagerShort(final int sourceNode, final PermissionRequestFlyweight request, final DirectBuffer data,
        final int dataIndex, final int dataLength)
    {
        final int receiverPid = request.receiverPid();
        final int senderPid = request.senderPid();
        final long operationId = request.operationId();
        final int length = request.messageLength();
        final int packets = request.packets();

        final int index = ProcessTableLayout.index(receiverPid);
        final ProcessSlot slot = activeSlot(index, request.receiverIncarnation());
        if (null == slot)
        {
            eagerReply(sourceNode, receiverPid, senderPid, operationId, Doorbell.PEER_GONE);
            return;
        }
        if (null != transfers.live(sourceNode, operationId) || transfers.recentlyDelivered(sourceNode, operationId))
        {
            // Each Eager_Short is sent once; a copy cannot happen while the wire is right.
            counters.permissionDuplicates.increment();
            return;
        }
        if (length < 0 || length > shortThreshold || length != dataLength || senderPid < 1 ||
            packets != MessageGeometry.packets(length, request.firstPacketLength(), pageSize) || packets > 1)
        {
            counters.systemMessagesRejected.increment();
            eagerReply(sourceNode, receiverPid, senderPid, operationId, Doorbell.BAD_CONTEXT);
            return;
        }
        final int senderAi = request.senderAi();
        final int senderPi = request.senderPi();
        final int tag = request.tag();
        if (fallbacks.pending(sourceNode, senderPid, index, tag))
        {
            // An older one with this sender and tag fell back: this one must not overtake it.
            fallBack(sourceNode, index, request);
            return;
        }
        final ReceiveOperation match = firstPosted(slot, senderAi, senderPi, tag);
        if (transfers.isFull() || null == match && overStagingQuota(slot, length))
        {
            fallBack(sourceNode, index, request);
            return;
        }
        long stagingAddress = 0;
        if (null == match && length > 0)
        {
            stagingAddress = staging.allocate(length);
            if (stagingAddress < 0)
            {
                fallBack(sourceNode, index, request);
                return;
            }
        }

        final Transfer t = transfers.grant(index, sourceNode, request, stagingAddress, null == match ? length : 0);
        if (null != match)
        {
            slot.unpost(match);
            match.attach(t, pageSize);
            if (packets > 0)
            {
                deliver(t, match.map, 0, data, dataIndex);
            }
            counters.eagerShortsDelivered.increment();
        }
        else
        {
            sdram.putBytes((int)stagingAddress, data, dataIndex, length);
            t.quotaBytes = pageRounded(length);
            slot.stage(t);
            counters.messagesStaged.increment();
            counters.eagerShortsStaged.increment();
        }
        t.packetsArrived = packets;
        counters.dataBytesReceived.getAndAddRelease(length);
        FirmwareEvents.permissionGranted(nodeName, sourceNode, t.handle, null == match);
        // The sender's Send Doorbell rings on this reply: the message is in this NIC's hands.
        eagerReply(sourceNode, receiverPid, senderPid, operationId, Doorbell.DONE);
        if (null != match)
        {
            completeReceive(slot, match, Doorbell.DONE);
        }
    }

    private void fallBack(final int sourceNode, final int receiverIndex, final PermissionRequestFlyweight request)
    {
        counters.eagerShortsFellBack.increment();
        fallbacks.fellBack(sourceNode, request.senderPid(), receiverIndex, request.tag(), request.operationId());
        eagerReply(sourceNode, request.receiverPid(), request.senderPid(), request.operationId(),
            SystemMessage.STATUS_ASK_PERMISSION);
    }

    private void eagerReply(final int node, final int receiverPid, final int senderPid, final long operationId,
        final int status)
    {
        final PermissionReplyFlyweight reply = messages.eagerShortReply();
        reply.receiverPid(receiverPid).senderPid(senderPid).operationId(operationId).status(status).handle(0);
        messages.sendTo(node, SystemMessage.EAGER_SHORT_REPLY_LENGTH);
    }

    /** Eager_Short operations that fell back and whose Permission_Request is not answered (tests). */
    int pendingEagerFallbacks()
    {
        return fallbacks.pendingOperations();
    }

    /**
     * @return the active Process Table entry {@code index} names if it still holds the process the sender
     * named, its {@code incarnation}; else null (that process is gone, or was never there). The sender's
     * NIC may not have read the process's Delete_Process yet when the driver gives the entry to another.
     */
    private ProcessSlot activeSlot(final int index, final int incarnation)
    {
        final ProcessSlot slot = index >= 0 && index < slots.length ? slots[index] : null;
        return null != slot && slot.active && slot.incarnation == incarnation ? slot : null;
    }

    /** @return the oldest receive the process posted that takes a message of this sender and tag, or null. */
    private static ReceiveOperation firstPosted(final ProcessSlot slot, final int senderAi, final int senderPi,
        final int tag)
    {
        for (ReceiveOperation op = slot.firstPosted(); null != op; op = op.next)
        {
            if (op.matches(senderAi, senderPi, tag))
            {
                return op;
            }
        }
        return null;
    }

    /** @return true if staging {@code length} more bytes would pass the process's quota (issue 17, item 3). */
    private boolean overStagingQuota(final ProcessSlot slot, final int length)
    {
        return slot.stagedCount() >= ClusterParameters.STAGED_MESSAGES_PER_PROCESS ||
            slot.stagedBytes() + pageRounded(length) > stagingBytesPerProcess;
    }

    private long pageRounded(final int length)
    {
        return ((long)length + pageSize - 1) / pageSize * pageSize;
    }

    private void reply(final int node, final int receiverPid, final int senderPid, final long operationId,
        final int status, final int handle)
    {
        final PermissionReplyFlyweight reply = messages.permissionReply();
        reply.receiverPid(receiverPid).senderPid(senderPid).operationId(operationId).status(status).handle(handle);
        messages.sendTo(node, SystemMessage.PERMISSION_REPLY_LENGTH);
    }

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
        fallbacks.receiverDeleted(slot.index);
        deferred.receiverDeleted(slot.index);
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
    }

    /**
     * A process somewhere was deleted: receives of {@code slot} waiting on it complete with Peer Gone,
     * its unfinished staged messages are freed. Messages it finished sending stay deliverable.
     */
    void peerDeleted(final ProcessSlot slot, final int nodeIndex, final int nicPid, final int ai, final int pi)
    {
        fallbacks.senderDeleted(nodeIndex, nicPid);
        deferred.senderDeleted(nodeIndex, nicPid);
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
    }
}
