package org.qnix.firmware;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Doorbell;
import org.qnix.abi.PermissionReplyFlyweight;
import org.qnix.abi.PermissionRequestFlyweight;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.SystemMessage;

/**
 * The receiving NIC's side of the flow control: how it answers a Permission_Request (thesis 3.5.1) and
 * takes an Eager_Short (thesis 3.7). A request is granted into the oldest matching posted receive, or
 * into staging in NIC managed memory within the receiver's quota (issue 17, item 3), or gets no reply
 * for now and is kept ({@link DeferredRequests}) until a Receive of that process is posted
 * ({@link #replay}) or staging memory is freed ({@link #replayAll}); an Eager_Short is delivered or
 * staged the same way with its one packet, or sent back to the permission protocol, never overtaking an
 * earlier one of its sender and tag that was ({@link EagerFallbacks}). The receives themselves, their
 * delivery and completion, are the {@link ReceiveTable}'s; the granted transfers the
 * {@link TransferTable}'s.
 *
 * <pre>{@code
 * grants.onPermissionRequest(sourceNode, request);   // Permission_Reply now, or kept
 * grants.onEagerShort(sourceNode, request, packet, dataIndex, dataLength);   // Eager_Short_Reply
 * grants.replay(slot);                               // a Receive of that process was posted
 * grants.replayAll();                                // staging memory was freed
 * }</pre>
 */
final class PermissionGrants
{
    private final int pageSize;
    private final int shortThreshold;
    private final int maxMessageBytes;
    private final AtomicBuffer sdram;
    private final String nodeName;
    private final NicCounters counters;
    private final StagingMemory staging;
    private final ProcessSlot[] slots;
    private final SystemMessageSender messages;
    private final TransferTable transfers;
    private final ReceiveTable receives;
    private final EagerFallbacks fallbacks;
    private final DeferredRequests deferred = new DeferredRequests();
    private final DeferredRequests.Handler answerDeferred = this::answerRequest;
    private final EpochClock clock;
    /** A kept request being answered again: its deferral was counted when it arrived. */
    private boolean replaying;
    /** The request being answered was kept, not answered: its row stays. */
    private boolean kept;
    /** Staged bytes one receiving process may hold: a quarter of managed memory, at least one message. */
    private final long stagingBytesPerProcess;

    PermissionGrants(final FirmwareContext ctx, final TransferTable transfers, final ReceiveTable receives)
    {
        final ClusterParameters params = ctx.parameters();
        this.pageSize = params.pageSize();
        this.shortThreshold = params.shortThreshold();
        this.maxMessageBytes = params.maxMessageBytes();
        this.sdram = ctx.sdram();
        this.nodeName = ctx.nodeName();
        this.counters = ctx.counters();
        this.staging = ctx.stagingMemory();
        this.slots = ctx.processSlots();
        this.messages = ctx.systemMessages();
        this.transfers = transfers;
        this.receives = receives;
        this.fallbacks = new EagerFallbacks(params.nodeCount());
        this.clock = ctx.cachedClock();
        stagingBytesPerProcess = Math.max(params.maxMessageBytes(), ctx.sdramLayout().managedMemoryLength() / 4);
    }

    /**
     * A Receive of the process in {@code slot} was posted: the requests to it left unanswered are answered
     * now, one may match it, rather than at their senders' retries.
     */
    void replay(final ProcessSlot slot)
    {
        replay(slot.index);
    }

    /**
     * Staging memory was freed (a Receive took a staged message, a staged transfer was dropped, a
     * process left): every kept request is answered again, since any receiver's may need that room.
     */
    void replayAll()
    {
        replay(DeferredRequests.ALL_RECEIVERS);
    }

    /**
     * Answers the kept requests again, oldest first, and once more while a pass answered an Eager_Short's
     * fallback: that may let through a request kept behind it that the pass had already looked at (a
     * Send whose request came before the fallback's). Room that a grant takes never helps another, so
     * without fallbacks one pass is all.
     */
    private void replay(final int receiverIndex)
    {
        if (0 == deferred.size())
        {
            return;
        }
        replaying = true;
        try
        {
            for (int pass = 0; pass < DeferredRequests.CAPACITY; pass++)
            {
                final int fallbacksBefore = fallbacks.pendingOperations();
                if (0 == deferred.replay(receiverIndex, clock.time(), answerDeferred) || 0 == deferred.size() ||
                    fallbacks.pendingOperations() == fallbacksBefore)
                {
                    return;
                }
            }
        }
        finally
        {
            replaying = false;
        }
    }

    /** The receiving process of entry {@code receiverIndex} was deleted: nothing is kept for it any more. */
    void receiverDeleted(final int receiverIndex)
    {
        fallbacks.receiverDeleted(receiverIndex);
        deferred.receiverDeleted(receiverIndex);
    }

    /** Process {@code senderPid} of NIC {@code sourceNode} was deleted: nothing is granted for it any more. */
    void senderDeleted(final int sourceNode, final int senderPid)
    {
        fallbacks.senderDeleted(sourceNode, senderPid);
        deferred.senderDeleted(sourceNode, senderPid);
    }

    // ---------------------------------------------------------------------------------------------
    // Permission_Request (thesis 3.5.1)
    // ---------------------------------------------------------------------------------------------

    void onPermissionRequest(final int sourceNode, final PermissionRequestFlyweight request)
    {
        counters.permissionRequestsReceived.increment();
        kept = false;
        answerRequest(sourceNode, request);
        if (!kept)
        {
            // Answered (or dropped for good): a copy kept from an earlier ask is not needed any more.
            deferred.forget(sourceNode, request.operationId());
        }
    }

    /** No answer for now: kept (a retry refreshes the row where it is) for the receiver's next Receive. */
    private void keep(final int sourceNode, final int receiverIndex, final PermissionRequestFlyweight request)
    {
        deferred.keep(sourceNode, receiverIndex, request, clock.time());
        kept = true;
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
        if (length < 0 || length > maxMessageBytes || senderPid < 1 ||
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
            keep(sourceNode, index, request);
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
            keep(sourceNode, index, request);
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
                keep(sourceNode, index, request);
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
            receives.completeReceive(slot, match, Doorbell.DONE);
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
                receives.deliver(t, match.map, 0, data, dataIndex);
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
            receives.completeReceive(slot, match, Doorbell.DONE);
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
        return ProcessSlot.holding(slots, index, incarnation);
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
}
