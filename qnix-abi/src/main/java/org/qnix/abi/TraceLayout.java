package org.qnix.abi;

import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * The packet trace of one NIC, in its counters file ({@link CountersLayout}): a control block that
 * {@code qnix trace} writes to switch tracing on and off, and a one-to-one ring buffer the NIC control
 * program appends a record to for every packet it sends or takes while tracing is on. The NIC never
 * waits for the tracer: a record that does not fit is dropped and counted ("trace records dropped"),
 * and the packet itself goes on as if nobody watched.
 *
 * <pre>
 *  Control block (128 bytes; the tracer writes, the NIC reads):
 *  +---------------------------------------------------------------+ 0
 *  |  Tracer OS pid (64 bits; 0 = nobody traces; CAS to take)      |
 *  +---------------------------------------------------------------+ 8
 *  |  Capture length: header + payload bytes kept (0 = off, release)|
 *  +---------------------------------------------------------------+ 12
 *  |  Reserved to 128 bytes                                        |
 *  +---------------------------------------------------------------+ 128
 *
 *  Ring record (Agrona record type DIRECTION_SENT or DIRECTION_TAKEN):
 *  +---------------------------------------------------------------+ 0
 *  |  Time, epoch nanoseconds (64 bits)                            |
 *  +---------------------------------------------------------------+ 8
 *  |  Wire message type (WireMessageType)                          |
 *  +---------------------------------------------------------------+ 12
 *  |  Packet length on the wire: header and whole payload          |
 *  +---------------------------------------------------------------+ 16
 *  |  The packet: 16-byte PacketHeader, then at most snap length   |
 *  |  bytes of its payload                                         |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The NIC reads the capture length once per duty cycle, so tracing costs one volatile read per cycle
 * and one branch per packet while it is off.
 */
public final class TraceLayout
{
    public static final int TRACER_PID_OFFSET = 0;
    /** Bytes kept of each packet: the 16-byte header plus the snap length of payload; 0 = tracing off. */
    public static final int CAPTURE_LENGTH_OFFSET = TRACER_PID_OFFSET + Long.BYTES;
    public static final int CONTROL_LENGTH = 128;

    /** Trace ring data capacity: a power of two, as Agrona's ring buffers need. */
    public static final int RING_CAPACITY = 2 * 1024 * 1024;
    public static final int RING_LENGTH = RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH;

    public static final int DIRECTION_SENT = 1;
    public static final int DIRECTION_TAKEN = 2;

    public static final int TIME_OFFSET = 0;
    public static final int WIRE_TYPE_OFFSET = TIME_OFFSET + Long.BYTES;
    public static final int WIRE_LENGTH_OFFSET = WIRE_TYPE_OFFSET + Integer.BYTES;
    public static final int PACKET_OFFSET = WIRE_LENGTH_OFFSET + Integer.BYTES;

    /** Default payload bytes kept per packet: every system message whole, the start of a data packet. */
    public static final int DEFAULT_SNAP_LENGTH = 128;
    /** The largest snap length: a whole data packet of the largest page. */
    public static final int MAX_SNAP_LENGTH = 64 * 1024;

    private TraceLayout()
    {
    }
}
