package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaPacketHeader;
import org.qnix.abi.WireMessageType;

/**
 * Puts VIA packets on the wire to the peer of a VI (issue 14): the 16-byte {@link PacketHeader} (the
 * VIA processes' NIC PIDs, Context Tag 0) and the {@link ViaPacketHeader}, then the payload the caller
 * copies in. A data packet is claimed straight in the peer NIC's FIFO, as QNIX data is ({@link
 * Wire#claim}), so a caller checks every page before it claims and nothing half-written reaches the
 * wire; a control packet (Ack, Error) goes through {@link Wire#send}, which keeps it if the FIFO is full.
 *
 * <pre>{@code
 * int at = packets.claim(vi, payload);
 * if (at >= 0) { packets.headers(at, vi, pid, ViaPacketHeader.OP_SEND, sequence, payload).flags(...);
 *                packets.fifo(vi).putBytes(at + ViaPacketWriter.PAYLOAD_OFFSET, ...); packets.commit(vi, at, payload, true); }
 * packets.sendControl(vi, ViaPacketHeader.OP_ACK, sequence, 0);
 * }</pre>
 */
final class ViaPacketWriter
{
    /** Where the payload starts in a VIA packet. */
    static final int PAYLOAD_OFFSET = PacketHeader.LENGTH + ViaPacketHeader.LENGTH;

    private final Wire wire;
    private final NicCounters counters;
    private final int torusWidth;
    private final int selfPacked;
    private final PacketHeader header = new PacketHeader();
    private final ViaPacketHeader viaHeader = new ViaPacketHeader();
    private final UnsafeBuffer controlPacket = new UnsafeBuffer(new byte[PAYLOAD_OFFSET]);

    ViaPacketWriter(final FirmwareContext ctx)
    {
        this.wire = ctx.wire();
        this.counters = ctx.counters();
        this.torusWidth = ctx.parameters().torusWidth();
        this.selfPacked = ctx.self().packed();
    }

    /** @return where a packet of {@code payload} bytes to the peer of {@code vi} starts in its FIFO, or -1 if full. */
    int claim(final ViTableEntry vi, final int payload)
    {
        final int at = wire.claim(node(vi), WireMessageType.VIA_PACKET, PAYLOAD_OFFSET + payload);
        if (at < 0)
        {
            counters.packetsDeferred.increment();
        }
        return at;
    }

    /** @return the FIFO a packet claimed for the peer of {@code vi} is written in. */
    AtomicBuffer fifo(final ViTableEntry vi)
    {
        return wire.fifoBuffer(node(vi));
    }

    /**
     * Makes the claimed packet visible to the peer NIC's RX, and counts it.
     *
     * @param data false for an RDMA read request: a packet, not data.
     */
    void commit(final ViTableEntry vi, final int at, final int payload, final boolean data)
    {
        wire.commit(node(vi), at);
        counters.packetsSent.increment();
        if (!data)
        {
            return;
        }
        counters.dataPacketsSent.increment();
        counters.dataBytesSent.getAndAddRelease(payload);
        counters.hostBytesRead.getAndAddRelease(payload);
    }

    /**
     * Both headers of a packet to the peer of {@code vi} at {@code at} of {@code buffer}; every
     * optional field 0.
     *
     * @return the VIA header, for the caller's flags, lengths and remote fields.
     */
    ViaPacketHeader headers(final AtomicBuffer buffer, final int at, final ViTableEntry vi, final int senderPid,
        final int op, final int sequence, final int payload)
    {
        header.wrap(buffer, at)
            .destination(vi.peerNic()).receiverPid(vi.peerNicPid())
            .source(selfPacked).senderPid(senderPid)
            .contextTag(0).packetLength(ViaPacketHeader.LENGTH + payload).counter(0);
        return viaHeader.wrap(buffer, at + PacketHeader.LENGTH)
            .destinationVi(vi.peerVi()).connectionId(vi.connectionId()).sequence(sequence).op(op)
            .flags(0).immediateData(0).messageLength(0).messageOffset(0).remoteHandle(0).remoteAddress(0);
    }

    /**
     * An Ack or Error packet to the peer of {@code vi}, behind whatever this NIC sent before.
     *
     * @param immediateData an Error's: the status the peer's descriptor of {@code sequence} completes
     *                      with (a refused RDMA read), or 0.
     */
    void sendControl(final ViTableEntry vi, final int op, final int sequence, final int immediateData)
    {
        headers(controlPacket, 0, vi, ProcessTableLayout.nicPid(vi.owner()), op, sequence, 0)
            .immediateData(immediateData);
        if (!wire.send(node(vi), WireMessageType.VIA_PACKET, controlPacket, 0, PAYLOAD_OFFSET))
        {
            counters.packetsDeferred.increment();
        }
        counters.packetsSent.increment();
    }

    private int node(final ViTableEntry vi)
    {
        return NicCoordinates.indexOfPacked(vi.peerNic(), torusWidth);
    }
}
