package org.qnix.firmware;

import org.agrona.collections.IntArrayQueue;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaPacketHeader;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.WireMessageType;

/**
 * The VIA role's TX side and the state it shares with {@link ViaReceiver} (issue 14): posts taken from
 * a VIA process's Command Queue, checked and queued on their VI; one packet per step for the first
 * level of {@link SendScheduler}'s round robin, where a VIA process is a peer of the QNIX processes
 * and its connected VIs with sends are the second level, each VI strictly in posting order; the
 * completion of sends (Unreliable and Reliable Delivery when the last packet is in the peer's FIFO,
 * Reliable Reception on the peer's {@code OP_ACK}); and the Error state: Connected to Error by
 * compare-and-set, every posted descriptor completed DESC_FLUSHED (and later posts at once), an
 * asynchronous event, and {@code OP_ERROR} to the peer.
 *
 * <p>A VIA packet is the 16-byte {@link PacketHeader} (the VIA processes' NIC PIDs, Context Tag 0),
 * the {@link ViaPacketHeader} and at most a page of payload, claimed straight into the peer NIC's FIFO
 * as QNIX data is ({@link Wire#claim}); every page is checked through {@link ViaMemory} before the
 * claim, so a refused page leaves nothing half-written on the wire.
 *
 * <pre>{@code
 * via.post(slot, ProcessCommand.VIA_POST_SEND, vi, handle, offset);   // from CommandQueueReader
 * int sent = via.sendStep(slot);                                        // from SendScheduler
 * }</pre>
 */
final class ViaEngine
{
    /** {@link #sendStep}: the process had nothing to send. */
    static final int NOTHING = 0;
    /** {@link #sendStep}: a packet went, or a send completed with an error. */
    static final int PACKET_SENT = 1;
    /** {@link #sendStep}: the peer's FIFO is full; nothing was done. */
    static final int FIFO_FULL = -1;

    private static final int CONTROL_PACKET_LENGTH = PacketHeader.LENGTH + ViaPacketHeader.LENGTH;
    /**
     * Pieces one packet is gathered from: a packet carries at most a page, so each segment's part of it
     * lies on at most two pages, two pieces per segment.
     */
    private static final int MAX_CHUNKS = 2 * ViplDescriptor.MAX_SEGMENTS;

    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    private final ViaTablesLayout via;
    private final Wire wire;
    private final NicCounters counters;
    private final int torusWidth;
    private final int selfPacked;
    private final int pageSize;
    private final ViaMemory memory;
    private final ViaDescriptors descriptors;
    private final ViaCompletions completions;
    private final ViaViState[] states;
    private final IntArrayQueue[] ready;
    private final ViTableEntry entry = new ViTableEntry();
    private final ViaDescriptorCopy postCheck = new ViaDescriptorCopy();
    private final PacketHeader header = new PacketHeader();
    private final ViaPacketHeader viaHeader = new ViaPacketHeader();
    private final UnsafeBuffer controlPacket = new UnsafeBuffer(new byte[CONTROL_PACKET_LENGTH]);
    private final long[] chunkAddress = new long[MAX_CHUNKS];
    private final int[] chunkLength = new int[MAX_CHUNKS];

    ViaEngine(final FirmwareContext ctx)
    {
        this.sdram = ctx.sdram();
        this.host = ctx.hostMemory();
        this.via = ctx.sdramLayout().via();
        this.wire = ctx.wire();
        this.counters = ctx.counters();
        this.torusWidth = ctx.parameters().torusWidth();
        this.selfPacked = ctx.self().packed();
        this.pageSize = ctx.parameters().pageSize();
        this.memory = new ViaMemory(ctx);
        this.descriptors = new ViaDescriptors(ctx, memory);
        this.completions = new ViaCompletions(ctx, memory, descriptors);
        this.states = new ViaViState[via.viEntries()];
        final int processes = ctx.parameters().maxProcessesPerNic();
        this.ready = new IntArrayQueue[processes];
        for (int p = 0; p < processes; p++)
        {
            ready[p] = new IntArrayQueue(ViaTablesLayout.MAX_VIS_PER_PROCESS, -1);
        }
    }

