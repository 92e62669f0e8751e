package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * A VIA descriptor ({@code VIP_DESCRIPTOR} of VIPL 1.0's {@code vipl.h}), in registered host memory,
 * {@link #ALIGNMENT}-byte aligned: a control segment, then for RDMA one address segment, then the data
 * segments, as many as the segment count says. The process writes it and posts it (a
 * {@link ProcessCommand#VIA_POST_SEND} or {@link ProcessCommand#VIA_POST_RECV} Command Queue entry
 * naming its memory handle and offset); the NIC reads and checks it and, at completion, writes the
 * length, the immediate data (receives) and last the status, with release semantics. Both sides use
 * this flyweight, so the layout exists once.
 *
 * <p>An "address" (next descriptor, data segment, address segment) is a virtual address of the
 * process's DMA address space (see {@link ViaAddressSpace}); its memory handle names the registered
 * region it must lie in. Little-endian like every other structure here.
 *
 * <pre>
 *  Control segment (32 bytes):
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+ 0
 *  |  Next descriptor address (64 bits)                            |
 *  +---------------------------------------------------------------+ 8
 *  |  Next descriptor memory handle                                |
 *  +-------------------------------+-------------------------------+ 12
 *  |  Segment count                |  Control (op, IMMEDIATE,      |
 *  |                               |  QFENCE)                      |
 *  +-------------------------------+-------------------------------+ 16
 *  |  Reserved                                                     |
 *  +---------------------------------------------------------------+ 20
 *  |  Immediate data                                               |
 *  +---------------------------------------------------------------+ 24
 *  |  Length (total bytes; written back at completion)             |
 *  +---------------------------------------------------------------+ 28
 *  |  Status (NIC, release; DONE, error bits, op completed)        |
 *  +---------------------------------------------------------------+ 32
 *  Address segment (16 bytes, RDMA only):
 *  |  Remote address (64 bits)                                     |
 *  |  Remote memory handle                                         |
 *  |  Reserved                                                     |
 *  +---------------------------------------------------------------+ 48
 *  Data segment i (16 bytes each):
 *  |  Local address (64 bits)                                      |
 *  |  Local memory handle                                          |
 *  |  Length                                                       |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <pre>{@code
 * ViplDescriptor desc = new ViplDescriptor().wrap(region.buffer(), 0);
 * desc.reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(100);
 * desc.dataSegment(0, address, handle, 100);
 * // ... post, then:
 * if (desc.isDone() && !desc.hasError()) { ... }
 * }</pre>
 */
public final class ViplDescriptor
{
    /** Descriptors start on a 64-byte boundary (VIA 1.0), so the control segment never straddles a line. */
    public static final int ALIGNMENT = 64;

    public static final int NEXT_ADDRESS_OFFSET = 0;
    public static final int NEXT_HANDLE_OFFSET = NEXT_ADDRESS_OFFSET + Long.BYTES;
    public static final int SEGMENT_COUNT_OFFSET = NEXT_HANDLE_OFFSET + Integer.BYTES;
    public static final int CONTROL_OFFSET = SEGMENT_COUNT_OFFSET + Short.BYTES;
    public static final int RESERVED_OFFSET = CONTROL_OFFSET + Short.BYTES;
    public static final int IMMEDIATE_DATA_OFFSET = RESERVED_OFFSET + Integer.BYTES;
    public static final int LENGTH_OFFSET = IMMEDIATE_DATA_OFFSET + Integer.BYTES;
    public static final int STATUS_OFFSET = LENGTH_OFFSET + Integer.BYTES;
    public static final int CONTROL_SEGMENT_LENGTH = STATUS_OFFSET + Integer.BYTES;

    public static final int ADDRESS_SEGMENT_OFFSET = CONTROL_SEGMENT_LENGTH;
    public static final int REMOTE_ADDRESS_OFFSET = 0;
    public static final int REMOTE_HANDLE_OFFSET = REMOTE_ADDRESS_OFFSET + Long.BYTES;
    public static final int ADDRESS_SEGMENT_LENGTH = REMOTE_HANDLE_OFFSET + 2 * Integer.BYTES;
    /** Where an RDMA descriptor's data segments start: after its address segment. */
    public static final int RDMA_DATA_SEGMENTS_OFFSET = ADDRESS_SEGMENT_OFFSET + ADDRESS_SEGMENT_LENGTH;

    public static final int SEGMENT_ADDRESS_OFFSET = 0;
    public static final int SEGMENT_HANDLE_OFFSET = SEGMENT_ADDRESS_OFFSET + Long.BYTES;
    public static final int SEGMENT_LENGTH_OFFSET = SEGMENT_HANDLE_OFFSET + Integer.BYTES;
    public static final int DATA_SEGMENT_LENGTH = SEGMENT_LENGTH_OFFSET + Integer.BYTES;

    /** The most data segments one descriptor may carry (VIPL QueryNic's MaxSegmentsPerDesc). */
    public static final int MAX_SEGMENTS = 64;

    // Control field (vipl.h VIP_CONTROL_*): the op in the low two bits.
    public static final int CONTROL_OP_MASK = 0x3;
    public static final int OP_SEND = 0x0;
    public static final int OP_RDMA_WRITE = 0x1;
    public static final int OP_RDMA_READ = 0x2;
    public static final int CONTROL_IMMEDIATE = 0x4;
    public static final int CONTROL_QFENCE = 0x8;
    /** Every control bit VIA 1.0 defines; a descriptor with another set is a FORMAT error. */
    public static final int CONTROL_DEFINED = CONTROL_OP_MASK | CONTROL_IMMEDIATE | CONTROL_QFENCE;

    // Status field (vipl.h VIP_STATUS_*), written by the NIC.
    public static final int STATUS_DONE = 0x1;
    public static final int STATUS_FORMAT_ERROR = 0x2;
    public static final int STATUS_PROTECTION_ERROR = 0x4;
    public static final int STATUS_LENGTH_ERROR = 0x8;
    public static final int STATUS_PARTIAL_ERROR = 0x10;
    public static final int STATUS_DESC_FLUSHED_ERROR = 0x20;
    public static final int STATUS_TRANSPORT_ERROR = 0x40;
    public static final int STATUS_RDMA_PROT_ERROR = 0x80;
    public static final int STATUS_REMOTE_DESC_ERROR = 0x100;
    public static final int STATUS_ERROR_MASK = 0x1FE;
    public static final int STATUS_OP_MASK = 0x70000;
    public static final int STATUS_OP_SEND = 0x00000;
    public static final int STATUS_OP_RECEIVE = 0x10000;
    public static final int STATUS_OP_RDMA_WRITE = 0x20000;
    public static final int STATUS_OP_REMOTE_RDMA_WRITE = 0x30000;
    public static final int STATUS_OP_RDMA_READ = 0x40000;
    public static final int STATUS_IMMEDIATE = 0x80000;

    private AtomicBuffer buffer;
    private int offset;

    public ViplDescriptor wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int offset()
    {
        return offset;
    }

    /** @return the bytes a descriptor with {@code segments} data segments spans, with or without an address segment. */
    public static int length(final int segments, final boolean rdma)
    {
        return CONTROL_SEGMENT_LENGTH + (rdma ? ADDRESS_SEGMENT_LENGTH : 0) + segments * DATA_SEGMENT_LENGTH;
    }

    /** @return true for an op that carries an address segment. */
    public static boolean isRdma(final int control)
    {
        final int op = control & CONTROL_OP_MASK;
        return OP_RDMA_WRITE == op || OP_RDMA_READ == op;
    }

    /** Process side: clears the control segment, the status last (release), before the descriptor is reused. */
    public ViplDescriptor reset()
    {
        buffer.putLong(offset + NEXT_ADDRESS_OFFSET, 0);
        buffer.putInt(offset + NEXT_HANDLE_OFFSET, 0);
        buffer.putShort(offset + SEGMENT_COUNT_OFFSET, (short)0);
        buffer.putShort(offset + CONTROL_OFFSET, (short)0);
        buffer.putInt(offset + RESERVED_OFFSET, 0);
        buffer.putInt(offset + IMMEDIATE_DATA_OFFSET, 0);
        buffer.putInt(offset + LENGTH_OFFSET, 0);
        // Reader: the process itself, polling for DONE; the NIC reads nothing before the post.
        buffer.putIntRelease(offset + STATUS_OFFSET, 0);
        return this;
    }

    public long nextAddress()
    {
        return buffer.getLong(offset + NEXT_ADDRESS_OFFSET);
    }

    public ViplDescriptor next(final long address, final int handle)
    {
        buffer.putLong(offset + NEXT_ADDRESS_OFFSET, address);
        buffer.putInt(offset + NEXT_HANDLE_OFFSET, handle);
        return this;
    }

    public int nextHandle()
    {
        return buffer.getInt(offset + NEXT_HANDLE_OFFSET);
    }

    public int segmentCount()
    {
        return buffer.getShort(offset + SEGMENT_COUNT_OFFSET) & 0xFFFF;
    }

    public ViplDescriptor segmentCount(final int count)
    {
        buffer.putShort(offset + SEGMENT_COUNT_OFFSET, (short)count);
        return this;
    }

    public int control()
    {
        return buffer.getShort(offset + CONTROL_OFFSET) & 0xFFFF;
    }

    public ViplDescriptor control(final int control)
    {
        buffer.putShort(offset + CONTROL_OFFSET, (short)control);
        return this;
    }

    public int immediateData()
    {
        return buffer.getInt(offset + IMMEDIATE_DATA_OFFSET);
    }

    public ViplDescriptor immediateData(final int data)
    {
        buffer.putInt(offset + IMMEDIATE_DATA_OFFSET, data);
        return this;
    }

    public int length()
    {
        return buffer.getInt(offset + LENGTH_OFFSET);
    }

    public ViplDescriptor length(final int length)
    {
        buffer.putInt(offset + LENGTH_OFFSET, length);
        return this;
    }

    /** @return the status (acquire): the NIC writes it last, with release. */
    public int status()
    {
        // Writer: the NIC at completion, after the length and immediate data.
        return buffer.getIntVolatile(offset + STATUS_OFFSET);
    }

    public boolean isDone()
    {
        return 0 != (status() & STATUS_DONE);
    }

    public boolean hasError()
    {
        return 0 != (status() & STATUS_ERROR_MASK);
    }

    /**
     * NIC side: the completion. Length and immediate data first, the status last with release; the
     * readers are the process polling the status and, after it, the completion counter's waiters.
     */
    public void complete(final int length, final int immediateData, final int status)
    {
        buffer.putInt(offset + LENGTH_OFFSET, length);
        buffer.putInt(offset + IMMEDIATE_DATA_OFFSET, immediateData);
        buffer.putIntRelease(offset + STATUS_OFFSET, status | STATUS_DONE);
    }

    /**
     * NIC side: the completion of a send-queue descriptor. Its immediate data is the program's, what it
     * sent (VIPL.md: it travels from the send descriptor to the receive descriptor), and stays as the
     * program wrote it; the length, then the status with release, as {@link #complete}.
     */
    public void completeSend(final int length, final int status)
    {
        buffer.putInt(offset + LENGTH_OFFSET, length);
        buffer.putIntRelease(offset + STATUS_OFFSET, status | STATUS_DONE);
    }

    public long remoteAddress()
    {
        return buffer.getLong(offset + ADDRESS_SEGMENT_OFFSET + REMOTE_ADDRESS_OFFSET);
    }

    public int remoteHandle()
    {
        return buffer.getInt(offset + ADDRESS_SEGMENT_OFFSET + REMOTE_HANDLE_OFFSET);
    }

    public ViplDescriptor addressSegment(final long remoteAddress, final int remoteHandle)
    {
        buffer.putLong(offset + ADDRESS_SEGMENT_OFFSET + REMOTE_ADDRESS_OFFSET, remoteAddress);
        buffer.putInt(offset + ADDRESS_SEGMENT_OFFSET + REMOTE_HANDLE_OFFSET, remoteHandle);
        buffer.putInt(offset + ADDRESS_SEGMENT_OFFSET + REMOTE_HANDLE_OFFSET + Integer.BYTES, 0);
        return this;
    }

    /** @return the offset of data segment {@code i} from the descriptor's start, after the address segment of RDMA ops. */
    public int dataSegmentOffset(final int i)
    {
        return (isRdma(control()) ? RDMA_DATA_SEGMENTS_OFFSET : CONTROL_SEGMENT_LENGTH) +
            i * DATA_SEGMENT_LENGTH;
    }

    /** Writes data segment {@code i}; the control must be set first (it decides where the segments start). */
    public ViplDescriptor dataSegment(final int i, final long address, final int handle, final int length)
    {
        final int segment = offset + dataSegmentOffset(i);
        buffer.putLong(segment + SEGMENT_ADDRESS_OFFSET, address);
        buffer.putInt(segment + SEGMENT_HANDLE_OFFSET, handle);
        buffer.putInt(segment + SEGMENT_LENGTH_OFFSET, length);
        return this;
    }

    public long segmentAddress(final int i)
    {
        return buffer.getLong(offset + dataSegmentOffset(i) + SEGMENT_ADDRESS_OFFSET);
    }

    public int segmentHandle(final int i)
    {
        return buffer.getInt(offset + dataSegmentOffset(i) + SEGMENT_HANDLE_OFFSET);
    }

    public int segmentLength(final int i)
    {
        return buffer.getInt(offset + dataSegmentOffset(i) + SEGMENT_LENGTH_OFFSET);
    }
}
