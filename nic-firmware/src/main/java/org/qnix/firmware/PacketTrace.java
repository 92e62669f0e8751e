package org.qnix.firmware;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.OffsetEpochNanoClock;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.TraceLayout;

/**
 * The NIC's side of {@code qnix trace} ({@link TraceLayout}): while a tracer has switched tracing on, a
 * copy of every packet this NIC sends or takes, cut to the capture length, goes into the trace ring.
 * The NIC never waits for the tracer: a copy that does not fit is dropped and counted, and the packet
 * itself goes on unchanged, in its order. Off, it costs one volatile read per duty cycle
 * ({@link #refresh()}) and one branch per packet.
 */
final class PacketTrace
{
    private final AtomicBuffer control;
    private final OneToOneRingBuffer ring;
    private final AtomicBuffer records;
    private final AtomicCounter dropped;
    private final EpochNanoClock clock = new OffsetEpochNanoClock();
    private int captureLength;

    PacketTrace(final AtomicBuffer control, final AtomicBuffer ring, final AtomicCounter dropped)
    {
        this.control = control;
        this.ring = new OneToOneRingBuffer(ring);
        this.records = this.ring.buffer();
        this.dropped = dropped;
    }

    /** Once per duty cycle: is a tracer asking for packets, and how much of each. */
    void refresh()
    {
        // Writer: qnix trace, with release, when it starts and stops.
        final int length = control.getIntVolatile(TraceLayout.CAPTURE_LENGTH_OFFSET);
        captureLength = length >= PacketHeader.LENGTH ? Math.min(length, PacketHeader.LENGTH + TraceLayout.MAX_SNAP_LENGTH) : 0;
    }

    boolean isOn()
    {
        return captureLength > 0;
    }

    /**
     * @param direction  {@link TraceLayout#DIRECTION_SENT} or {@link TraceLayout#DIRECTION_TAKEN}.
     * @param wireType   the packet's WireMessageType.
     * @param packet     the packet: its header, then its payload.
     */
    void record(final int direction, final int wireType, final DirectBuffer packet, final int offset, final int length)
    {
        if (captureLength <= 0)
        {
            return;
        }
        final int captured = Math.min(length, captureLength);
        final int index = ring.tryClaim(direction, TraceLayout.PACKET_OFFSET + captured);
        if (index < 0)
        {
            dropped.increment();
            return;
        }
        records.putLong(index + TraceLayout.TIME_OFFSET, clock.nanoTime());
        records.putInt(index + TraceLayout.WIRE_TYPE_OFFSET, wireType);
        records.putInt(index + TraceLayout.WIRE_LENGTH_OFFSET, length);
        records.putBytes(index + TraceLayout.PACKET_OFFSET, packet, offset, captured);
        // Reader: qnix trace, draining the ring.
        ring.commit(index);
    }
}