    ViaMemory memory()
    {
        return memory;
    }

    ViaDescriptors descriptors()
    {
        return descriptors;
    }

    ViaCompletions completions()
    {
        return completions;
    }

    int viEntries()
    {
        return states.length;
    }

    /** @return the entry of {@code vi} through this engine's flyweight (valid until the next call). */
    ViTableEntry entry(final int vi)
    {
        return entry.wrap(sdram, (int)via.viOffset(vi));
    }

    /** @return the working state of table entry {@code vi}, made on first use (not on the data path). */
    ViaViState state(final int vi)
    {
        ViaViState s = states[vi];
        if (null == s)
        {
            s = new ViaViState(vi);
            states[vi] = s;
        }
        return s;
    }

    // ---------------------------------------------------------------------------------------------
    // Posting (VIA_POST_SEND, VIA_POST_RECV)
    // ---------------------------------------------------------------------------------------------

    /**
     * A post from the Command Queue of the VIA process in {@code slot}: Context = the VI, Group = the
     * descriptor's memory handle, Size = its offset in that region.
     */
    void post(final ProcessSlot slot, final int command, final int vi, final int handle, final int offset)
    {
        final boolean send = ProcessCommand.VIA_POST_SEND == command;
        if (!send && ProcessCommand.VIA_POST_RECV != command || vi < 0 || vi >= states.length)
        {
            counters.commandsRejected.increment();
            return;
        }
        final ViTableEntry e = entry(vi);
        final int state = e.state();
        if (ViTableEntry.STATE_FREE == state || e.owner() != slot.index)
        {
            // Not this process's VI: nothing of it may be touched, not even the descriptor.
            counters.commandsRejected.increment();
            return;
        }
        final ViaViState s = state(vi);
        if (s.owner != slot.index)
        {
            // The table entry holds another process's VI now (the driver destroys and creates VIs
            // without the NIC): nothing of the previous one's queues survives.
            forget(s);
            s.owner = slot.index;
        }
        final ViaWorkQueue queue = send ? s.sends : s.receives;
        final int op = send ? ViplDescriptor.STATUS_OP_SEND : ViplDescriptor.STATUS_OP_RECEIVE;
        final int check = descriptors.read(e, handle, offset, send, postCheck);
        if (ViaDescriptors.UNREADABLE == check)
        {
            counters.commandsRejected.increment();
            completions.asyncEvent(slot.index, vi, ViaProcessStructuresLayout.RESOURCE_DESCRIPTOR,
                ViaProcessStructuresLayout.ERROR_POST_DESC);
            return;
        }
        if (ViTableEntry.STATE_ERROR == state)
        {
            // Issue 14: the Error state flushes everything posted, now or later.
            completions.complete(e, vi, send, handle, offset, 0, 0, op | ViplDescriptor.STATUS_DESC_FLUSHED_ERROR);
            return;
        }
        final int error = 0 == check && queue.isFull() ? ViplDescriptor.STATUS_FORMAT_ERROR : check;
        if (0 != error)
        {
            // Nothing moves; at the reliable levels any error breaks the connection (issue 14).
            completions.complete(e, vi, send, handle, offset, 0, 0, op | error);
            if (ViaDescriptors.reliable(e) && ViTableEntry.STATE_CONNECTED == state)
            {
                breakConnection(vi, ViaProcessStructuresLayout.ERROR_POST_DESC, true);
            }
            return;
        }
        queue.add(handle, offset);
        if (send && ViTableEntry.STATE_CONNECTED == state)
        {
            schedule(slot.index, s);
        }
    }

