package org.qnix.abi;

/**
 * The Translation and Protection Table (DESIGN.md 3.2 and 8, item 10): one 32-bit entry per page of
 * the node's {@code host.mem}, in NIC internal memory (SDRAM segment 5) so that the NIC checks a page
 * address without crossing the I/O bus. The driver writes an entry (release) whenever it hands a page
 * to a process, locks or unlocks it, or takes it back; the NIC control program reads it (acquire)
 * before every DMA to or from a page a process named. A page may be the target of a DMA only while
 * its owner is the process that named it and its lock count is above zero.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------------------------------+-------------------------------+
 *  |   Lock Count (nested locks)   |  Owner NIC PID (0 = no owner)  |
 *  +-------------------------------+-------------------------------+
 * </pre>
 *
 * Entry {@code i} describes the page at physical address {@code i * pageSize}; entries of the pages
 * below the page pool are always zero.
 */
public final class ProtectionTableLayout
{
    public static final int ENTRY_LENGTH = Integer.BYTES;
    public static final int LOCK_COUNT_MASK = 0xFFFF;
    public static final int OWNER_SHIFT = 16;
    /** Most nested locks of one page. */
    public static final int MAX_LOCK_COUNT = LOCK_COUNT_MASK;

    private ProtectionTableLayout()
    {
    }

    public static long entries(final ClusterParameters params)
    {
        return params.hostMemoryBytes() / params.pageSize();
    }

    public static long length(final ClusterParameters params)
    {
        return entries(params) * ENTRY_LENGTH;
    }

    /** @return the entry offset, relative to the table, of the page holding a physical address. */
    public static long entryOffset(final ClusterParameters params, final long physicalAddress)
    {
        return (physicalAddress / params.pageSize()) * ENTRY_LENGTH;
    }

    public static int entry(final int ownerNicPid, final int lockCount)
    {
        return (ownerNicPid << OWNER_SHIFT) | (lockCount & LOCK_COUNT_MASK);
    }

    public static int owner(final int entry)
    {
        return entry >>> OWNER_SHIFT;
    }

    public static int lockCount(final int entry)
    {
        return entry & LOCK_COUNT_MASK;
    }
}
