package org.qnix.firmware;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.IntArrayQueue;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.VniLayout;
import org.qnix.abi.WireMessageType;

/**
 * The user-message path of the NIC control program (thesis 3.5 and 3.5.2): reading process Command
 * Queues, the double-level round robin that injects one data packet per TX, the Permission_Request /
 * Permission_Reply flow control, staging in NIC managed memory, and delivery through Descriptor Maps
 * into receive buffers, ending with the doorbells the processes poll. A Broadcast or Multicast is
 * one copy of the data in NIC memory sent to each destination as a Send; Join_Group and Barrier are
 * handed to the {@link GroupOperations}.
 *
 * <p>Everything a process wrote (commands, contexts, page tables) and everything on the wire is
 * untrusted: a bad one completes its operation with an error doorbell or is counted and dropped. The
 * path from a command to a doorbell allocates nothing: operations, transfers and maps are made when a
 * Process Table entry is first used and reused after.
 */
final class MessageEngine
{
    /** How often a send still waiting for permission asks again (thesis 3.2, Reliability). */
    static final long PERMISSION_RETRY_MS = 1;
    static final int OPERATION_SLOT_BITS = 20;
    private static final int RECENT_OPERATIONS = 256;
    /** Scheduling Queue entries for Broadcast and Multicast destinations this NIC can have at once. */
    static final int CAST_SENDS = 4096;
    private static final int PACKET_SENT = 0;
    private static final int FIFO_FULL = 1;
    private static final int SEND_ENDED = 2;

    private final ClusterParameters params;
    private final NicSdramLayout layout;
    private final VniLayout vni;
    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    private final NicCoordinates self;
    private final int selfIndex;
    private final Wire wire;
    private final NicCounters counters;
    private final EpochClock clock;
    private final NameTable names;
    private final ContextReader contexts;
    private final StagingMemory staging;
    private final ProcessSlot[] slots;
    private final SendOperation[] sendsBySlot;
    private final IntArrayQueue freeCastSends = new IntArrayQueue(CAST_SENDS, -1);
    private final int firstCastSendSlot;
    private final GroupTable groups;
    private final GroupOperations groupOperations;
    private final Doorbells doorbells;
    /** Broadcasts and Multicasts waiting for Scheduling Queue entries, oldest first. */
    private CastOperation castsWaitingHead;
    private CastOperation castsWaitingTail;
    /** Scratch: the receiver names following a Multicast command. */
    private final int[] multicastAi;
    private final int[] multicastPi;
    /** Transfers this NIC can have granted at once (ClusterParameters#transferTableEntries). */
    private final Transfer[] transfers;
    private final IntArrayQueue freeHandles;
    /** Staged bytes one receiving process may hold: a quarter of managed memory, at least one message. */
    private final long stagingBytesPerProcess;
    private final Long2ObjectHashMap<Transfer>[] liveTransfers;
    private final RecentOperations[] recentTransfers;
    private final int pageSize;
    private final int contextCount;
    private final int commandEntries;
    private final SystemMessageSender messages;
    private final PacketHeader dataHeader = new PacketHeader();
    private long operationSequence;
    private int txCursor;
    private int commandCursor;

