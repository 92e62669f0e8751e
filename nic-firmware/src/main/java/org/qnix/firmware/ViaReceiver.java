package org.qnix.firmware;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaPacketHeader;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * The VIA role's RX side (issue 14): every VIA packet this NIC takes from its input FIFO. A packet is
 * for a VI only if the VI is Connected on the packet's connection, to the packet's source NIC, in the
 * process the packet names; anything else (a previous connection of a reused VI, a VI gone to Error)
 * is dropped and counted. A Send's first packet takes the head receive descriptor, read and checked
 * again; each packet is scattered page by page through {@link ViaMemory}; an RDMA write's packets go to
 * the target region its header names, checked whole at the first packet (handle, owner, ptag, range,
 * write enable on region and VI) and page by page after, and with immediate data it consumes a receive
 * descriptor too; the last packet completes the receive ({@link ViaCompletions}) and, at Reliable Reception, sends the {@code OP_ACK} that completes
 * the sender's descriptor. With no receive posted an Unreliable message is dropped and counted (the VI
 * entry's Dropped word); at the reliable levels it breaks the connection, as does a receive shorter
 * than the message (LENGTH) or a page the process may no longer write (PROTECTION).
 *
 * <pre>{@code
 * receiver.onPacket(header, buffer, index, length);   // from SystemMessageDispatcher
 * }</pre>
 */
final class ViaReceiver
{
    private static final int PAYLOAD_OFFSET = PacketHeader.LENGTH + ViaPacketHeader.LENGTH;

    private final AtomicBuffer host;
    private final NicCounters counters;
    private final ViaEngine engine;
    private final ViaMemory memory;
    private final ViaDescriptors descriptors;
    private final ViaCompletions completions;
    private final ViaPacketHeader viaHeader = new ViaPacketHeader();

    ViaReceiver(final FirmwareContext ctx, final ViaEngine engine)
    {
        this.host = ctx.hostMemory();
        this.counters = ctx.counters();
        this.engine = engine;
        this.memory = engine.memory();
        this.descriptors = engine.descriptors();
        this.completions = engine.completions();
    }

    /** @param header the packet's {@link PacketHeader}, already checked for this NIC and its length. */
    void onPacket(final PacketHeader header, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (length < PAYLOAD_OFFSET)
        {
            counters.packetsDropped.increment();
            return;
        }
        final ViaPacketHeader packet = viaHeader.wrap(buffer, index + PacketHeader.LENGTH);
        final int vi = packet.destinationVi();
        if (vi < 0 || vi >= engine.viEntries())
        {
            counters.viaPacketsStale.increment();
            return;
        }
        final ViTableEntry e = engine.entry(vi);
        // Writers: the driver and this NIC (Via_Connect); the State last, with release.
        if (ViTableEntry.STATE_CONNECTED != e.state() || e.connectionId() != packet.connectionId() ||
            e.peerNic() != header.source() || ProcessTableLayout.nicPid(e.owner()) != header.receiverPid())
        {
            counters.viaPacketsStale.increment();
            return;
        }
        switch (packet.op())
        {
            case ViaPacketHeader.OP_SEND:
            case ViaPacketHeader.OP_RDMA_WRITE:
                onData(vi, e, packet, buffer, index + PAYLOAD_OFFSET, length - PAYLOAD_OFFSET);
                break;

            case ViaPacketHeader.OP_ACK:
                engine.onAck(vi, packet.sequence());
                break;

            case ViaPacketHeader.OP_ERROR:
                // The peer broke the connection: this side goes to Error too, without answering.
                engine.breakConnection(vi, ViaProcessStructuresLayout.ERROR_CONN_LOST, false);
                break;

            default:
                counters.packetsDropped.increment();
        }
    }

