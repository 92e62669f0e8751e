package org.qnix.firmware;

import org.agrona.MutableDirectBuffer;
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
 * is dropped and counted. A message's packets must follow each other exactly: the first at offset 0,
 * each next one where the last ended, of the first's message length, none past it, the last ending on
 * it; a packet that does not is dropped and counted, and at the reliable levels breaks the connection,
 * so no forged or inconsistent packet writes beyond what its message declared or at another offset.
 *
 * <p>A Send's first packet takes the head receive descriptor, read and checked again (a receive
 * shorter than the message moves nothing and completes LENGTH); an RDMA write's packets go to the
 * target region its header names, checked whole at the first packet and again, whole, at every packet
 * (handle, owner, ptag, range, write enable on region and VI) before anything of it is written, and
 * with immediate data it consumes a receive descriptor too; an RDMA read's response is scattered into
 * the read descriptor's local segments. Each page goes through {@link ViaMemory}. The last packet
 * completes the receive ({@link ViaCompletions}) and, at Reliable Reception, sends the {@code OP_ACK}
 * that completes the sender's descriptor; a read's last response packet completes the read. With no
 * receive posted an Unreliable message is dropped and counted (the VI entry's Dropped word); at the
 * reliable levels it breaks the connection, as does any error. Read requests go to {@link
 * ViaReadResponder}.
 *
 * <pre>{@code
 * receiver.onPacket(header, buffer, index, length);   // from SystemMessageDispatcher
 * }</pre>
 */
final class ViaReceiver
{
    private static final int PAYLOAD_OFFSET = ViaPacketWriter.PAYLOAD_OFFSET;

    private final NicCounters counters;
    private final ViaEngine engine;
    private final ViaMemory memory;
    private final ViaDescriptors descriptors;
    private final ViaCompletions completions;
    private final ViaReadResponder responder;
    private final ViaScatter scatter;
    private final ViaPacketHeader viaHeader = new ViaPacketHeader();

    ViaReceiver(final FirmwareContext ctx, final ViaEngine engine)
    {
        this.counters = ctx.counters();
        this.engine = engine;
        this.scatter = new ViaScatter(ctx, engine.memory());
        this.memory = engine.memory();
        this.descriptors = engine.descriptors();
        this.completions = engine.completions();
        this.responder = engine.responder();
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
            case ViaPacketHeader.OP_RDMA_READ_RESPONSE:
                onData(vi, e, packet, buffer, index + PAYLOAD_OFFSET, length - PAYLOAD_OFFSET);
                break;

            case ViaPacketHeader.OP_RDMA_READ_REQUEST:
                responder.onRequest(vi, e, engine.state(vi), packet);
                break;

            case ViaPacketHeader.OP_ACK:
                engine.onAck(vi, packet.sequence());
                break;

            case ViaPacketHeader.OP_ERROR:
                // The peer broke the connection: this side goes to Error too, without answering.
                engine.onPeerError(vi, packet.sequence(), packet.immediateData());
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
        final boolean last = 0 != (flags & ViaPacketHeader.FLAG_LAST);
        final int messageLength = packet.messageLength();
        if (0 != (flags & ViaPacketHeader.FLAG_FIRST))
        {
            if (0 != packet.messageOffset() || !fits(messageLength, 0, payload, last))
            {
                malformed(vi, e, s);
                return;
            }
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
        else if (!s.receiveStarted && !s.dropping || packet.sequence() != s.receiveSequence)
        {
            counters.viaPacketsStale.increment();
            return;
        }
        else if (packet.messageOffset() != s.received || messageLength != s.messageLength ||
            !fits(messageLength, s.received, payload, last))
        {
            malformed(vi, e, s);
            return;
        }
        s.received += payload;
        counters.dataPacketsReceived.increment();
        if (s.dropping)
        {
            if (last)
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
                scatter.writeRemote(e, s, buffer, payloadIndex, payload, packet.messageOffset());
            }
            else
            {
                scatter.intoSegments(e, s.readResponse ? s.reading : s.receiving, buffer, payloadIndex, payload, s);
            }
        }
        counters.dataBytesReceived.getAndAddRelease(payload);
        if (last)
        {
            final boolean immediate = 0 != (flags & ViaPacketHeader.FLAG_IMMEDIATE);
            finishMessage(vi, e, s, immediate ? packet.immediateData() : 0,
                s.receiveError | (immediate ? ViplDescriptor.STATUS_IMMEDIATE : 0));
        }
    }

    /**
     * @return true if {@code payload} bytes at {@code offset} of a message of {@code messageLength} lie
     * within it, within a page, and end on it if the packet is the last.
     */
    private boolean fits(final int messageLength, final int offset, final int payload, final boolean last)
    {
        final long end = (long)offset + payload;
        return messageLength >= 0 && payload <= memory.pageSize() && end <= messageLength &&
            (!last || end == messageLength);
    }

    /**
     * A packet that does not continue its message as the sender would have: dropped and counted. At
     * the reliable levels the message in progress ends with a transport error and the connection breaks.
     */
    private void malformed(final int vi, final ViTableEntry e, final ViaViState s)
    {
        counters.packetsDropped.increment();
        if (!ViaDescriptors.reliable(e))
        {
            return;
        }
        if (s.receiveStarted && s.usesReceive)
        {
            s.receives.finish(s.receives.head(), (s.rdma ? ViplDescriptor.STATUS_OP_REMOTE_RDMA_WRITE :
                ViplDescriptor.STATUS_OP_RECEIVE) | ViplDescriptor.STATUS_TRANSPORT_ERROR, s.received);
        }
        else if (s.receiveStarted && s.readResponse)
        {
            engine.readEnded(s, s.readPosition, ViplDescriptor.STATUS_OP_RDMA_READ |
                ViplDescriptor.STATUS_TRANSPORT_ERROR, 0);
        }
        s.receiveStarted = false;
        engine.breakConnection(vi, ViaProcessStructuresLayout.ERROR_RDMA_TRANSPORT, true);
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
        s.readResponse = ViaPacketHeader.OP_RDMA_READ_RESPONSE == packet.op();
        if (s.readResponse)
        {
            return startResponse(vi, e, s, packet);
        }
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
            // The whole target is checked here too, so that a refused write writes nothing at all.
            if (!scatter.writable(e, s.remoteHandle, s.remoteAddress, s.messageLength))
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

    /**
     * An RDMA read's response begins: it is for the oldest read of the send queue still in flight,
     * whose request's sequence number and length it must carry; the read descriptor is read and
     * checked again, and its local segments take the data.
     *
     * @return false if no read of this VI asked for it (dropped; a reliable connection breaks).
     */
    private boolean startResponse(final int vi, final ViTableEntry e, final ViaViState s, final ViaPacketHeader packet)
    {
        s.usesReceive = false;
        final ViaWorkQueue sends = s.sends;
        final long p = ViaEngine.oldestReadInFlight(s);
        if (p < 0 || sends.sequence(p) != packet.immediateData() || sends.length(p) != s.messageLength)
        {
            counters.packetsDropped.increment();
            if (ViaDescriptors.reliable(e))
            {
                engine.breakConnection(vi, ViaProcessStructuresLayout.ERROR_RDMA_TRANSPORT, true);
            }
            return false;
        }
        s.readPosition = p;
        s.receiveStarted = true;
        final ViaDescriptorCopy d = s.reading;
        final int check = descriptors.read(e, sends.handle(p), sends.offset(p), true, d);
        if (0 != check)
        {
            s.receiveError = ViaDescriptors.UNREADABLE == check ? ViplDescriptor.STATUS_PROTECTION_ERROR : check;
        }
        else if (ViplDescriptor.OP_RDMA_READ != (d.control & ViplDescriptor.CONTROL_OP_MASK) ||
            d.length != s.messageLength)
        {
            // The process rewrote the descriptor while its read was in flight.
            s.receiveError = ViplDescriptor.STATUS_FORMAT_ERROR;
        }
        return true;
    }

    /**
     * The message's end. A consumed receive completes: length, immediate data, status; counter and
     * wake; CQ entry ({@link ViaCompletions#complete}). A read's response finishes the read, which
     * completes in its turn on the send queue. An RDMA write without immediate data completes nothing
     * here; a refused one is an asynchronous error. Then Reliable Reception acknowledges a message
     * (not a response: it is its own acknowledgement), or a reliable VI with an error breaks.
     */
    private void finishMessage(final int vi, final ViTableEntry e, final ViaViState s, final int immediateData,
        final int status)
    {
        final int sequence = s.receiveSequence;
        final boolean failed = 0 != (status & ViplDescriptor.STATUS_ERROR_MASK);
        s.receiveStarted = false;
        if (s.readResponse)
        {
            s.readResponse = false;
            engine.readEnded(s, s.readPosition, ViplDescriptor.STATUS_OP_RDMA_READ |
                (status & ViplDescriptor.STATUS_ERROR_MASK), failed ? 0 : s.messageLength);
            e.receiveSequence(sequence + 1);
            if (failed && ViaDescriptors.reliable(e))
            {
                engine.breakConnection(vi, ViaProcessStructuresLayout.ERROR_POST_DESC, true);
                return;
            }
            engine.completeSends(engine.entry(vi), s);
            return;
        }
        if (s.usesReceive)
        {
            final ViaWorkQueue receives = s.receives;
            final long head = receives.head();
            completions.complete(e, s, false, receives.handle(head), receives.offset(head), s.messageLength,
                immediateData, (s.rdma ? ViplDescriptor.STATUS_OP_REMOTE_RDMA_WRITE : ViplDescriptor.STATUS_OP_RECEIVE) |
                status);
            receives.removeHead();
            counters.receivesCompleted.increment();
            // Receives that failed at their post behind this one complete now, in posting order.
            engine.completeReceives(e, s);
        }
        final ViTableEntry entry = engine.entry(vi);
        if (!s.usesReceive && failed && !ViaDescriptors.reliable(entry))
        {
            // No descriptor to tell: the event is the only report. A reliable VI's break below reports it
            // (once: VIA 1.0 calls the error handler once per error).
            completions.asyncEvent(s.owner, vi, ViaProcessStructuresLayout.RESOURCE_VI,
                ViaProcessStructuresLayout.ERROR_RDMAW_PROT);
        }
        entry.receiveSequence(sequence + 1);
        if (failed)
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
            engine.packets().sendControl(entry, ViaPacketHeader.OP_ACK, sequence, 0);
        }
    }
}
