package org.qnix.firmware;

import org.agrona.collections.IntArrayQueue;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.PermissionReplyFlyweight;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ShortFlow;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.VniContext;
import org.qnix.abi.WireMessageType;

/**
 * The Scheduling Queues and the double-level round robin of TX (thesis 3.5, TX steps 1-4 and 7): the
 * first level over the processes, the second over each process's pending sends ({@link ProcessSlot}).
 * Each {@link #doWork()} injects at most one data packet: that of the first send with permission of the
 * next process that has one; sends still waiting ask again ({@link PermissionRequests}, thesis 3.2,
 * Reliability). It also takes Send and Send_Short from the {@link CommandQueueReader} (thesis
 * 3.5.2, Send steps 1-3), the Permission_Reply that grants them (3.5.1), and owns the pool of
 * Scheduling Queue entries Broadcast and Multicast destinations use ({@link CastSender}).
 *
 * <p>With {@link ShortFlow#EAGER} (thesis 3.7), a Send_Short and each destination of a short cast go
 * at once as one Eager_Short carrying the data; the operation stays in its Scheduling Queue, asking
 * nothing, until the Eager_Short_Reply completes it or sends it down the permission path.
 *
 * <pre>{@code
 * scheduler.startSend(slot, slot.sends[context], ProcessCommand.SEND);  // asks for permission
 * scheduler.onPermissionReply(reply);                                    // grants it
 * scheduler.doWork();                                                    // one packet
 * scheduler.startSend(slot, slot.sends[other], ProcessCommand.SEND_SHORT);  // Eager_Short, with its data
 * scheduler.onEagerShortReply(reply);                                    // Send Doorbell, or ask permission
 * }</pre>
 *
 * <p>What a send asks the receiving NIC, the Permission_Request, its retries and the Eager_Short, is
 * written by {@link PermissionRequests}; an Eager_Short's reply and fallback stay here, as they run
 * through the same Scheduling Queue entries and permission state as a Send's.
 */
final class SendScheduler
{
    static final int OPERATION_SLOT_BITS = 20;
    /** Scheduling Queue entries for Broadcast and Multicast destinations this NIC can have at once. */
    static final int CAST_SENDS = 4096;
    private static final int PACKET_SENT = 0;
    private static final int FIFO_FULL = 1;
    private static final int SEND_ENDED = 2;

    private final int torusWidth;
    private final int pageSize;
    private final AtomicBuffer sdram;
    private final VniContext context = new VniContext();
    private final AtomicBuffer host;
    private final int selfPacked;
    private final Wire wire;
    private final NicCounters counters;
    private final EpochClock clock;
    private final NameTable names;
    private final ContextReader contexts;
    private final ProcessSlot[] slots;
    private final ActiveProcesses activeProcesses;
    private final SystemMessageSender messages;
    private final Doorbells doorbells;
    private final SendOperation[] sendsBySlot;
    private final IntArrayQueue freeCastSends = new IntArrayQueue(CAST_SENDS, -1);
    private final PacketHeader dataHeader = new PacketHeader();
    private final boolean eagerShorts;
    private final PermissionRequests requests;
    private CastSender casts;
    private final ViaEngine via;
    private long operationSequence;
    private int txCursor;
    /** The process whose sends {@link #doWork()} is looking at: the one {@link #passTurn()} moves past. */
    private int turn;

    /** @param via VIA processes take their turn in the first level of the round robin. */
    SendScheduler(final FirmwareContext ctx, final ViaEngine via)
    {
        this.via = via;
        final ClusterParameters params = ctx.parameters();
        this.torusWidth = params.torusWidth();
        this.pageSize = params.pageSize();
        this.sdram = ctx.sdram();
        this.host = ctx.hostMemory();
        this.selfPacked = ctx.self().packed();
        this.wire = ctx.wire();
        this.counters = ctx.counters();
        this.clock = ctx.cachedClock();
        this.names = ctx.nameTable();
        this.contexts = ctx.contextReader();
        this.slots = ctx.processSlots();
        this.activeProcesses = ctx.activeProcesses();
        this.messages = ctx.systemMessages();
        this.doorbells = ctx.doorbells();
        this.eagerShorts = ShortFlow.EAGER == params.shortFlow();
        this.requests = new PermissionRequests(ctx);
        final int contextCount = params.contextsPerProcess();
        if ((long)params.maxProcessesPerNic() * contextCount + CAST_SENDS > 1 << OPERATION_SLOT_BITS)
        {
            throw new IllegalArgumentException("P x M = " + params.maxProcessesPerNic() * contextCount +
                " send contexts per NIC and " + CAST_SENDS + " broadcast sends exceed " + (1 << OPERATION_SLOT_BITS));
        }
        final int firstCastSendSlot = params.maxProcessesPerNic() * contextCount;
        sendsBySlot = new SendOperation[firstCastSendSlot + CAST_SENDS];
        for (int i = 0; i < CAST_SENDS; i++)
        {
            freeCastSends.addInt(firstCastSendSlot + i);
        }
    }