    private void onData(final int vi, final ViTableEntry e, final ViaPacketHeader packet,
        final MutableDirectBuffer buffer, final int payloadIndex, final int payload)
    {
        final ViaViState s = engine.state(vi);
        final int flags = packet.flags();
        if (0 != (flags & ViaPacketHeader.FLAG_FIRST))
        {
            if (s.receiveStarted)
            {
                // The previous message never ended (its sender failed part-way, Unreliable).
                finishMessage(vi, e, s, 0, ViplDescriptor.STATUS_TRANSPORT_ERROR);
            }
            if (!startMessage(vi, e, s, packet))
            {
                return;
            }
        }
        else if (!s.receiveStarted && !s.dropping || packet.sequence() != s.receiveSequence ||
            packet.messageOffset() != s.received)
        {
            counters.viaPacketsStale.increment();
            return;
        }
        s.received += payload;
        counters.dataPacketsReceived.increment();
        if (s.dropping)
        {
            if (0 != (flags & ViaPacketHeader.FLAG_LAST))
            {
                s.dropping = false;
                e.receiveSequence(s.receiveSequence + 1);
            }
            return;
        }
        if (0 == s.receiveError)
        {
            if (s.rdma)
            {
                writeRemote(e, s, buffer, payloadIndex, payload, packet.messageOffset());
            }
            else
            {
                scatter(e, s.receiving, buffer, payloadIndex, payload, s);
            }
        }
        counters.dataBytesReceived.getAndAddRelease(payload);
        if (0 != (flags & ViaPacketHeader.FLAG_LAST))
        {
            final boolean immediate = 0 != (flags & ViaPacketHeader.FLAG_IMMEDIATE);
            finishMessage(vi, e, s, immediate ? packet.immediateData() : 0,
                s.receiveError | (immediate ? ViplDescriptor.STATUS_IMMEDIATE : 0));
        }
    }

    /** @return false if the message is not received (the connection broke). */
    private boolean startMessage(final int vi, final ViTableEntry e, final ViaViState s, final ViaPacketHeader packet)
    {
        s.receiveSequence = packet.sequence();
        s.messageLength = packet.messageLength();
        s.received = 0;
        s.receiveError = 0;
        s.dropping = false;
        s.rdma = ViaPacketHeader.OP_RDMA_WRITE == packet.op();
        // Issue 14: an RDMA write with immediate data consumes a receive descriptor too.
        s.usesReceive = !s.rdma || 0 != (packet.flags() & ViaPacketHeader.FLAG_IMMEDIATE);
        final ViaWorkQueue receives = s.receives;
        if (s.usesReceive && receives.isEmpty())
        {
            if (ViaDescriptors.reliable(e))
            {
                engine.breakConnection(vi, ViaProcessStructuresLayout.ERROR_RECVQ_EMPTY, true);
                return false;
            }
            s.dropping = true;
            e.countDropped();
            counters.viaMessagesDropped.increment();
            return true;
        }
        s.receiveStarted = true;
        if (s.rdma)
        {
            s.remoteHandle = packet.remoteHandle();
            s.remoteAddress = packet.remoteAddress();
            // The whole target is checked here, so that a refused write writes nothing.
            if (0 == (e.attributes() & ViTableEntry.ATTRIBUTE_RDMA_WRITE) ||
                !memory.rdmaWritable(e.owner(), e.ptag(), s.remoteHandle, s.remoteAddress, s.messageLength))
            {
                s.receiveError = ViplDescriptor.STATUS_RDMA_PROT_ERROR;
            }
        }
        if (!s.usesReceive)
        {
            return true;
        }
        final long head = receives.head();
        final int check = descriptors.read(e, receives.handle(head), receives.offset(head), false, s.receiving);
        if (ViaDescriptors.UNREADABLE == check)
        {
            s.receiveError |= ViplDescriptor.STATUS_PROTECTION_ERROR;
        }
        else if (0 != check)
        {
            s.receiveError |= check;
        }
        else if (!s.rdma && s.messageLength > s.receiving.segmentBytes)
        {
            // Issue 14: a receive shorter than the message moves nothing and completes LENGTH.
            s.receiveError = ViplDescriptor.STATUS_LENGTH_ERROR;
        }
        return true;
    }

