package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaPacketHeader;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * Puts the descriptors of a VI's send queue on the wire, one packet per call, strictly in posting
 * order (issue 14): a Send or RDMA write as packets of at most a page gathered from its data segments,
 * every page checked through {@link ViaMemory} before the packet is claimed, so a refused page leaves
 * nothing half-written on the wire; an RDMA read as one request packet naming the remote region, the
 * length and the read's sequence number, after which the read waits for its response ({@link
 * ViaReceiver}). A descriptor with QFENCE does not start while an earlier read of the queue is in
 * flight. Each descriptor is read and checked again when it starts: the process may have changed it
 * or its memory since the post.
 *
 * <pre>{@code
 * int sent = sender.sendPacket(slot, state, entry);   // ViaEngine.NOTHING if fenced
 * }</pre>
 */
final class ViaSender
{
    /**
     * Pieces one packet is gathered from: a packet carries at most a page, so each segment's part of it
     * lies on at most two pages, two pieces per segment.
     */
    private static final int MAX_CHUNKS = 2 * ViplDescriptor.MAX_SEGMENTS;

    private final AtomicBuffer host;
    private final int pageSize;
    private final ViaEngine engine;
    private final ViaMemory memory;
    private final ViaDescriptors descriptors;
    private final ViaPacketWriter packets;
    private final long[] chunkAddress = new long[MAX_CHUNKS];
    private final int[] chunkLength = new int[MAX_CHUNKS];

    ViaSender(final FirmwareContext ctx, final ViaEngine engine)
    {
        this.host = ctx.hostMemory();
        this.pageSize = ctx.parameters().pageSize();
        this.engine = engine;
        this.memory = engine.memory();
        this.descriptors = engine.descriptors();
        this.packets = engine.packets();
    }

    /**
     * The next packet of the descriptor at the transmit cursor of {@code s}, started if need be.
     *
     * @return {@link ViaEngine#PACKET_SENT} (also when the descriptor failed, now or at its post), {@link
     * ViaEngine#FIFO_FULL}, or {@link ViaEngine#NOTHING} if it waits behind reads for its QFENCE.
     */
    int sendPacket(final ProcessSlot slot, final ViaViState s, final ViTableEntry e)
    {
        final ViaWorkQueue sends = s.sends;
        final long position = sends.transmit;
        final ViaDescriptorCopy d = s.sending;
        if (!s.sendStarted)
        {
            if (engine.passFailedSends(e, s))
            {
                // Descriptors that failed at their post: passed, completed in their turn, nothing sent.
                return ViaEngine.PACKET_SENT;
            }
            final int check = descriptors.read(e, sends.handle(position), sends.offset(position), true, d);
            if (0 != check)
            {
                fail(s, e, ViaDescriptors.UNREADABLE == check ? ViplDescriptor.STATUS_PROTECTION_ERROR : check);
                return ViaEngine.PACKET_SENT;
            }
            if (0 != (d.control & ViplDescriptor.CONTROL_QFENCE) && s.readsInFlight > 0)
            {
                // VIA's QFENCE: not started until every earlier RDMA read of the queue has completed.
                s.fenced = true;
                return ViaEngine.NOTHING;
            }
            s.sendStarted = true;
            s.sent = 0;
            s.sendSequence = e.sendSequence();
            e.sendSequence(s.sendSequence + 1);
            sends.transmitted(position, s.sendSequence, d.length, ViaDescriptors.statusOp(d.control, true));
        }
        if (ViplDescriptor.OP_RDMA_READ == (d.control & ViplDescriptor.CONTROL_OP_MASK))
        {
            return readRequest(slot, s, e, d);
        }
        return dataPacket(slot, s, e, d);
    }