    @SuppressWarnings("unchecked")
    /**
     * @param slots the working state of the Process Table entries, filled here as entries are first
     *              used and shared with {@code groupOperations}.
     */
    MessageEngine(final NodeImage image, final Wire wire, final SystemMessageSender messages,
        final NicCounters counters, final EpochClock clock, final NameTable names, final GroupTable groups,
        final ProcessSlot[] slots, final GroupOperations groupOperations, final Doorbells doorbells)
    {
        this.params = image.parameters();
        this.layout = image.sdramLayout();
        this.vni = layout.vni();
        this.sdram = image.sdram();
        this.host = image.hostMemory();
        this.self = image.node();
        this.selfIndex = self.index(params.torusWidth());
        this.wire = wire;
        this.messages = messages;
        this.counters = counters;
        this.clock = clock;
        this.names = names;
        this.groups = groups;
        this.groupOperations = groupOperations;
        this.doorbells = doorbells;
        this.contexts = new ContextReader(sdram, layout);
        this.pageSize = params.pageSize();
        this.contextCount = params.contextsPerProcess();
        this.commandEntries = params.commandQueueEntries();
        this.staging = new StagingMemory(
            layout.managedMemoryOffset(), layout.managedMemoryLength(), pageSize, counters.stagingBytesInUse);
        if ((long)params.maxProcessesPerNic() * contextCount + CAST_SENDS > 1 << OPERATION_SLOT_BITS)
        {
            throw new IllegalArgumentException("P x M = " + params.maxProcessesPerNic() * contextCount +
                " send contexts per NIC and " + CAST_SENDS + " broadcast sends exceed " + (1 << OPERATION_SLOT_BITS));
        }
        if (slots.length != params.maxProcessesPerNic())
        {
            throw new IllegalArgumentException(slots.length + " process slots for P = " + params.maxProcessesPerNic());
        }
        this.slots = slots;
        firstCastSendSlot = params.maxProcessesPerNic() * contextCount;
        sendsBySlot = new SendOperation[firstCastSendSlot + CAST_SENDS];
        for (int i = 0; i < CAST_SENDS; i++)
        {
            freeCastSends.addInt(firstCastSendSlot + i);
        }
        final int maxReceivers = CommandQueueLayout.maxMulticastReceivers(params);
        multicastAi = new int[maxReceivers];
        multicastPi = new int[maxReceivers];
        final int transferHandles = params.transferTableEntries();
        transfers = new Transfer[transferHandles];
        freeHandles = new IntArrayQueue(transferHandles, -1);
        stagingBytesPerProcess = Math.max(params.maxMessageBytes(), layout.managedMemoryLength() / 4);
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

    // ---------------------------------------------------------------------------------------------
    // Process Table entries coming and going (New_Process, Delete_Process)
    // ---------------------------------------------------------------------------------------------

    /** A process now lives in Process Table entry {@code index}: its queues start empty. */
    void activate(final int index, final int ai, final int pi)
    {
        ProcessSlot slot = slots[index];
        if (null == slot)
        {
            slot = new ProcessSlot(index, contextCount, params.descriptorsPerRegion(), index * contextCount);
            for (int c = 0; c < contextCount; c++)
            {
                sendsBySlot[slot.sends[c].slot] = slot.sends[c];
            }
            slots[index] = slot;
        }
        final int entry = (int)layout.processEntryOffset(index);
        slot.aiName = ai;
        slot.piName = pi;
        // Written by the driver at registration step 5, before it posted New_Process.
        slot.sendDoorbells = sdram.getLong(entry + ProcessTableLayout.SEND_DOORBELLS_OFFSET);
        slot.receiveDoorbells = sdram.getLong(entry + ProcessTableLayout.RECEIVE_DOORBELLS_OFFSET);
        slot.commandQueueHeadAddress = sdram.getLong(entry + ProcessTableLayout.PROCESS_CQ_HEAD_OFFSET);
        slot.commandHead = 0;
        slot.commandHeadPublished = 0;
        slot.commandsSinceHeadUpdate = 0;
        slot.barrierSequences.clear();
        slot.active = true;
    }

    /**
     * The process of entry {@code index} is being deleted (DESIGN.md 8, item 12): its operations are
     * dropped without doorbells (its Host Process Structures page goes back to the driver) and its
     * staging space is freed.
     */
    void deactivate(final int index)
    {
        final ProcessSlot slot = slots[index];
        if (null == slot || !slot.active)
        {
            return;
        }
        slot.active = false;
        SendOperation send;
        while (null != (send = slot.firstSend()))
        {
            slot.dequeue(send);
            send.active = false;
            if (null != send.cast)
            {
                releaseCastSend(send);
            }
        }
        for (final CastOperation cast : slot.casts)
        {
            if (cast.active)
            {
                if (cast.waitingToStart)
                {
                    unwaitCast(cast);
                }
                freeCopy(cast);
                cast.active = false;
            }
        }
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
                    release(op.transfer, false);
                }
                op.transfer = null;
                op.active = false;
            }
        }
        Transfer staged;
        while (null != (staged = slot.firstStaged()))
        {
            slot.unstage(staged);
            release(staged, false);
        }
    }

    /**
     * A process somewhere was deleted (DESIGN.md 8, item 12): sends to it and receives waiting on it
     * complete with Peer Gone; its unfinished staged messages are freed. Messages it finished sending
     * stay deliverable.
     */
    void peerDeleted(final int nodeIndex, final int nicPid, final int ai, final int pi)
    {
        for (final ProcessSlot slot : slots)
        {
            if (null == slot || !slot.active)
            {
                continue;
            }
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
                    release(t, false);
                }
                t = next;
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // TX steps 5-6: one command from the next process Command Queue
    // ---------------------------------------------------------------------------------------------

    int readCommand()
    {
        final int processes = slots.length;
        for (int n = 0; n < processes; n++)
        {
            final int index = (commandCursor + n) % processes;
            final ProcessSlot slot = slots[index];
            if (null == slot || !slot.active)
            {
                continue;
            }
            final int entry = (int)(layout.vniOffset(index) + vni.commandOffset(slot.commandHead));
            // Writer: the owner process, which publishes the Command field last.
            final int command = sdram.getIntVolatile(entry + CommandQueueLayout.COMMAND_OFFSET);
            if (ProcessCommand.NONE == command)
            {
                if (slot.commandHeadPublished != slot.commandHead)
                {
                    publishCommandHead(slot);
                }
                continue;
            }
            // Thesis 3.5, de-registration step 1: an entry whose PID the driver cleared is not served.
            if (0 == sdram.getIntVolatile((int)layout.processEntryOffset(index) + ProcessTableLayout.PID_OFFSET))
            {
                continue;
            }
            final int context = sdram.getInt(entry + CommandQueueLayout.CONTEXT_OFFSET);
            final int group = sdram.getInt(entry + CommandQueueLayout.GROUP_OFFSET);
            final int size = sdram.getInt(entry + CommandQueueLayout.SIZE_OFFSET);
            consumeCommandEntry(slot, entry);
            final boolean multicast = ProcessCommand.MULTICAST == command || ProcessCommand.MULTICAST_SHORT == command;
            final int sizeOrReceivers = multicast ? readMulticastNames(slot, index, size) : size;
            commandCursor = (index + 1) % processes;
            counters.commands.increment();
            execute(slot, command, context, group, sizeOrReceivers);
            return 1;
        }
        return 0;
    }

    private void consumeCommandEntry(final ProcessSlot slot, final int entry)
    {
        // Reader: the NIC itself, next time round the queue: an entry with Command 0 is empty.
        sdram.putIntRelease(entry + CommandQueueLayout.COMMAND_OFFSET, ProcessCommand.NONE);
        slot.commandHead = (slot.commandHead + 1) % commandEntries;
        if (++slot.commandsSinceHeadUpdate >= NicControlProgram.HEAD_UPDATE_INTERVAL)
        {
            publishCommandHead(slot);
        }
    }

    /**
     * Reads the receiver names that follow a Multicast command, two per entry (DESIGN.md 8, item 8),
     * into the scratch arrays. The command's release published them.
     *
     * @return the number of names, or -1 if {@code size} is out of range; then the entries the largest
     * Multicast could use are consumed, so that none of them is taken for a command.
     */
    private int readMulticastNames(final ProcessSlot slot, final int index, final int size)
    {
        final boolean valid = size >= 1 && size <= multicastAi.length;
        final int entries = CommandQueueLayout.namesEntries(valid ? size : multicastAi.length);
        for (int e = 0; e < entries; e++)
        {
            final int entry = (int)(layout.vniOffset(index) + vni.commandOffset(slot.commandHead));
            for (int n = 0; n < CommandQueueLayout.NAMES_PER_ENTRY; n++)
            {
                final int name = e * CommandQueueLayout.NAMES_PER_ENTRY + n;
                if (name < size)
                {
                    multicastAi[name] = sdram.getInt(entry + n * CommandQueueLayout.NAME_LENGTH);
                    multicastPi[name] = sdram.getInt(entry + n * CommandQueueLayout.NAME_LENGTH + Integer.BYTES);
                }
            }
            consumeCommandEntry(slot, entry);
        }
        return valid ? size : -1;
    }

    private void publishCommandHead(final ProcessSlot slot)
    {
        // Reader: the owner process, checking for room in its Command Queue (thesis 3.3.2).
        host.putIntRelease((int)slot.commandQueueHeadAddress, slot.commandHead);
        slot.commandHeadPublished = slot.commandHead;
        slot.commandsSinceHeadUpdate = 0;
    }

    /**
     * @param group the command's Group field.
     * @param size  the command's Size field; for a Multicast, the names read into the scratch arrays, or
     *              -1 if its Size was out of range.
     */
    private void execute(final ProcessSlot slot, final int command, final int context, final int group,
        final int size)
    {
        if (context < 0 || context >= contextCount)
        {
            // No doorbell belongs to a context that does not exist.
            counters.commandsRejected.increment();
            return;
        }
        if (ProcessCommand.RECEIVE == command)
        {
            postReceive(slot, slot.receives[context]);
            return;
        }
        if (slot.sendContextBusy(context))
        {
            // The context is still in use by an earlier operation, which keeps its doorbell.
            counters.commandsRejected.increment();
            return;
        }
        switch (command)
        {
            case ProcessCommand.SEND:
            case ProcessCommand.SEND_SHORT:
                startSend(slot, slot.sends[context], command);
                break;

            case ProcessCommand.BROADCAST:
            case ProcessCommand.BROADCAST_SHORT:
            case ProcessCommand.MULTICAST:
            case ProcessCommand.MULTICAST_SHORT:
                startCast(slot, slot.casts[context], command, group, size);
                break;

            case ProcessCommand.JOIN_GROUP:
                groupOperations.joinGroup(slot, context, group, size);
                break;

            case ProcessCommand.BARRIER:
                groupOperations.barrier(slot, context, group, size);
                break;

            default:
                counters.commandsRejected.increment();
                counters.errorCompletions.increment();
                doorbells.ring(slot.sendDoorbells, context, Doorbell.BAD_COMMAND);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Send and Send_Short (thesis 3.5.2, steps 1-3)
    // ---------------------------------------------------------------------------------------------

    private void startSend(final ProcessSlot slot, final SendOperation op, final int command)
    {
        final int context = contexts.sendContextAddress(slot.index, op.context);
        op.command = command;
        op.doorbellFlag = 0 != sdram.getInt(context + ContextLayout.DOORBELL_FLAG_OFFSET);
        op.receiverAi = sdram.getInt(context + ContextLayout.PEER_AI_OFFSET);
        op.receiverPi = sdram.getInt(context + ContextLayout.PEER_PI_OFFSET);
        op.tag = sdram.getInt(context + ContextLayout.TAG_OFFSET);
        final int check =
            contexts.readMessage(slot.index, slot.nicPid, op.context, ProcessCommand.SEND_SHORT == command, op.buffer);
        if (0 != check)
        {
            completeSend(slot, op, check);
            return;
        }
        op.length = op.buffer.length;
        op.firstPacketLength = op.buffer.firstLength;
        op.packets = MessageGeometry.packets(op.length, op.firstPacketLength, pageSize);

        // Step 2.4: the receiver's NIC and PID from the Name Table.
        final NameTable.Entry receiver = names.lookup(op.receiverAi, op.receiverPi);
        if (null == receiver)
        {
            completeSend(slot, op, Doorbell.PEER_GONE);
            return;
        }
        op.destinationNode = receiver.node.index(params.torusWidth());
        op.destinationPid = receiver.nicPid;
        op.nextPacket = 0;
        op.permitted = false;
        op.transferHandle = -1;
        op.operationId = (++operationSequence << OPERATION_SLOT_BITS) | op.slot;
        op.cast = null;
        op.active = true;

        // Step 3.
        slot.enqueue(op);
        requestPermission(slot, op);
    }

    private void requestPermission(final ProcessSlot slot, final SendOperation op)
    {
        op.lastRequestMs = clock.time();
        messages.begin(SystemMessage.PERMISSION_REQUEST)
            .putInt(SystemMessage.REQUEST_RECEIVER_PID_OFFSET, op.destinationPid)
            .putInt(SystemMessage.REQUEST_SENDER_PID_OFFSET, slot.nicPid)
            .putInt(SystemMessage.REQUEST_TAG_OFFSET, op.tag)
            .putInt(SystemMessage.REQUEST_MESSAGE_LENGTH_OFFSET, op.length)
            .putInt(SystemMessage.REQUEST_FIRST_PACKET_LENGTH_OFFSET, op.firstPacketLength)
            .putInt(SystemMessage.REQUEST_PACKETS_OFFSET, op.packets)
            .putLong(SystemMessage.REQUEST_OPERATION_OFFSET, op.operationId)
            .putInt(SystemMessage.REQUEST_SENDER_AI_OFFSET, slot.aiName)
            .putInt(SystemMessage.REQUEST_SENDER_PI_OFFSET, slot.piName)
            .sendTo(op.destinationNode, SystemMessage.PERMISSION_REQUEST_LENGTH);
        counters.permissionRequestsSent.increment();
    }

    // ---------------------------------------------------------------------------------------------
    // TX steps 1-4 and 7: one data packet, double-level round robin
    // ---------------------------------------------------------------------------------------------

    int injectPacket()
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
        for (int n = 0; n < processes; n++)
        {
            final int index = (txCursor + n) % processes;
            final ProcessSlot slot = slots[index];
            if (null == slot || !slot.active || !slot.hasSends())
            {
                continue;
            }
            // Step 2: the first send with permission; the others ask again and go to the tail.
            for (int k = slot.sendCount(); k > 0; k--)
            {
                final SendOperation op = slot.firstSend();
                if (!op.permitted)
                {
                    if (now - op.lastRequestMs >= PERMISSION_RETRY_MS)
                    {
                        requestPermission(slot, op);
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
                txCursor = (index + 1) % processes;
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
        final boolean fromHost = null == op.cast ? ProcessCommand.SEND_SHORT != op.command : op.cast.fromHost;
        final long hostAddress = !fromHost ? -1 :
            null == op.cast ? op.buffer.address(offset, pageSize) : op.cast.buffer.address(offset, pageSize);
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
        dataHeader.wrap(fifo, claimed)
            .destination(NicCoordinates.packedOfIndex(op.destinationNode, params.torusWidth()))
            .receiverPid(op.destinationPid)
            .source(self.packed())
            .senderPid(slot.nicPid)
            .contextTag(op.transferHandle)
            .packetLength(length)
            .counter(packet);
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
        messages.begin(SystemMessage.TRANSFER_ABORT)
            .putInt(SystemMessage.REPLY_RECEIVER_PID_OFFSET, op.destinationPid)
            .putInt(SystemMessage.REPLY_SENDER_PID_OFFSET, slot.nicPid)
            .putLong(SystemMessage.REPLY_OPERATION_OFFSET, op.operationId)
            .putInt(SystemMessage.REPLY_STATUS_OFFSET, status)
            .putInt(SystemMessage.REPLY_HANDLE_OFFSET, op.transferHandle)
            .sendTo(op.destinationNode, SystemMessage.TRANSFER_ABORT_LENGTH);
        completeSend(slot, op, status);
    }

    private void completeSend(final ProcessSlot slot, final SendOperation op, final int status)
    {
        op.active = false;
        op.permitted = false;
        if (null != op.cast)
        {
            castDestinationDone(slot, op, status);
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
    // Broadcast, Broadcast_Short, Multicast, Multicast_Short (thesis 3.5.2)
    // ---------------------------------------------------------------------------------------------

    /**
     * Reads the Send Context and resolves the destinations; nothing moves if either is bad. A Broadcast
     * goes to every member of the group except the sender, a Multicast to the names that followed it.
     *
     * @param receivers for a Multicast, the names in the scratch arrays, or -1 if the Size was bad.
     */
    private void startCast(final ProcessSlot slot, final CastOperation cast, final int command, final int group,
        final int receivers)
    {
        final int context = contexts.sendContextAddress(slot.index, cast.context);
        cast.command = command;
        cast.doorbellFlag = 0 != sdram.getInt(context + ContextLayout.DOORBELL_FLAG_OFFSET);
        cast.tag = sdram.getInt(context + ContextLayout.TAG_OFFSET);
        cast.status = Doorbell.DONE;
        cast.copyLength = 0;
        cast.waitingToStart = false;
        cast.clearDestinations();
        final int check = contexts.readMessage(slot.index, slot.nicPid, cast.context, cast.isShort(), cast.buffer);
        if (0 != check)
        {
            finishCast(slot, cast, check);
            return;
        }
        cast.length = cast.buffer.length;
        cast.firstPacketLength = cast.buffer.firstLength;
        cast.packets = MessageGeometry.packets(cast.length, cast.firstPacketLength, pageSize);
        // For the short forms step 1 is not executed: the data is already in NIC memory.
        cast.dataAddress = cast.isShort() ? contexts.sendRegionAddress(slot.index, cast.context) : 0;

        final int destinationsStatus = ProcessCommand.BROADCAST == command || ProcessCommand.BROADCAST_SHORT == command ?
            groupDestinations(slot, cast, group) : nameDestinations(cast, receivers);
        if (Doorbell.DONE != destinationsStatus)
        {
            finishCast(slot, cast, destinationsStatus);
            return;
        }
        if (cast.destinations > CAST_SENDS)
        {
            finishCast(slot, cast, Doorbell.NO_RESOURCES);
            return;
        }
        cast.active = true;
        if (null != castsWaitingHead || !tryStartCast(slot, cast))
        {
            waitCast(cast);
        }
    }

    /** Step 2 of Broadcast: every member of the group but the sender. @return Done or an error doorbell. */
    private int groupDestinations(final ProcessSlot slot, final CastOperation cast, final int group)
    {
        final GroupTable.Group entry = groups.lookup(group);
        if (null == entry)
        {
            return Doorbell.BAD_COMMAND;
        }
        if (entry.broken)
        {
            return Doorbell.PEER_GONE;
        }
        if (!entry.isComplete())
        {
            return Doorbell.BAD_COMMAND;
        }
        for (final GroupTable.Member member : entry.members)
        {
            if (member.name().ai() != slot.aiName || member.name().pi() != slot.piName)
            {
                cast.addDestination(member.node().index(params.torusWidth()), member.nicPid(), member.name().ai(),
                    member.name().pi());
            }
        }
        return Doorbell.DONE;
    }

    /** Multicast: the names that followed the command, through the Name Table as for a Send. */
    private int nameDestinations(final CastOperation cast, final int receivers)
    {
        if (receivers < 1)
        {
            return Doorbell.BAD_COMMAND;
        }
        for (int i = 0; i < receivers; i++)
        {
            final NameTable.Entry receiver = names.lookup(multicastAi[i], multicastPi[i]);
            if (null == receiver)
            {
                return Doorbell.PEER_GONE;
            }
            cast.addDestination(receiver.node.index(params.torusWidth()), receiver.nicPid, multicastAi[i],
                multicastPi[i]);
        }
        return Doorbell.DONE;
    }

    /**
     * Steps 1 and 3-5 of Broadcast: the one DMA read of the data into managed memory, then a send from
     * that copy to every destination, each asking for permission like a Send. When managed memory
     * cannot hold the copy now, every destination reads the sender's pages itself, as a Send does:
     * waiting for the memory could wait for ever, since staging for the receives this very cast may
     * need takes from the same memory.
     *
     * @return false if Scheduling Queue entries are short; nothing was taken then.
     */
    private boolean tryStartCast(final ProcessSlot slot, final CastOperation cast)
    {
        if (freeCastSends.size() < cast.destinations)
        {
            return false;
        }
        cast.fromHost = false;
        if (!cast.isShort() && cast.length > 0 && cast.destinations > 0)
        {
            final long copy = staging.allocate(cast.length);
            if (copy < 0)
            {
                cast.fromHost = true;
            }
            else if (!copyToNic(slot, cast, copy))
            {
                staging.free(copy, cast.length);
                finishCast(slot, cast, Doorbell.PROTECTION);
                return true;
            }
            else
            {
                cast.dataAddress = copy;
                cast.copyLength = cast.length;
            }
        }
        cast.remaining = cast.destinations;
        if (0 == cast.destinations)
        {
            finishCast(slot, cast, Doorbell.DONE);
            return true;
        }
        for (int d = 0; d < cast.destinations; d++)
        {
            // A destination deleted while the cast waited (its Process Table entry may even hold
            // another process by now) gets nothing.
            final NameTable.Entry receiver = names.lookup(cast.destinationAi[d], cast.destinationPi[d]);
            if (null == receiver || receiver.nicPid != cast.destinationPid[d] ||
                receiver.node.index(params.torusWidth()) != cast.destinationNode[d])
            {
                cast.status = Doorbell.PEER_GONE;
                if (--cast.remaining == 0)
                {
                    finishCast(slot, cast, cast.status);
                }
                continue;
            }
            final SendOperation op = sendsBySlot[takeCastSend()];
            op.processIndex = slot.index;
            op.context = cast.context;
            op.cast = cast;
            op.command = cast.isShort() ? ProcessCommand.SEND_SHORT : ProcessCommand.SEND;
            op.doorbellFlag = cast.doorbellFlag;
            op.tag = cast.tag;
            op.length = cast.length;
            op.firstPacketLength = cast.firstPacketLength;
            op.packets = cast.packets;
            op.receiverAi = cast.destinationAi[d];
            op.receiverPi = cast.destinationPi[d];
            op.destinationNode = cast.destinationNode[d];
            op.destinationPid = cast.destinationPid[d];
            op.nextPacket = 0;
            op.permitted = false;
            op.transferHandle = -1;
            op.operationId = (++operationSequence << OPERATION_SLOT_BITS) | op.slot;
            op.active = true;
            slot.enqueue(op);
            requestPermission(slot, op);
        }
        return true;
    }

    /**
     * The emulated DMA read of the whole message from the sender's pages, checked again now (they may
     * have been unlocked while the cast waited), into managed memory at {@code copy}.
     */
    private boolean copyToNic(final ProcessSlot slot, final CastOperation cast, final long copy)
    {
        for (int packet = 0; packet < cast.packets; packet++)
        {
            final int offset = MessageGeometry.offset(packet, cast.firstPacketLength, pageSize);
            final long address = cast.buffer.address(offset, pageSize);
            if (!contexts.isLockedBy(slot.nicPid, address))
            {
                return false;
            }
        }
        for (int packet = 0; packet < cast.packets; packet++)
        {
            final int offset = MessageGeometry.offset(packet, cast.firstPacketLength, pageSize);
            final int length = MessageGeometry.packetLength(packet, cast.length, cast.firstPacketLength, pageSize);
            sdram.putBytes((int)(copy + offset), host, (int)cast.buffer.address(offset, pageSize), length);
        }
        counters.castCopies.increment();
        counters.hostBytesRead.getAndAddRelease(cast.length);
        return true;
    }

    private int takeCastSend()
    {
        final int slotIndex = freeCastSends.pollInt();
        if (null == sendsBySlot[slotIndex])
        {
            sendsBySlot[slotIndex] = new SendOperation(-1, -1, slotIndex, 0);
        }
        return slotIndex;
    }

    private void releaseCastSend(final SendOperation op)
    {
        op.cast = null;
        freeCastSends.addInt(op.slot);
    }

    /** One destination's send completed: the counter of the local copy goes down (Broadcast step 3). */
    private void castDestinationDone(final ProcessSlot slot, final SendOperation op, final int status)
    {
        final CastOperation cast = op.cast;
        releaseCastSend(op);
        if (Doorbell.DONE != status && Doorbell.DONE == cast.status)
        {
            cast.status = status;
        }
        if (--cast.remaining == 0)
        {
            finishCast(slot, cast, cast.status);
        }
    }

    private void finishCast(final ProcessSlot slot, final CastOperation cast, final int status)
    {
        freeCopy(cast);
        cast.active = false;
        if (Doorbell.DONE == status)
        {
            counters.castsCompleted.increment();
        }
        else
        {
            counters.errorCompletions.increment();
        }
        doorbells.ring(slot.sendDoorbells, cast.context,
            Doorbell.DONE == status && !cast.doorbellFlag ? Doorbell.FREE : status);
    }

    private void freeCopy(final CastOperation cast)
    {
        if (cast.copyLength > 0)
        {
            staging.free(cast.dataAddress, cast.copyLength);
            cast.copyLength = 0;
        }
    }

    /** Starts the casts that waited for Scheduling Queue entries, oldest first, as far as there are. */
    int startWaitingCasts()
    {
        int work = 0;
        CastOperation cast;
        while (null != (cast = castsWaitingHead))
        {
            final ProcessSlot slot = slots[cast.processIndex];
            if (!tryStartCast(slot, cast))
            {
                break;
            }
            unwaitCast(cast);
            work++;
        }
        return work;
    }

    private void waitCast(final CastOperation cast)
    {
        cast.waitingToStart = true;
        cast.nextWaiting = null;
        cast.previousWaiting = castsWaitingTail;
        if (null == castsWaitingTail)
        {
            castsWaitingHead = cast;
        }
        else
        {
            castsWaitingTail.nextWaiting = cast;
        }
        castsWaitingTail = cast;
    }

    private void unwaitCast(final CastOperation cast)
    {
        if (null == cast.previousWaiting)
        {
            castsWaitingHead = cast.nextWaiting;
        }
        else
        {
            cast.previousWaiting.nextWaiting = cast.nextWaiting;
        }
        if (null == cast.nextWaiting)
        {
            castsWaitingTail = cast.previousWaiting;
        }
        else
        {
            cast.nextWaiting.previousWaiting = cast.previousWaiting;
        }
        cast.previousWaiting = null;
        cast.nextWaiting = null;
        cast.waitingToStart = false;
    }

    // ---------------------------------------------------------------------------------------------
    // Receive (thesis 3.5.2, steps 1-7)
    // ---------------------------------------------------------------------------------------------

    private void postReceive(final ProcessSlot slot, final ReceiveOperation op)
    {
        if (op.active)
        {
            counters.commandsRejected.increment();
            return;
        }
        final int context = contexts.receiveContextAddress(slot.index, op.context);
        op.doorbellFlag = 0 != sdram.getInt(context + ContextLayout.DOORBELL_FLAG_OFFSET);
        op.senderAi = sdram.getInt(context + ContextLayout.PEER_AI_OFFSET);
        op.senderPi = sdram.getInt(context + ContextLayout.PEER_PI_OFFSET);
        op.tag = sdram.getInt(context + ContextLayout.TAG_OFFSET);
        op.transfer = null;
        final int capacity = contexts.length(context);
        if (capacity < 0 || (ContextLayout.ANY == op.senderAi) != (ContextLayout.ANY == op.senderPi))
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
    }

    /** DESIGN.md 8, item 4: staged packets go to the user buffer, the staging space is freed. */
    private void attachStaged(final ProcessSlot slot, final ReceiveOperation op, final Transfer t)
    {
        op.map.build(op.buffer, t.length, t.firstPacketLength, t.packets, pageSize);
        op.transfer = t;
        t.receive = op;
        for (int packet = 0; packet < t.packetsArrived; packet++)
        {
            final int source = (int)(t.stagingOffset + MessageGeometry.offset(packet, t.firstPacketLength, pageSize));
            deliver(t, op.map, packet, sdram, source);
        }
        if (t.stagingLength > 0)
        {
            staging.free(t.stagingOffset, t.stagingLength);
            t.stagingLength = 0;
        }
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
        int result = status;
        final Transfer t = op.transfer;
        if (null != t)
        {
            final int context = contexts.receiveContextAddress(slot.index, op.context);
            sdram.putInt(context + ContextLayout.SOURCE_AI_OFFSET, t.senderAi);
            sdram.putInt(context + ContextLayout.SOURCE_PI_OFFSET, t.senderPi);
            sdram.putInt(context + ContextLayout.SOURCE_TAG_OFFSET, t.tag);
            sdram.putLong(context + ContextLayout.COMPLETION_LENGTH_OFFSET, t.length);
            if (Doorbell.DONE == status && t.refused)
            {
                result = Doorbell.PROTECTION;
            }
            else if (Doorbell.DONE == status && t.length > op.buffer.length)
            {
                result = Doorbell.TRUNCATED;
            }
            release(t, Doorbell.DONE == status);
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
        doorbells.ring(slot.receiveDoorbells, op.context,
            Doorbell.DONE == result && !op.doorbellFlag ? Doorbell.FREE : result);
    }

    /** Frees a transfer's handle and staging space. */
    private void release(final Transfer t, final boolean delivered)
    {
        if (!t.active)
        {
            return;
        }
        if (t.stagingLength > 0)
        {
            staging.free(t.stagingOffset, t.stagingLength);
            t.stagingLength = 0;
        }
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

    // ---------------------------------------------------------------------------------------------
    // System messages: Permission_Request and Permission_Reply (thesis 3.5.1)
    // ---------------------------------------------------------------------------------------------

    void onPermissionRequest(final int sourceNode, final DirectBuffer buffer, final int payload)
    {
        counters.permissionRequestsReceived.increment();
        final int receiverPid = buffer.getInt(payload + SystemMessage.REQUEST_RECEIVER_PID_OFFSET);
        final int senderPid = buffer.getInt(payload + SystemMessage.REQUEST_SENDER_PID_OFFSET);
        final long operationId = buffer.getLong(payload + SystemMessage.REQUEST_OPERATION_OFFSET);
        final int length = buffer.getInt(payload + SystemMessage.REQUEST_MESSAGE_LENGTH_OFFSET);
        final int firstPacketLength = buffer.getInt(payload + SystemMessage.REQUEST_FIRST_PACKET_LENGTH_OFFSET);
        final int packets = buffer.getInt(payload + SystemMessage.REQUEST_PACKETS_OFFSET);

        final int index = ProcessTableLayout.index(receiverPid);
        final ProcessSlot slot = index >= 0 && index < slots.length ? slots[index] : null;
        if (null == slot || !slot.active)
        {
            reply(sourceNode, receiverPid, senderPid, operationId, Doorbell.PEER_GONE, 0);
            return;
        }
        final Transfer live = liveTransfers[sourceNode].get(operationId);
        if (null != live)
        {
            // DESIGN.md 8, item 2: answered again, never granted twice.
            counters.permissionDuplicates.increment();
            reply(sourceNode, receiverPid, senderPid, operationId, Doorbell.DONE, live.handle);
            return;
        }
        if (null != recentTransfers[sourceNode] && recentTransfers[sourceNode].contains(operationId))
        {
            counters.permissionDuplicates.increment();
            return;
        }
        if (length < 0 || length > params.maxMessageBytes() || senderPid < 1 ||
            packets != MessageGeometry.packets(length, firstPacketLength, pageSize))
        {
            counters.systemMessagesRejected.increment();
            reply(sourceNode, receiverPid, senderPid, operationId, Doorbell.BAD_CONTEXT, 0);
            return;
        }
        final int senderAi = buffer.getInt(payload + SystemMessage.REQUEST_SENDER_AI_OFFSET);
        final int senderPi = buffer.getInt(payload + SystemMessage.REQUEST_SENDER_PI_OFFSET);
        final int tag = buffer.getInt(payload + SystemMessage.REQUEST_TAG_OFFSET);
        ReceiveOperation match = null;
        for (ReceiveOperation op = slot.firstPosted(); null != op; op = op.next)
        {
            if (op.matches(senderAi, senderPi, tag))
            {
                match = op;
                break;
            }
        }
        // Whatever cannot be granted now gets no reply: the sender asks again every millisecond
        // until the receive is posted or room frees up (thesis 3.2, Reliability).
        if (null == match && (slot.stagedCount() >= ClusterParameters.STAGED_MESSAGES_PER_PROCESS ||
            slot.stagedBytes() + pageRounded(length) > stagingBytesPerProcess))
        {
            // Issue 17, item 3: a process that does not post its receives holds no more of the
            // NIC's staging and transfer table than its quota; traffic to the others keeps flowing.
            counters.requestsDeferredReceiverQuota.increment();
            return;
        }
        if (freeHandles.isEmpty())
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
                counters.requestsDeferredStagingFull.increment();
                return;
            }
        }

        final Transfer t = transfers[freeHandles.pollInt()];
        t.active = true;
        t.receiverIndex = index;
        t.sourceNode = sourceNode;
        t.senderPid = senderPid;
        t.operationId = operationId;
        t.senderAi = senderAi;
        t.senderPi = senderPi;
        t.tag = tag;
        t.length = length;
        t.firstPacketLength = firstPacketLength;
        t.packets = packets;
        t.packetsArrived = 0;
        t.refused = false;
        t.receive = null;
        t.stagingOffset = stagingAddress;
        t.stagingLength = null == match ? length : 0;
        liveTransfers[sourceNode].put(operationId, t);

        if (null != match)
        {
            // Steps 1-3: the Descriptor Map of the posted receive.
            slot.unpost(match);
            match.map.build(match.buffer, length, firstPacketLength, packets, pageSize);
            match.transfer = t;
            t.receive = match;
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

    private long pageRounded(final int length)
    {
        return ((long)length + pageSize - 1) / pageSize * pageSize;
    }

    private void reply(final int node, final int receiverPid, final int senderPid, final long operationId,
        final int status, final int handle)
    {
        messages.begin(SystemMessage.PERMISSION_REPLY)
            .putInt(SystemMessage.REPLY_RECEIVER_PID_OFFSET, receiverPid)
            .putInt(SystemMessage.REPLY_SENDER_PID_OFFSET, senderPid)
            .putLong(SystemMessage.REPLY_OPERATION_OFFSET, operationId)
            .putInt(SystemMessage.REPLY_STATUS_OFFSET, status)
            .putInt(SystemMessage.REPLY_HANDLE_OFFSET, handle)
            .sendTo(node, SystemMessage.PERMISSION_REPLY_LENGTH);
    }

    void onPermissionReply(final DirectBuffer buffer, final int payload)
    {
        final long operationId = buffer.getLong(payload + SystemMessage.REPLY_OPERATION_OFFSET);
        final int status = buffer.getInt(payload + SystemMessage.REPLY_STATUS_OFFSET);
        final int handle = buffer.getInt(payload + SystemMessage.REPLY_HANDLE_OFFSET);
        final int slotIndex = (int)(operationId & ((1 << OPERATION_SLOT_BITS) - 1));
        final SendOperation op = slotIndex < sendsBySlot.length ? sendsBySlot[slotIndex] : null;
        if (null == op || !op.active || op.operationId != operationId || op.permitted)
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
        op.permitted = true;
        op.transferHandle = handle;
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

    /**
     * Transfer_Abort: the sending NIC ended a granted message part-way (see {@link #abortSend}). A
     * receive attached to it completes {@link Doorbell#SEND_ABORTED} with the prefix that arrived; a
     * staged one is dropped with its staging space.
     */
    void onTransferAbort(final int sourceNode, final DirectBuffer buffer, final int payload)
    {
        final long operationId = buffer.getLong(payload + SystemMessage.REPLY_OPERATION_OFFSET);
        final int senderPid = buffer.getInt(payload + SystemMessage.REPLY_SENDER_PID_OFFSET);
        final int receiverPid = buffer.getInt(payload + SystemMessage.REPLY_RECEIVER_PID_OFFSET);
        final int handle = buffer.getInt(payload + SystemMessage.REPLY_HANDLE_OFFSET);
        final Transfer t = liveTransfers[sourceNode].get(operationId);
        if (null == t || t.handle != handle || t.senderPid != senderPid ||
            ProcessTableLayout.nicPid(t.receiverIndex) != receiverPid)
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
            release(t, false);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // RX steps 1-2 and 4: a data packet
    // ---------------------------------------------------------------------------------------------

    void onDataPacket(final PacketHeader header, final MutableDirectBuffer buffer, final int index)
    {
        final int handle = header.contextTag();
        final Transfer t = handle < transfers.length ? transfers[handle] : null;
        final int sourceNode = NicCoordinates.indexOfPacked(header.source(), params.torusWidth());
        if (null == t || !t.active || t.sourceNode != sourceNode || t.senderPid != header.senderPid() ||
            ProcessTableLayout.nicPid(t.receiverIndex) != header.receiverPid())
        {
            // DESIGN.md 8, item 11: cannot happen while flow control is right; counted, never delivered.
            counters.packetsDropped.increment();
            return;
        }
        final int packet = header.counter();
        final int length = header.packetLength();
        if (packet != t.packetsArrived || packet >= t.packets ||
            length != MessageGeometry.packetLength(packet, t.length, t.firstPacketLength, pageSize))
        {
            counters.packetsDropped.increment();
            return;
        }
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
    // Inspection (tests, debugger)
    // ---------------------------------------------------------------------------------------------

    long stagingBytesInUse()
    {
        return staging.bytesInUse();
    }

    int activeTransfers()
    {
        return transfers.length - freeHandles.size();
    }

    ProcessSlot slot(final int index)
    {
        return slots[index];
    }
}
