package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaPacketHeader;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * The target side of RDMA read (issue 14: "read by request/response, on reliable VIs only"): this NIC
 * answers the peer's read requests from its own process's registered memory, without any descriptor
 * of that process. A request is checked whole when it arrives (the VI's and the region's read enable,
 * the handle, owner, ptag and range) and queued on the VI; the response goes out in the VI's turn of
 * the round robin, one packet of at most a page per turn, never interleaved with a message of the VI's
 * own (a VI sends strictly in order), and every packet is checked again (read enable on region and VI,
 * each page through {@link ViaMemory}) before it is claimed: a region deregistered or its enable
 * taken away mid-response stops the response there. A refused read breaks the connection and tells the
 * requester which read failed ({@code OP_ERROR} carrying its sequence number and RDMA protection
 * status), so that read completes with that error and nothing more of it moves.
 *
 * <pre>{@code
 * responder.onRequest(vi, entry, state, packet);            // from ViaReceiver
 * int sent = responder.responsePacket(slot, state, entry);   // from ViaEngine.sendStep
 * }</pre>
 */
final class ViaReadResponder
{
    private static final int MAX_CHUNKS = 2;

    private final AtomicBuffer host;
    private final NicCounters counters;
    private final int pageSize;
    private final ViaEngine engine;
    private final ViaMemory memory;
    private final ViaPacketWriter packets;
    private final long[] chunkAddress = new long[MAX_CHUNKS];
    private final int[] chunkLength = new int[MAX_CHUNKS];

    ViaReadResponder(final FirmwareContext ctx, final ViaEngine engine)
    {
        this.host = ctx.hostMemory();
        this.counters = ctx.counters();
        this.pageSize = ctx.parameters().pageSize();
        this.engine = engine;
        this.memory = engine.memory();
        this.packets = engine.packets();
    }

    /** An {@code OP_RDMA_READ_REQUEST} for {@code vi}, Connected on the packet's connection. */
    void onRequest(final int vi, final ViTableEntry e, final ViaViState s, final ViaPacketHeader packet)
    {
        final int sequence = packet.sequence();
        final int length = packet.messageLength();
        final int expected = ViaPacketHeader.FLAG_FIRST | ViaPacketHeader.FLAG_LAST;
        if (!ViaDescriptors.reliable(e) || s.receiveStarted || expected != (packet.flags() & expected) ||
            length < 0 || s.readRequests.isFull())
        {
            // Not a request a peer of this VI can send: reads are on reliable VIs only, between
            // messages, at most a send queue's worth.
            counters.packetsDropped.increment();
            if (ViaDescriptors.reliable(e))
            {
                engine.breakConnection(vi, ViaProcessStructuresLayout.ERROR_RDMA_TRANSPORT, true);
            }
            return;
        }
        e.receiveSequence(sequence + 1);
        final int owner = e.owner();
        final int handle = packet.remoteHandle();
        final long address = packet.remoteAddress();
        if (!readable(e.attributes(), owner, e.ptag(), handle, address, length))
        {
            refuse(vi, sequence);
            return;
        }
        s.readRequests.add(handle, address, length, sequence);
        engine.schedule(owner, s);
    }

    /**
     * The next packet of the response to the oldest request of {@code s}.
     *
     * @return {@link ViaEngine#PACKET_SENT} (also when the read was refused) or {@link ViaEngine#FIFO_FULL}.
     */
    int responsePacket(final ProcessSlot slot, final ViaViState s, final ViTableEntry e)
    {
        final ViaReadRequests requests = s.readRequests;
        if (!s.responseStarted)
        {
            s.responseStarted = true;
            s.responded = 0;
            s.responseSequence = e.sendSequence();
            e.sendSequence(s.responseSequence + 1);
        }
        final int length = requests.length();
        final int payload = Math.min(pageSize, length - s.responded);
        final int handle = requests.handle();
        final long address = requests.address() + s.responded;
        final int owner = slot.index;
        final int ptag = e.ptag();
        // Issue 14: checked again for every packet, before anything of it is claimed.
        if (!readable(e.attributes(), owner, ptag, handle, address, payload))
        {
            refuse(s.vi, requests.sequence());
            return ViaEngine.PACKET_SENT;
        }
        int chunks = 0;
        for (int left = payload, at = 0; left > 0; )
        {
            final int chunk = Math.min(left, memory.toPageEnd(address + at));
            final long physical = memory.translate(owner, ptag, handle, address + at, chunk);
            if (ViaMemory.REFUSED == physical)
            {
                refuse(s.vi, requests.sequence());
                return ViaEngine.PACKET_SENT;
            }
            chunkAddress[chunks] = physical;
            chunkLength[chunks++] = chunk;
            at += chunk;
            left -= chunk;
        }
        final int claimed = packets.claim(e, payload);
        if (claimed < 0)
        {
            return ViaEngine.FIFO_FULL;
        }
        final AtomicBuffer fifo = packets.fifo(e);
        final boolean last = s.responded + payload == length;
        packets.headers(fifo, claimed, e, slot.nicPid, ViaPacketHeader.OP_RDMA_READ_RESPONSE, s.responseSequence,
            payload)
            .flags((0 == s.responded ? ViaPacketHeader.FLAG_FIRST : 0) | (last ? ViaPacketHeader.FLAG_LAST : 0))
            // The request's sequence number: the requester matches the response to its read.
            .immediateData(requests.sequence())
            .messageLength(length)
            .messageOffset(s.responded);
        int at = claimed + ViaPacketWriter.PAYLOAD_OFFSET;
        for (int c = 0; c < chunks; c++)
        {
            // The emulated DMA read from the target's page, checked above in this duty cycle.
            fifo.putBytes(at, host, (int)chunkAddress[c], chunkLength[c]);
            at += chunkLength[c];
        }
        packets.commit(e, claimed, payload, true);
        s.responded += payload;
        if (last)
        {
            s.responseStarted = false;
            requests.removeHead();
        }
        return ViaEngine.PACKET_SENT;
    }

    /** @return true if the VI and the region enable RDMA read and the bytes lie in the region, owner's and ptag's. */
    private boolean readable(final int viAttributes, final int owner, final int ptag, final int handle,
        final long address, final int bytes)
    {
        return 0 != (viAttributes & ViTableEntry.ATTRIBUTE_RDMA_READ) &&
            memory.rdmaEnabled(owner, ptag, handle, address, bytes, ViTableEntry.ATTRIBUTE_RDMA_READ);
    }

    /** Reads are on reliable VIs only, where any error breaks the connection; the requester learns which read. */
    private void refuse(final int vi, final int requestSequence)
    {
        engine.breakConnection(vi, ViaProcessStructuresLayout.ERROR_RDMAR_PROT, true, requestSequence,
            ViplDescriptor.STATUS_RDMA_PROT_ERROR);
    }
}