    /** Wired after construction: casts and the scheduler each need the other. */
    void castSender(final CastSender casts)
    {
        this.casts = casts;
    }

    /** A Process Table entry used for the first time: its Send Contexts' entries become reachable by id. */
    void adopt(final ProcessSlot slot)
    {
        for (final SendOperation send : slot.sends)
        {
            sendsBySlot[send.slot] = send;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Send and Send_Short (thesis 3.5.2, steps 1-3)
    // ---------------------------------------------------------------------------------------------

    void startSend(final ProcessSlot slot, final SendOperation op, final int command)
    {
        final int context = contexts.sendContextAddress(slot.index, op.context);
        final VniContext fields = this.context.wrap(sdram, context);
        op.describe(command, fields.doorbellFlag(), fields.peerAi(), fields.peerPi(), fields.tag());
        final int check =
            contexts.readMessage(slot.index, slot.nicPid, op.context, ProcessCommand.SEND_SHORT == command, op.buffer);
        if (0 != check)
        {
            completeSend(slot, op, check);
            return;
        }
        op.message(op.buffer.length, op.buffer.firstLength,
            MessageGeometry.packets(op.buffer.length, op.buffer.firstLength, pageSize));

        // Step 2.4: the receiver's NIC and PID from the Name Table.
        final NameTable.Entry receiver = names.lookup(op.receiverAi, op.receiverPi);
        if (null == receiver)
        {
            completeSend(slot, op, Doorbell.PEER_GONE);
            return;
        }
        op.cast = null;
        schedule(slot, op, receiver.node.index(torusWidth), receiver.nicPid, receiver.incarnation);
    }

    /**
     * Step 3: into the tail of the process's Scheduling Queue, and a Permission_Request out, or for a
     * short message in eager mode the Eager_Short itself.
     */
    void schedule(final ProcessSlot slot, final SendOperation op, final int destinationNode, final int destinationPid,
        final int destinationIncarnation)
    {
        op.schedule(destinationNode, destinationPid, destinationIncarnation,
            (++operationSequence << OPERATION_SLOT_BITS) | op.slot);
        slot.enqueue(op);
        if (eagerShorts && ProcessCommand.SEND_SHORT == op.command)
        {
            requests.sendEager(slot, op);
        }
        else
        {
            requests.ask(slot, op);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // TX steps 1-4 and 7: one data packet, double-level round robin
    // ---------------------------------------------------------------------------------------------

    /** @return the packets and repeated requests sent. */
    int doWork()
    {
        if (!wire.outboxEmpty())
        {
            // Data never overtakes a waiting system message (a repeated request must not arrive
            // after the data it asked for).
            return 0;
        }
        final long now = clock.time();
        int work = 0;
        final int processes = slots.length;
        final int count = activeProcesses.count();
        for (int n = 0, p = activeProcesses.positionFrom(txCursor); n < count; n++, p = activeProcesses.next(p))
        {
            final int index = activeProcesses.entryAt(p);
            final ProcessSlot slot = slots[index];
            turn = index;
            if (slot.via)
            {
                // Issue 14: a VIA process is a peer of the QNIX processes here; its connected VIs
                // with sends are its second level.
                final int sent = via.sendStep(slot);
                if (ViaEngine.NOTHING == sent)
                {
                    continue;
                }
                if (ViaEngine.FIFO_FULL == sent)
                {
                    return work;
                }
                txCursor = ProcessSlot.nextInRoundRobin(index, processes);
                return work + 1;
            }
            if (!slot.hasSends())
            {
                continue;
            }
            // Step 2: the first send with permission; the others ask again and go to the tail.
            for (int k = slot.sendCount(); k > 0; k--)
            {
                final SendOperation op = slot.firstSend();
                if (!op.permitted)
                {
                    // An Eager_Short always gets its reply: nothing to ask again meanwhile.
                    if (!op.eager && requests.askAgainIfDue(slot, op, now))
                    {
                        work++;
                    }
                    slot.rotate();
                    continue;
                }
                final int sent = op.finished() ? PACKET_SENT : sendPacket(slot, op);
                if (FIFO_FULL == sent)
                {
                    // The destination FIFO is full: leave the packet where it is, go on to RX.
                    return work;
                }
                // Step 7, and the first level of the round robin: this process goes to the tail.
                txCursor = ProcessSlot.nextInRoundRobin(index, processes);
                if (SEND_ENDED == sent)
                {
                    return work + 1;
                }
                if (op.finished())
                {
                    slot.dequeue(op);
                    completeSend(slot, op, Doorbell.DONE);
                }
                else
                {
                    slot.rotate();
                }
                return work + 1;
            }
        }
        return work;
    }

    /**
     * After a TX step threw: the next step starts with the process after the one it was serving, so that a
     * send that throws every time holds up only its own process's sends, not every process's behind it.
     */
    void passTurn()
    {
        txCursor = ProcessSlot.nextInRoundRobin(turn, slots.length);
    }

    /**
     * Steps 3-4: header and payload straight into the destination FIFO.
     *
     * <p>A packet read from host memory is the emulated DMA read, and its page is checked against the
     * Protection Table first, in the duty cycle that copies it (DESIGN.md 8, item 10): the process may
     * have unlocked or freed the buffer since the command was read, and the driver may have given the
     * page to another process. Such a send ends {@link Doorbell#PROTECTION} and its receiver is told
     * with Transfer_Abort. The driver gives a taken page to nobody before this duty cycle has ended
     * ({@link ControlProgramLayout#DUTY_CYCLES_OFFSET}), so a check that passed covers the copy.
     *
     * @return {@link #PACKET_SENT}, {@link #FIFO_FULL} (nothing done), or {@link #SEND_ENDED} (the send
     * was dequeued and completed with an error).
     */
    private int sendPacket(final ProcessSlot slot, final SendOperation op)
    {
        final int packet = op.nextPacket;
        final int length = MessageGeometry.packetLength(packet, op.length, op.firstPacketLength, pageSize);
        final int offset = MessageGeometry.offset(packet, op.firstPacketLength, pageSize);
        final boolean fromHost = op.readsHostMemory();
        final long hostAddress = fromHost ? op.hostAddress(offset, pageSize) : -1;
        if (fromHost && !contexts.isLockedBy(slot.nicPid, hostAddress))
        {
            abortSend(slot, op, Doorbell.PROTECTION);
            return SEND_ENDED;
        }
        final int claimed = wire.claim(op.destinationNode, WireMessageType.DATA_PACKET, PacketHeader.LENGTH + length);
        if (claimed < 0)
        {
            counters.packetsDeferred.increment();
            return FIFO_FULL;
        }
        final AtomicBuffer fifo = wire.fifoBuffer(op.destinationNode);
        op.writeHeader(dataHeader.wrap(fifo, claimed), NicCoordinates.packedOfIndex(op.destinationNode, torusWidth),
            selfPacked, slot.nicPid, length);
        final int payload = claimed + PacketHeader.LENGTH;
        if (fromHost)
        {
            // The emulated DMA read from the sender's page, checked above. A Broadcast or Multicast
            // without room for its copy reads the sender's pages for each destination, as a Send does.
            fifo.putBytes(payload, host, (int)hostAddress, length);
            counters.hostBytesRead.getAndAddRelease(length);
        }
        else if (null != op.cast)
        {
            // Broadcast and Multicast: every destination reads the one copy in NIC memory.
            fifo.putBytes(payload, sdram, (int)(op.cast.dataAddress + offset), length);
        }
        else
        {
            // Send_Short, programmed I/O: the data is in the Context Region.
            fifo.putBytes(payload, sdram, contexts.sendRegionAddress(slot.index, op.context), length);
        }
        wire.commit(op.destinationNode, claimed);
        op.nextPacket = packet + 1;
        counters.dataPacketsSent.increment();
        counters.packetsSent.increment();
        counters.dataBytesSent.getAndAddRelease(length);
        return PACKET_SENT;
    }

    /**
     * Ends a granted send before its last packet: the receiving NIC is told with Transfer_Abort (after
     * the packets already sent, since one NIC's packets stay in order) so that its receive does not
     * wait for the rest.
     */
    private void abortSend(final ProcessSlot slot, final SendOperation op, final int status)
    {
        slot.dequeue(op);
        counters.sendsAborted.increment();
        op.writeAbort(messages.transferAbort(), slot.nicPid, status);
        messages.sendTo(op.destinationNode, SystemMessage.TRANSFER_ABORT_LENGTH);
        completeSend(slot, op, status);
    }

    /** TX step 7: the Send Doorbell, or for a cast's destination the cast's counter. */
    private void completeSend(final ProcessSlot slot, final SendOperation op, final int status)
    {
        op.end();
        if (null != op.cast)
        {
            casts.destinationDone(slot, op, status);
            return;
        }
        if (Doorbell.DONE == status)
        {
            counters.sendsCompleted.increment();
        }
        else
        {
            counters.errorCompletions.increment();
        }
        doorbells.ring(slot.sendDoorbells, op.context,
            Doorbell.DONE == status && !op.doorbellFlag ? Doorbell.FREE : status);
    }

    // ---------------------------------------------------------------------------------------------
    // Permission_Reply (thesis 3.5.1)
    // ---------------------------------------------------------------------------------------------

    /** @return the send whose Scheduling Queue entry an operation id names (its low bits), or null. */
    private SendOperation operation(final long operationId)
    {
        final int slotIndex = (int)(operationId & ((1 << OPERATION_SLOT_BITS) - 1));
        return slotIndex < sendsBySlot.length ? sendsBySlot[slotIndex] : null;
    }

    void onPermissionReply(final PermissionReplyFlyweight reply)
    {
        final long operationId = reply.operationId();
        final int status = reply.status();
        final int handle = reply.handle();
        final SendOperation op = operation(operationId);
        if (null == op || !op.awaitsPermission(operationId))
        {
            // Thesis 3.2: a permission that arrives more than once is discarded.
            counters.permissionDuplicates.increment();
            return;
        }
        final ProcessSlot slot = slots[op.processIndex];
        if (Doorbell.DONE != status)
        {
            slot.dequeue(op);
            completeSend(slot, op, Doorbell.isError(status) ? status : Doorbell.BAD_CONTEXT);
            return;
        }
        if (handle < 0 || handle >= ClusterParameters.MAX_TRANSFER_TABLE_ENTRIES)
        {
            counters.systemMessagesRejected.increment();
            return;
        }
        op.grant(handle);
        // Send_Short does not wait for its turn (thesis 3.5.2), and an empty message has no packet.
        if (ProcessCommand.SEND_SHORT == op.command || op.finished())
        {
            if (op.finished() || PACKET_SENT == sendPacket(slot, op) && op.finished())
            {
                slot.dequeue(op);
                completeSend(slot, op, Doorbell.DONE);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Eager_Short_Reply (thesis 3.7)
    // ---------------------------------------------------------------------------------------------

    /**
     * The receiving NIC delivered or staged the Eager_Short ({@link Doorbell#DONE}): the Send Doorbell
     * rings now, when the receiver's NIC holds the message, as a permitted Send_Short's rings when its
     * packet is in the receiver's FIFO; a short cast's destination counts down. Or it could do neither
     * ({@link SystemMessage#STATUS_ASK_PERMISSION}): the operation, same id, asks for permission as in
     * thesis 3.5.1, its data still in the Context Region. Or the receiver is gone: the error completes it.
     */
    void onEagerShortReply(final PermissionReplyFlyweight reply)
    {
        final long operationId = reply.operationId();
        final int status = reply.status();
        final SendOperation op = operation(operationId);
        if (null == op || !op.awaitsEagerReply(operationId))
        {
            // Its sender was deleted meanwhile, or the send already completed Peer Gone.
            counters.permissionDuplicates.increment();
            return;
        }
        final ProcessSlot slot = slots[op.processIndex];
        if (SystemMessage.STATUS_ASK_PERMISSION == status)
        {
            op.eager = false;
            requests.ask(slot, op);
            return;
        }
        slot.dequeue(op);
        if (Doorbell.DONE == status)
        {
            op.nextPacket = op.packets;
            completeSend(slot, op, Doorbell.DONE);
        }
        else
        {
            completeSend(slot, op, Doorbell.isError(status) ? status : Doorbell.BAD_CONTEXT);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The pool of Scheduling Queue entries for Broadcast and Multicast destinations
    // ---------------------------------------------------------------------------------------------

    int freeCastEntries()
    {
        return freeCastSends.size();
    }

    SendOperation takeCastEntry()
    {
        final int slotIndex = freeCastSends.pollInt();
        if (null == sendsBySlot[slotIndex])
        {
            sendsBySlot[slotIndex] = new SendOperation(-1, -1, slotIndex, 0);
        }
        return sendsBySlot[slotIndex];
    }

    void releaseCastEntry(final SendOperation op)
    {
        op.cast = null;
        freeCastSends.addInt(op.slot);
    }

    // ---------------------------------------------------------------------------------------------
    // Processes leaving (Delete_Process; DESIGN.md 8, item 12)
    // ---------------------------------------------------------------------------------------------

    /** The process of {@code slot} is being deleted: its sends are dropped without doorbells. */
    void processDeleted(final ProcessSlot slot)
    {
        SendOperation send;
        while (null != (send = slot.firstSend()))
        {
            slot.dequeue(send);
            send.active = false;
            if (null != send.cast)
            {
                releaseCastEntry(send);
            }
        }
    }

    /** A process somewhere was deleted: the sends of {@code slot} to it complete with Peer Gone. */
    void peerDeleted(final ProcessSlot slot, final int nodeIndex, final int nicPid)
    {
        SendOperation send = slot.firstSend();
        while (null != send)
        {
            final SendOperation next = send.next;
            if (send.destinationNode == nodeIndex && send.destinationPid == nicPid)
            {
                slot.dequeue(send);
                completeSend(slot, send, Doorbell.PEER_GONE);
            }
            send = next;
        }
    }
}