    /** RDMA write: the payload at the target address, page by page, each page checked in this duty cycle. */
    private void writeRemote(final ViTableEntry e, final ViaViState s, final MutableDirectBuffer buffer,
        final int payloadIndex, final int payload, final int messageOffset)
    {
        final int owner = e.owner();
        final int ptag = e.ptag();
        long address = s.remoteAddress + messageOffset;
        int at = payloadIndex;
        for (int left = payload; left > 0; )
        {
            final int chunk = Math.min(left, memory.toPageEnd(address));
            final long physical = memory.translate(owner, ptag, s.remoteHandle, address, chunk);
            if (ViaMemory.REFUSED == physical)
            {
                s.receiveError = ViplDescriptor.STATUS_RDMA_PROT_ERROR;
                return;
            }
            host.putBytes((int)physical, buffer, at, chunk);
            address += chunk;
            at += chunk;
            left -= chunk;
        }
    }

    /** The payload into the receive's segments, page by page, each page checked in this duty cycle. */
    private void scatter(final ViTableEntry e, final ViaDescriptorCopy d, final MutableDirectBuffer buffer,
        final int payloadIndex, final int payload, final ViaViState s)
    {
        final int owner = e.owner();
        final int ptag = e.ptag();
        int at = payloadIndex;
        for (int left = payload; left > 0; )
        {
            final int inSegment = d.segmentRemaining();
            if (0 == inSegment)
            {
                s.receiveError = ViplDescriptor.STATUS_LENGTH_ERROR;
                return;
            }
            final long address = d.cursorAddress();
            final int chunk = Math.min(left, Math.min(inSegment, memory.toPageEnd(address)));
            final long physical = memory.translate(owner, ptag, d.cursorHandle(), address, chunk);
            if (ViaMemory.REFUSED == physical)
            {
                s.receiveError = ViplDescriptor.STATUS_PROTECTION_ERROR;
                return;
            }
            // The emulated DMA write into the receiver's page.
            host.putBytes((int)physical, buffer, at, chunk);
            d.advance(chunk);
            at += chunk;
            left -= chunk;
        }
    }

    /**
     * The message's end. A consumed receive completes: length, immediate data, status; counter and
     * wake; CQ entry ({@link ViaCompletions#complete}). An RDMA write without immediate data completes
     * nothing here; a refused one is an asynchronous error. Then Reliable Reception acknowledges the
     * message, or a reliable VI with an error breaks.
     */
    private void finishMessage(final int vi, final ViTableEntry e, final ViaViState s, final int immediateData,
        final int status)
    {
        final int sequence = s.receiveSequence;
        s.receiveStarted = false;
        if (s.usesReceive)
        {
            final ViaWorkQueue receives = s.receives;
            final long head = receives.head();
            completions.complete(e, vi, false, receives.handle(head), receives.offset(head), s.messageLength,
                immediateData, (s.rdma ? ViplDescriptor.STATUS_OP_REMOTE_RDMA_WRITE : ViplDescriptor.STATUS_OP_RECEIVE) |
                status);
            receives.removeHead();
            counters.receivesCompleted.increment();
        }
        else if (0 != (status & ViplDescriptor.STATUS_ERROR_MASK))
        {
            completions.asyncEvent(e.owner(), vi, ViaProcessStructuresLayout.RESOURCE_VI,
                ViaProcessStructuresLayout.ERROR_RDMAW_PROT);
        }
        final ViTableEntry entry = engine.entry(vi);
        entry.receiveSequence(sequence + 1);
        if (0 != (status & ViplDescriptor.STATUS_ERROR_MASK))
        {
            if (ViaDescriptors.reliable(entry))
            {
                engine.breakConnection(vi, s.rdma ? ViaProcessStructuresLayout.ERROR_RDMAW_PROT :
                    ViaProcessStructuresLayout.ERROR_POST_DESC, true);
            }
            return;
        }
        if (ViTableEntry.RELIABLE_RECEPTION == entry.reliability())
        {
            // Issue 14: a Reliable Reception send completes on this, sent after the receive completed.
            engine.sendControl(vi, ViaPacketHeader.OP_ACK, sequence);
        }
    }
}