    /** An RDMA read's request: no payload; the response is the peer NIC's, without any descriptor there. */
    private int readRequest(final ProcessSlot slot, final ViaViState s, final ViTableEntry e, final ViaDescriptorCopy d)
    {
        final int at = packets.claim(e, 0);
        if (at < 0)
        {
            return ViaEngine.FIFO_FULL;
        }
        packets.headers(packets.fifo(e), at, e, slot.nicPid, ViaPacketHeader.OP_RDMA_READ_REQUEST, s.sendSequence, 0)
            .flags(ViaPacketHeader.FLAG_FIRST | ViaPacketHeader.FLAG_LAST)
            .messageLength(d.length)
            .remoteHandle(d.remoteHandle)
            .remoteAddress(d.remoteAddress);
        packets.commit(e, at, 0, false);
        s.sendStarted = false;
        s.sends.transmit++;
        s.readsInFlight++;
        return ViaEngine.PACKET_SENT;
    }

    private int dataPacket(final ProcessSlot slot, final ViaViState s, final ViTableEntry e, final ViaDescriptorCopy d)
    {
        final ViaWorkQueue sends = s.sends;
        final long position = sends.transmit;
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
                fail(s, e, ViplDescriptor.STATUS_PROTECTION_ERROR);
                return ViaEngine.PACKET_SENT;
            }
            chunkAddress[chunks] = physical;
            chunkLength[chunks++] = chunk;
            d.advance(chunk);
            left -= chunk;
        }
        final int claimed = packets.claim(e, payload);
        if (claimed < 0)
        {
            d.segment = savedSegment;
            d.segmentOffset = savedOffset;
            return ViaEngine.FIFO_FULL;
        }
        final AtomicBuffer fifo = packets.fifo(e);
        final boolean last = s.sent + payload == length;
        final boolean immediate = 0 != (d.control & ViplDescriptor.CONTROL_IMMEDIATE);
        final boolean rdma = ViplDescriptor.isRdma(d.control);
        packets.headers(fifo, claimed, e, slot.nicPid, rdma ? ViaPacketHeader.OP_RDMA_WRITE : ViaPacketHeader.OP_SEND,
            s.sendSequence, payload)
            .flags((0 == s.sent ? ViaPacketHeader.FLAG_FIRST : 0) | (last ? ViaPacketHeader.FLAG_LAST : 0) |
                (immediate ? ViaPacketHeader.FLAG_IMMEDIATE : 0))
            .immediateData(immediate ? d.immediateData : 0)
            .messageLength(length)
            .messageOffset(s.sent)
            .remoteHandle(rdma ? d.remoteHandle : 0)
            .remoteAddress(rdma ? d.remoteAddress : 0);
        int at = claimed + ViaPacketWriter.PAYLOAD_OFFSET;
        for (int c = 0; c < chunks; c++)
        {
            // The emulated DMA read from the sender's page, checked above in this duty cycle.
            fifo.putBytes(at, host, (int)chunkAddress[c], chunkLength[c]);
            at += chunkLength[c];
        }
        packets.commit(e, claimed, payload, true);
        s.sent += payload;
        if (last)
        {
            s.sendStarted = false;
            sends.transmit = position + 1;
            if (ViTableEntry.RELIABLE_RECEPTION != e.reliability())
            {
                // Unreliable and Reliable Delivery: done once the last packet is in the peer's FIFO,
                // completed in its turn behind any earlier read still waiting for its response.
                sends.finish(position, sends.op(position), length);
                engine.completeSends(e, s);
            }
        }
        return ViaEngine.PACKET_SENT;
    }

    /**
     * The descriptor at the transmit cursor cannot go on: it finishes with {@code error}, the op it
     * names kept. At the reliable levels the connection breaks (the peer may hold part of the message),
     * completing the queue in posting order: older sends still unacknowledged DESC_FLUSHED, this one
     * with its error, the later ones DESC_FLUSHED. An Unreliable VI goes on, and its peer drops the
     * part when the next message begins.
     */
    private void fail(final ViaViState s, final ViTableEntry e, final int error)
    {
        final ViaWorkQueue sends = s.sends;
        final long position = sends.transmit;
        s.sendStarted = false;
        sends.finish(position, sends.op(position) | error, 0);
        sends.transmit = position + 1;
        if (ViaDescriptors.reliable(e))
        {
            engine.breakConnection(s.vi, ViaProcessStructuresLayout.ERROR_POST_DESC, true);
            return;
        }
        engine.completeSends(e, s);
    }
}
