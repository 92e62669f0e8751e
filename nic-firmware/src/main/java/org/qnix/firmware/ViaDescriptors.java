package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplDescriptor;

/**
 * Reads and checks VIA descriptors in the process's registered memory (issue 14, "Posting"): the
 * emulated DMA read of the descriptor page by page through {@link ViaMemory}, then every rule a post
 * must satisfy: 64-byte alignment, the descriptor inside its region with the VI's owner and ptag, only
 * the control bits VIA 1.0 defines, an op the queue may carry (Send and RDMA Write on the send queue,
 * RDMA Read too on a reliable VI (issue 14: "read ... on reliable VIs only"), and without immediate
 * data, which a read cannot carry; Send on the receive queue), at most
 * {@link ViplDescriptor#MAX_SEGMENTS} segments, each segment's handle, owner, ptag and range, a send's
 * length equal to its segments' and within the VI's maximum transfer size. A descriptor that fails is
 * completed with the status bit named here and moves nothing; one whose control segment cannot be
 * located at all cannot be completed and is reported as an asynchronous error instead.
 *
 * <pre>{@code
 * int check = descriptors.read(vi, handle, offset, true, copy);
 * if (ViaDescriptors.UNREADABLE == check) { ... async event ... }
 * else if (0 != check) { completions.complete(owner, handle, offset, 0, 0, check); }
 * }</pre>
 */
final class ViaDescriptors
{
    /** The control segment is not in the owner's registered, locked memory: no status can be written. */
    static final int UNREADABLE = -1;

    private final AtomicBuffer host;
    private final ViaMemory memory;
    private final UnsafeBuffer scratch =
        new UnsafeBuffer(new byte[ViplDescriptor.length(ViplDescriptor.MAX_SEGMENTS, true)]);
    private final ViplDescriptor descriptor = new ViplDescriptor();

    ViaDescriptors(final FirmwareContext ctx, final ViaMemory memory)
    {
        this.host = ctx.hostMemory();
        this.memory = memory;
    }

    /**
     * @param vi        the VI's table entry (owner, ptag, attributes, max transfer size).
     * @param sendQueue true for a post on the send queue.
     * @return 0 if the descriptor may run (its fields then in {@code into}), a
     * {@code ViplDescriptor.STATUS_*_ERROR} bit, or {@link #UNREADABLE}.
     */
    int read(final ViTableEntry vi, final int handle, final int offset, final boolean sendQueue,
        final ViaDescriptorCopy into)
    {
        final int owner = vi.owner();
        final int ptag = vi.ptag();
        into.handle = handle;
        into.offset = offset;
        final long address = controlSegmentAddress(owner, handle, offset);
        if (ViaMemory.REFUSED == address)
        {
            return UNREADABLE;
        }
        final long control = memory.translate(owner, ViaMemory.ANY_PTAG, handle, address,
            ViplDescriptor.CONTROL_SEGMENT_LENGTH);
        if (ViaMemory.REFUSED == control)
        {
            return UNREADABLE;
        }
        scratch.putBytes(0, host, (int)control, ViplDescriptor.CONTROL_SEGMENT_LENGTH);
        final ViplDescriptor d = descriptor.wrap(scratch, 0);
        into.control = d.control();
        into.segmentCount = d.segmentCount();
        into.immediateData = d.immediateData();
        into.length = d.length();
        into.segmentBytes = 0;
        into.rewind();
        if (!memory.inRegion(owner, ptag, handle, address, ViplDescriptor.CONTROL_SEGMENT_LENGTH))
        {
            return ViplDescriptor.STATUS_PROTECTION_ERROR;
        }
        if (0 != address % ViplDescriptor.ALIGNMENT || 0 != (into.control & ~ViplDescriptor.CONTROL_DEFINED) ||
            into.segmentCount > ViplDescriptor.MAX_SEGMENTS || !legalOp(into.control, sendQueue, reliable(vi)))
        {
            return ViplDescriptor.STATUS_FORMAT_ERROR;
        }
        final int total = ViplDescriptor.length(into.segmentCount, ViplDescriptor.isRdma(into.control));
        if (!memory.inRegion(owner, ptag, handle, address, total))
        {
            return ViplDescriptor.STATUS_FORMAT_ERROR;
        }
        // The rest of the descriptor, page by page: it may straddle pages that are not contiguous.
        for (int at = ViplDescriptor.CONTROL_SEGMENT_LENGTH; at < total; )
        {
            final int chunk = Math.min(total - at, memory.toPageEnd(address + at));
            final long physical = memory.translate(owner, ptag, handle, address + at, chunk);
            if (ViaMemory.REFUSED == physical)
            {
                return ViplDescriptor.STATUS_PROTECTION_ERROR;
            }
            scratch.putBytes(at, host, (int)physical, chunk);
            at += chunk;
        }
        if (ViplDescriptor.isRdma(into.control))
        {
            // Checked by the NIC that owns the target region, on every packet.
            into.remoteAddress = d.remoteAddress();
            into.remoteHandle = d.remoteHandle();
        }
        for (int i = 0; i < into.segmentCount; i++)
        {
            final long segmentAddress = d.segmentAddress(i);
            final int segmentHandle = d.segmentHandle(i);
            final int segmentLength = d.segmentLength(i);
            if (segmentLength < 0 || !memory.inRegion(owner, ptag, segmentHandle, segmentAddress, segmentLength))
            {
                return ViplDescriptor.STATUS_PROTECTION_ERROR;
            }
            into.segmentAddress[i] = segmentAddress;
            into.segmentHandle[i] = segmentHandle;
            into.segmentLength[i] = segmentLength;
            into.segmentBytes += segmentLength;
        }
        if (sendQueue)
        {
            if (into.length != into.segmentBytes)
            {
                return ViplDescriptor.STATUS_FORMAT_ERROR;
            }
            if (into.length > vi.maxTransfer())
            {
                return ViplDescriptor.STATUS_LENGTH_ERROR;
            }
        }
        return 0;
    }

