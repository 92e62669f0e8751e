package org.qnix.firmware;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplDescriptor;

/**
 * The emulated DMA writes of an arriving VIA message into its process's memory (issue 14): into the
 * data segments of a receive or of an RDMA read, or at an RDMA write's target address. Every page goes
 * through {@link ViaMemory} in the duty cycle that copies it; an RDMA write's packet is checked whole
 * (write enable on VI and region, handle, owner, ptag, range) before any byte of it is written. A
 * refusal is recorded as the message's error, and nothing more of the message is written.
 *
 * <pre>{@code
 * scatter.intoSegments(entry, state.receiving, buffer, payloadIndex, payload, state);
 * scatter.writeRemote(entry, state, buffer, payloadIndex, payload, messageOffset);
 * }</pre>
 */
final class ViaScatter
{
    /** A packet carries at most a page: its bytes lie on at most two pages of the target. */
    private static final int MAX_CHUNKS = 2;

    private final AtomicBuffer host;
    private final ViaMemory memory;
    private final long[] chunkAddress = new long[MAX_CHUNKS];
    private final int[] chunkLength = new int[MAX_CHUNKS];

    ViaScatter(final FirmwareContext ctx, final ViaMemory memory)
    {
        this.host = ctx.hostMemory();
        this.memory = memory;
    }

    /** @return true if the VI and the target region enable RDMA write for these bytes (handle, owner, ptag, range). */
    boolean writable(final ViTableEntry e, final int handle, final long address, final int bytes)
    {
        return writable(e.attributes(), e.owner(), e.ptag(), handle, address, bytes);
    }

    private boolean writable(final int viAttributes, final int owner, final int ptag, final int handle,
        final long address, final int bytes)
    {
        return 0 != (viAttributes & ViTableEntry.ATTRIBUTE_RDMA_WRITE) &&
            memory.rdmaEnabled(owner, ptag, handle, address, bytes, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
    }

    /**
     * RDMA write: the payload at the target address. Issue 14: checked on every packet, whole, before
     * anything of it is written, so a region deregistered or its enable taken away mid-message stops
     * the write at that packet with nothing written from it.
     */
    void writeRemote(final ViTableEntry e, final ViaViState s, final MutableDirectBuffer buffer,
        final int payloadIndex, final int payload, final int messageOffset)
    {
        // The VI entry's words once: the driver may change the entry meanwhile (the checks and the
        // translations below must agree).
        final int owner = e.owner();
        final int ptag = e.ptag();
        final long address = s.remoteAddress + messageOffset;
        if (!writable(e.attributes(), owner, ptag, s.remoteHandle, address, payload))
        {
            s.receiveError = ViplDescriptor.STATUS_RDMA_PROT_ERROR;
            return;
        }
        int chunks = 0;
        for (int left = payload, at = 0; left > 0; )
        {
            final int chunk = Math.min(left, memory.toPageEnd(address + at));
            final long physical = memory.translate(owner, ptag, s.remoteHandle, address + at, chunk);
            if (ViaMemory.REFUSED == physical)
            {
                s.receiveError = ViplDescriptor.STATUS_RDMA_PROT_ERROR;
                return;
            }
            chunkAddress[chunks] = physical;
            chunkLength[chunks++] = chunk;
            at += chunk;
            left -= chunk;
        }
        int at = payloadIndex;
        for (int c = 0; c < chunks; c++)
        {
            // The emulated DMA write into the target's page, checked above in this duty cycle.
            host.putBytes((int)chunkAddress[c], buffer, at, chunkLength[c]);
            at += chunkLength[c];
        }
    }

    /**
     * The payload into a descriptor's segments at its cursor, page by page, each page checked in this
     * duty cycle; the message's checks upstream keep it within the segments.
     */
    void intoSegments(final ViTableEntry e, final ViaDescriptorCopy d, final MutableDirectBuffer buffer,
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
}
