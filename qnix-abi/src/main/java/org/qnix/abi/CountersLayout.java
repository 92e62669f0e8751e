package org.qnix.abi;

import org.agrona.concurrent.status.CountersReader;

/**
 * A NIC's counters and packet trace, {@code node-X-Y/counters}: the {@link FileDescriptorBlock}, Agrona
 * counter metadata and values buffers, then the trace control block and the trace ring. The firmware
 * allocates and updates the counters; {@code qnix stat} and tests read them with a {@link CountersReader}.
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  File Descriptor Block (4 KiB)                                |
 *  +---------------------------------------------------------------+ METADATA_OFFSET
 *  |  Metadata: MAX_COUNTERS x CountersReader.METADATA_LENGTH      |
 *  +---------------------------------------------------------------+ VALUES_OFFSET
 *  |  Values: MAX_COUNTERS x CountersReader.COUNTER_LENGTH         |
 *  +---------------------------------------------------------------+ TRACE_CONTROL_OFFSET
 *  |  Trace control (128 bytes, the tracer's, see TraceLayout)     |
 *  +---------------------------------------------------------------+ TRACE_RING_OFFSET
 *  |  Trace ring: an Agrona one-to-one ring buffer (NIC -> tracer) |
 *  +---------------------------------------------------------------+ FILE_LENGTH
 * </pre>
 */
public final class CountersLayout
{
    public static final int MAX_COUNTERS = 64;
    public static final int METADATA_OFFSET = FileDescriptorBlock.LENGTH;
    public static final int METADATA_LENGTH = MAX_COUNTERS * CountersReader.METADATA_LENGTH;
    public static final int VALUES_OFFSET = METADATA_OFFSET + METADATA_LENGTH;
    public static final int VALUES_LENGTH = MAX_COUNTERS * CountersReader.COUNTER_LENGTH;
    public static final int TRACE_CONTROL_OFFSET = VALUES_OFFSET + VALUES_LENGTH;
    public static final int TRACE_RING_OFFSET = TRACE_CONTROL_OFFSET + TraceLayout.CONTROL_LENGTH;
    public static final int FILE_LENGTH = TRACE_RING_OFFSET + TraceLayout.RING_LENGTH;

    /** Type id of every QNIX NIC counter. */
    public static final int NIC_COUNTER_TYPE_ID = 1001;

    private CountersLayout()
    {
    }
}
