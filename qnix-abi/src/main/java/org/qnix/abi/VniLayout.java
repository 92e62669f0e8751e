package org.qnix.abi;

/**
 * A Virtual Network Interface: the slice of NIC SDRAM a registered process maps (thesis 3.3.1,
 * Figure 2). Components are consecutive, in this order, so each pointer of the NIC Memory Info is the
 * Command Queue address plus a fixed offset (thesis 3.3.2). Offsets here are relative to the VNI start.
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  Command Queue: N entries of CommandQueueLayout.ENTRY_LENGTH  |
 *  +---------------------------------------------------------------+ sendContextListOffset
 *  |  Send Context List: M x ContextLayout.CONTEXT_LENGTH          |
 *  +---------------------------------------------------------------+ receiveContextListOffset
 *  |  Receive Context List: M x ContextLayout.CONTEXT_LENGTH       |
 *  +---------------------------------------------------------------+ contextRegionsOffset
 *  |  Context Regions: 2M regions (M send, then M receive) of      |
 *  |  K Descriptors each                                           |
 *  +---------------------------------------------------------------+ bufferPoolOffset
 *  |  Buffer Pool: Q physical page addresses (64 bits each)        |
 *  +---------------------------------------------------------------+ length (page aligned)
 * </pre>
 */
public final class VniLayout
{
    public static final int BUFFER_POOL_ENTRY_LENGTH = Long.BYTES;
    /** Keeps every offset an int; far above anything the thesis' 64 MB card could hold. */
    public static final long MAX_LENGTH = 1L << 30;

    private final int commandQueueOffset;
    private final int sendContextListOffset;
    private final int receiveContextListOffset;
    private final int contextRegionsOffset;
    private final int contextRegionLength;
    private final int bufferPoolOffset;
    private final int length;
    private final int contexts;

    public VniLayout(final ClusterParameters params)
    {
        contexts = params.contextsPerProcess();
        commandQueueOffset = 0;
        sendContextListOffset = commandQueueOffset + CommandQueueLayout.length(params);
        receiveContextListOffset = sendContextListOffset + ContextLayout.listLength(params);
        contextRegionsOffset = receiveContextListOffset + ContextLayout.listLength(params);
        contextRegionLength = ContextRegionLayout.regionLength(params);
        final long end = contextRegionsOffset + 2L * contexts * contextRegionLength +
            (long)params.bufferPoolPages() * BUFFER_POOL_ENTRY_LENGTH;
        if (end > MAX_LENGTH)
        {
            throw new IllegalArgumentException("a Virtual Network Interface of M=" + contexts + ", K=" +
                params.descriptorsPerRegion() + ", Q=" + params.bufferPoolPages() + " takes " + end +
                " bytes, more than " + MAX_LENGTH);
        }
        bufferPoolOffset = contextRegionsOffset + 2 * contexts * contextRegionLength;
        length = (int)align(end, params.pageSize());
    }

    public int commandQueueOffset()
    {
        return commandQueueOffset;
    }

    public int commandOffset(final int entry)
    {
        return commandQueueOffset + entry * CommandQueueLayout.ENTRY_LENGTH;
    }

    public int sendContextListOffset()
    {
        return sendContextListOffset;
    }

    public int sendContextOffset(final int index)
    {
        return sendContextListOffset + index * ContextLayout.CONTEXT_LENGTH;
    }

    public int receiveContextListOffset()
    {
        return receiveContextListOffset;
    }

    public int receiveContextOffset(final int index)
    {
        return receiveContextListOffset + index * ContextLayout.CONTEXT_LENGTH;
    }

    public int contextRegionsOffset()
    {
        return contextRegionsOffset;
    }

    public int sendContextRegionOffset(final int index)
    {
        return contextRegionsOffset + index * contextRegionLength;
    }

    public int receiveContextRegionOffset(final int index)
    {
        return contextRegionsOffset + (contexts + index) * contextRegionLength;
    }

    public int contextRegionLength()
    {
        return contextRegionLength;
    }

    public int bufferPoolOffset()
    {
        return bufferPoolOffset;
    }

    /** @return the VNI's size, rounded up to whole pages so that each VNI can be mapped alone. */
    public int length()
    {
        return length;
    }

    static long align(final long value, final long alignment)
    {
        return (value + alignment - 1) & ~(alignment - 1);
    }
}