    /**
     * @return the VIA address of the descriptor's control segment if it lies, whole and within one
     * page, in a live region of the owner (any ptag: a descriptor under another ptag is still its
     * owner's to complete with a protection error), else {@link ViaMemory#REFUSED}.
     */
    long controlSegmentAddress(final int owner, final int handle, final int offset)
    {
        if (offset < 0 || 0 != offset % Integer.BYTES)
        {
            return ViaMemory.REFUSED;
        }
        final long base = memory.base(owner, handle);
        if (ViaMemory.REFUSED == base)
        {
            return ViaMemory.REFUSED;
        }
        final long address = base + offset;
        if (memory.toPageEnd(address) < ViplDescriptor.CONTROL_SEGMENT_LENGTH ||
            !memory.inRegion(owner, ViaMemory.ANY_PTAG, handle, address, ViplDescriptor.CONTROL_SEGMENT_LENGTH))
        {
            return ViaMemory.REFUSED;
        }
        return address;
    }

    /**
     * Send queues carry sends, RDMA writes and, on reliable VIs, RDMA reads without immediate data;
     * receive queues only receives.
     */
    private static boolean legalOp(final int control, final boolean sendQueue, final boolean reliable)
    {
        final int op = control & ViplDescriptor.CONTROL_OP_MASK;
        if (ViplDescriptor.OP_RDMA_READ == op)
        {
            return sendQueue && reliable && 0 == (control & ViplDescriptor.CONTROL_IMMEDIATE);
        }
        return ViplDescriptor.OP_SEND == op || sendQueue && ViplDescriptor.OP_RDMA_WRITE == op;
    }

    /**
     * @return the status op bits a descriptor with {@code control} completes with on its queue: the
     * op it names, so that an error or a flush reports the operation the process posted.
     */
    static int statusOp(final int control, final boolean sendQueue)
    {
        if (!sendQueue)
        {
            return ViplDescriptor.STATUS_OP_RECEIVE;
        }
        switch (control & ViplDescriptor.CONTROL_OP_MASK)
        {
            case ViplDescriptor.OP_RDMA_WRITE: return ViplDescriptor.STATUS_OP_RDMA_WRITE;
            case ViplDescriptor.OP_RDMA_READ: return ViplDescriptor.STATUS_OP_RDMA_READ;
            default: return ViplDescriptor.STATUS_OP_SEND;
        }
    }

    static boolean reliable(final ViTableEntry vi)
    {
        return ViTableEntry.UNRELIABLE != vi.reliability();
    }
}