    private void schedule(final int owner, final ViaViState s)
    {
        if (!s.scheduled)
        {
            s.scheduled = true;
            ready[owner].addInt(s.vi);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // TX: one packet of the next VI of this process that has one
    // ---------------------------------------------------------------------------------------------

    /** @return {@link #NOTHING}, {@link #PACKET_SENT} or {@link #FIFO_FULL}. */
    int sendStep(final ProcessSlot slot)
    {
        final IntArrayQueue queue = ready[slot.index];
        for (int n = queue.size(); n > 0; n--)
        {
            final int vi = queue.pollInt();
            final ViaViState s = states[vi];
            final ViTableEntry e = entry(vi);
            if (ViTableEntry.STATE_CONNECTED != e.state() || e.owner() != slot.index || !s.sends.hasUntransmitted())
            {
                s.scheduled = false;
                if (ViTableEntry.STATE_ERROR == e.state() && e.owner() == slot.index)
                {
                    flush(vi);
                }
                continue;
            }
            final int sent = sendPacket(slot, vi, s, e);
            if (FIFO_FULL == sent)
            {
                queue.addInt(vi);
                return FIFO_FULL;
            }
            // The second level of the round robin: this VI goes to the tail if it has more.
            if (s.sends.hasUntransmitted() && ViTableEntry.STATE_CONNECTED == entry(vi).state())
            {
                queue.addInt(vi);
            }
            else
            {
                s.scheduled = false;
            }
            return PACKET_SENT;
        }
        return NOTHING;
    }

    private int sendPacket(final ProcessSlot slot, final int vi, final ViaViState s, final ViTableEntry e)
    {
        final ViaWorkQueue sends = s.sends;
        final long position = sends.transmit;
        final ViaDescriptorCopy d = s.sending;
        if (!s.sendStarted)
        {
            // Read and checked again: the process may have changed the descriptor or its memory since the post.
            final int check = descriptors.read(e, sends.handle(position), sends.offset(position), true, d);
            if (0 != check)
            {
                failSend(vi, s, e, ViaDescriptors.UNREADABLE == check ? ViplDescriptor.STATUS_PROTECTION_ERROR : check);
                return PACKET_SENT;
            }
            s.sendStarted = true;
            s.sent = 0;
            s.sendSequence = e.sendSequence();
            e.sendSequence(s.sendSequence + 1);
            sends.transmitted(position, s.sendSequence, d.length, ViplDescriptor.isRdma(d.control) ?
                ViplDescriptor.STATUS_OP_RDMA_WRITE : ViplDescriptor.STATUS_OP_SEND);
        }
        final int length = d.length;
        final int payload = Math.min(pageSize, length - s.sent);
        final int owner = slot.index;
        final int ptag = e.ptag();
        final int savedSegment = d.segment;
        final int savedOffset = d.segmentOffset;
        int chunks = 0;
        for (int left = payload; left > 0; )
        {
            final int inSegment = d.segmentRemaining();
            final long address = d.cursorAddress();
            final int chunk = Math.min(left, Math.min(inSegment, memory.toPageEnd(address)));
            final long physical = memory.translate(owner, ptag, d.cursorHandle(), address, chunk);
            if (ViaMemory.REFUSED == physical)
            {
                // The page was unlocked, freed or deregistered since the check (DESIGN.md 8, item 10).
                failSend(vi, s, e, ViplDescriptor.STATUS_PROTECTION_ERROR);
                return PACKET_SENT;
            }
            chunkAddress[chunks] = physical;
            chunkLength[chunks++] = chunk;
            d.advance(chunk);
            left -= chunk;
        }
        final int node = NicCoordinates.indexOfPacked(e.peerNic(), torusWidth);
        final int claimed = wire.claim(node, WireMessageType.VIA_PACKET, CONTROL_PACKET_LENGTH + payload);
        if (claimed < 0)
        {
            d.segment = savedSegment;
            d.segmentOffset = savedOffset;
            counters.packetsDeferred.increment();
            return FIFO_FULL;
        }
        final AtomicBuffer fifo = wire.fifoBuffer(node);
        final boolean last = s.sent + payload == length;
        final boolean immediate = 0 != (d.control & ViplDescriptor.CONTROL_IMMEDIATE);
        final boolean rdma = ViplDescriptor.isRdma(d.control);
        writeHeaders(fifo, claimed, e, slot.nicPid, rdma ? ViaPacketHeader.OP_RDMA_WRITE : ViaPacketHeader.OP_SEND,
            s.sendSequence, payload)
            .flags((0 == s.sent ? ViaPacketHeader.FLAG_FIRST : 0) | (last ? ViaPacketHeader.FLAG_LAST : 0) |
                (immediate ? ViaPacketHeader.FLAG_IMMEDIATE : 0))
            .immediateData(immediate ? d.immediateData : 0)
            .messageLength(length)
            .messageOffset(s.sent)
            .remoteHandle(rdma ? d.remoteHandle : 0)
            .remoteAddress(rdma ? d.remoteAddress : 0);
        int at = claimed + CONTROL_PACKET_LENGTH;
        for (int c = 0; c < chunks; c++)
        {
            // The emulated DMA read from the sender's page, checked above in this duty cycle.
            fifo.putBytes(at, host, (int)chunkAddress[c], chunkLength[c]);
            at += chunkLength[c];
        }
        wire.commit(node, claimed);
        s.sent += payload;
        counters.dataPacketsSent.increment();
        counters.packetsSent.increment();
        counters.dataBytesSent.getAndAddRelease(payload);
        counters.hostBytesRead.getAndAddRelease(payload);
        if (last)
        {
            s.sendStarted = false;
            sends.transmit = position + 1;
            if (ViTableEntry.RELIABLE_RECEPTION != e.reliability())
            {
                // Unreliable and Reliable Delivery: done once the last packet is in the peer's FIFO.
                completions.complete(e, vi, true, sends.handle(position), sends.offset(position), length, 0,
                    sends.op(position));
                sends.removeHead();
            }
        }
        return PACKET_SENT;
    }

    /**
     * The send at the transmit cursor cannot go on: it completes with {@code error}. At the reliable
     * levels the connection breaks (the peer may hold part of the message); an Unreliable VI goes on,
     * and its peer drops the part when the next message begins.
     */
    private void failSend(final int vi, final ViaViState s, final ViTableEntry e, final int error)
    {
        final ViaWorkQueue sends = s.sends;
        final long position = sends.transmit;
        s.sendStarted = false;
        if (ViaDescriptors.reliable(e))
        {
            if (position == sends.head())
            {
                completions.complete(e, vi, true, sends.handle(position), sends.offset(position), 0, 0,
                    ViplDescriptor.STATUS_OP_SEND | error);
                sends.removeHead();
            }
            breakConnection(vi, ViaProcessStructuresLayout.ERROR_POST_DESC, true);
            return;
        }
        completions.complete(e, vi, true, sends.handle(position), sends.offset(position), 0, 0,
            ViplDescriptor.STATUS_OP_SEND | error);
        sends.removeHead();
    }

    private ViaPacketHeader writeHeaders(final AtomicBuffer buffer, final int at, final ViTableEntry e,
        final int senderPid, final int op, final int sequence, final int payload)
    {
        header.wrap(buffer, at)
            .destination(e.peerNic()).receiverPid(e.peerNicPid())
            .source(selfPacked).senderPid(senderPid)
            .contextTag(0).packetLength(ViaPacketHeader.LENGTH + payload).counter(0);
        return viaHeader.wrap(buffer, at + PacketHeader.LENGTH)
            .destinationVi(e.peerVi()).connectionId(e.connectionId()).sequence(sequence).op(op)
            .flags(0).immediateData(0).messageLength(0).messageOffset(0).remoteHandle(0).remoteAddress(0);
    }

    /** An Ack or Error packet to the peer of {@code vi}: no payload, behind whatever this NIC sent before. */
    void sendControl(final int vi, final int op, final int sequence)
    {
        final ViTableEntry e = entry(vi);
        writeHeaders(controlPacket, 0, e, ProcessTableLayout.nicPid(e.owner()), op, sequence, 0);
        final int node = NicCoordinates.indexOfPacked(e.peerNic(), torusWidth);
        if (!wire.send(node, WireMessageType.VIA_PACKET, controlPacket, 0, CONTROL_PACKET_LENGTH))
        {
            counters.packetsDeferred.increment();
        }
        counters.packetsSent.increment();
    }

    // ---------------------------------------------------------------------------------------------
    // Reliable Reception's acknowledgement, the Error state, connection changes
    // ---------------------------------------------------------------------------------------------

    /** {@code OP_ACK}: the peer completed the receive of message {@code sequence}; the oldest send completes. */
    void onAck(final int vi, final int sequence)
    {
        final ViaViState s = states[vi];
        final ViTableEntry e = entry(vi);
        if (null == s || s.sends.head() >= s.sends.transmit || s.sends.sequence(s.sends.head()) != sequence)
        {
            counters.viaPacketsStale.increment();
            return;
        }
        final long head = s.sends.head();
        completions.complete(e, vi, true, s.sends.handle(head), s.sends.offset(head), s.sends.length(head), 0,
            s.sends.op(head));
        s.sends.removeHead();
    }

    /**
     * Connected to Error by compare-and-set (issue 14), then every posted descriptor DESC_FLUSHED, an
     * asynchronous event with {@code error}, and, if {@code tellPeer}, {@code OP_ERROR} to the peer.
     * A VI the driver moved meanwhile (disconnected) is left alone.
     */
    void breakConnection(final int vi, final int error, final boolean tellPeer)
    {
        final ViTableEntry e = entry(vi);
        if (!e.breakConnection())
        {
            if (ViTableEntry.STATE_ERROR == e.state())
            {
                flush(vi);
            }
            return;
        }
        if (tellPeer)
        {
            sendControl(vi, ViaPacketHeader.OP_ERROR, 0);
        }
        flush(vi);
        completions.asyncEvent(entry(vi).owner(), vi, ViaProcessStructuresLayout.RESOURCE_VI, error);
    }

    /** Every descriptor posted on {@code vi} completes DESC_FLUSHED, oldest first; the progress is forgotten. */
    void flush(final int vi)
    {
        final ViaViState s = states[vi];
        if (null == s)
        {
            return;
        }
        final ViTableEntry e = entry(vi);
        flush(e, vi, s.sends, true);
        flush(e, vi, s.receives, false);
        s.reset();
    }

    private void flush(final ViTableEntry e, final int vi, final ViaWorkQueue queue, final boolean send)
    {
        final int status = ViplDescriptor.STATUS_DESC_FLUSHED_ERROR |
            (send ? ViplDescriptor.STATUS_OP_SEND : ViplDescriptor.STATUS_OP_RECEIVE);
        for (long p = queue.head(); p < queue.tail(); p++)
        {
            completions.complete(e, vi, send, queue.handle(p), queue.offset(p), 0, 0, status);
        }
        queue.clear();
    }

    /** Via_Connect was applied: a new connection starts with no message in progress; sends posted before go now. */
    void connected(final int vi)
    {
        final ViaViState s = state(vi);
        final int owner = entry(vi).owner();
        if (s.owner != owner)
        {
            forget(s);
            s.owner = owner;
        }
        s.reset();
        if (s.sends.hasUntransmitted())
        {
            schedule(entry(vi).owner(), s);
        }
    }

    /** Via_Disconnect is about to be applied (VipDisconnect): what is posted completes DESC_FLUSHED. */
    void disconnecting(final int vi)
    {
        flush(vi);
    }

    /** Via_Connection_Lost moved {@code vi} to Error: flushed, and the process told. */
    void connectionLost(final int vi)
    {
        flush(vi);
        completions.asyncEvent(entry(vi).owner(), vi, ViaProcessStructuresLayout.RESOURCE_VI,
            ViaProcessStructuresLayout.ERROR_CONN_LOST);
    }

    /** The VIA process of entry {@code owner} is gone: its VIs' work is dropped without completions. */
    void processDeleted(final int owner)
    {
        for (final ViaViState s : states)
        {
            if (null != s && s.owner == owner)
            {
                forget(s);
                s.owner = -1;
            }
        }
        ready[owner].clear();
    }

    private static void forget(final ViaViState s)
    {
        s.sends.clear();
        s.receives.clear();
        s.reset();
        s.scheduled = false;
    }
}
