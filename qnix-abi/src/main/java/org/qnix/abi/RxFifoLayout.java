package org.qnix.abi;

import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * A NIC input FIFO, {@code node-X-Y/rx.fifo}: the {@link FileDescriptorBlock}, then an Agrona
 * many-to-one ring buffer that every NIC of the cluster appends packets to (DESIGN.md 3.3). Each
 * record is a {@link PacketHeader} followed by at most one page of payload; the record type is a
 * {@link WireMessageType}.
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  File Descriptor Block (4 KiB)                                |
 *  +---------------------------------------------------------------+ RING_OFFSET
 *  |  Ring buffer data: capacity bytes (a power of two)            |
 *  +---------------------------------------------------------------+
 *  |  Ring buffer trailer (RingBufferDescriptor.TRAILER_LENGTH)    |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class RxFifoLayout
{
    public static final int RING_OFFSET = FileDescriptorBlock.LENGTH;

    private RxFifoLayout()
    {
    }

    public static long fileLength(final ClusterParameters params)
    {
        return RING_OFFSET + (long)params.rxFifoBytes() + RingBufferDescriptor.TRAILER_LENGTH;
    }

    public static int ringLength(final ClusterParameters params)
    {
        return params.rxFifoBytes() + RingBufferDescriptor.TRAILER_LENGTH;
    }
}
