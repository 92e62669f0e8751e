package org.qnix.abi;

/**
 * A node's host physical memory that NIC DMA can reach, {@code node-X-Y/host.mem}. A "physical
 * address" is a byte offset in this file; 0 is never a valid page for DMA (it is the descriptor). The
 * Host System Structures (thesis 3.3.4) follow the descriptor; the driver's page allocator owns every
 * page after them (HPS pages, DMA buffers, buffer pools).
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  File Descriptor Block (4 KiB)                                |
 *  +---------------------------------------------------------------+ nicStatusOffset
 *  |  NIC Status (128 bytes), a cache line per writer:             |
 *  |    Driver Command Queue Head (NIC writes, every 8 and empty)  |
 *  |    Reserved to 64 bytes                                       |
 *  |    Driver Command Queue Tail (driver)                         |
 *  |    Process Table Entry (driver: most probably free entry)     |
 *  |    Free pages of the page pool (driver, release)              |
 *  |    Reserved to 64 bytes                                       |
 *  +---------------------------------------------------------------+ processFlagArrayOffset
 *  |  Process Flag Array: P ints, OS pid or 0 = free (driver)      |
 *  +---------------------------------------------------------------+ driverDoorbellArrayOffset
 *  |  (cache line aligned)                                         |
 *  |  Driver Doorbell Array: D ints (NIC writes, release)          |
 *  +---------------------------------------------------------------+ pagePoolOffset (page aligned)
 *  |  Page pool: HPS pages and DMA-able buffers, to the end        |
 *  +---------------------------------------------------------------+ hostMemoryBytes
 * </pre>
 */
public final class HostMemoryLayout
{
    /** The NIC's word; the driver's words follow a cache line later. */
    public static final int NIC_STATUS_DCQ_HEAD_OFFSET = 0;
    public static final int NIC_STATUS_DCQ_TAIL_OFFSET = NIC_STATUS_DCQ_HEAD_OFFSET + Sizes.CACHE_LINE;
    public static final int NIC_STATUS_PROCESS_ENTRY_OFFSET = NIC_STATUS_DCQ_TAIL_OFFSET + Integer.BYTES;
    /** Driver-written: pages of the page pool not allocated to any process (for tools and tests). */
    public static final int NIC_STATUS_FREE_PAGES_OFFSET = NIC_STATUS_PROCESS_ENTRY_OFFSET + Integer.BYTES;
    public static final int NIC_STATUS_LENGTH = 2 * Sizes.CACHE_LINE;

    private final ClusterParameters params;
    private final long nicStatusOffset;
    private final long processFlagArrayOffset;
    private final long driverDoorbellArrayOffset;
    private final long pagePoolOffset;

    public HostMemoryLayout(final ClusterParameters params)
    {
        this.params = params;
        nicStatusOffset = FileDescriptorBlock.LENGTH;
        processFlagArrayOffset = nicStatusOffset + NIC_STATUS_LENGTH;
        // The NIC writes the Driver Doorbells; the driver writes the Process Flags: separate cache lines.
        driverDoorbellArrayOffset = VniLayout.align(
            processFlagArrayOffset + (long)params.maxProcessesPerNic() * Integer.BYTES, Sizes.CACHE_LINE);
        pagePoolOffset = VniLayout.align(
            driverDoorbellArrayOffset + (long)params.driverCommandQueueEntries() * Integer.BYTES, params.pageSize());
    }

    public long nicStatusOffset()
    {
        return nicStatusOffset;
    }

    public long driverCommandQueueHeadAddress()
    {
        return nicStatusOffset + NIC_STATUS_DCQ_HEAD_OFFSET;
    }

    public long processFlagOffset(final int index)
    {
        return processFlagArrayOffset + (long)index * Integer.BYTES;
    }

    public long driverDoorbellArrayOffset()
    {
        return driverDoorbellArrayOffset;
    }

    public long driverDoorbellOffset(final int position)
    {
        return driverDoorbellArrayOffset + (long)position * Integer.BYTES;
    }

    public long pagePoolOffset()
    {
        return pagePoolOffset;
    }

    public long pagePoolPages()
    {
        return (params.hostMemoryBytes() - pagePoolOffset) / params.pageSize();
    }

    /** @return room for the structures plus one HPS page per possible process. */
    public long minimumHostMemoryBytes()
    {
        return pagePoolOffset + (long)params.maxProcessesPerNic() * params.pageSize();
    }
}
