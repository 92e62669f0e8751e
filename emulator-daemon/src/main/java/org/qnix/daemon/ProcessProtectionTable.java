package org.qnix.daemon;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProtectionTableLayout;
import org.qnix.abi.VniLayout;

/**
 * One registered process's memory for DMA as its driver sees it (thesis 3.6 {@code qx_buffer_lock},
 * {@code qx_buffer_unlock}, {@code qx_buffer_pool}; DESIGN.md 3.2 and 8, item 10): the regions the
 * driver handed the process, each with its nested lock count, and at most one Buffer Pool, locked for
 * the process's whole life. Lock counts are mirrored into the NIC's Translation and Protection Table
 * through the {@link PageAllocator}, which is what the NIC control program checks before every DMA.
 *
 * <p>Used by the one connection thread of its process; the allocator it shares is synchronized. At
 * de-registration the driver frees everything with {@link PageAllocator#freeAll}, so this table needs
 * no cleanup of its own.
 *
 * <pre>{@code
 * ProcessProtectionTable.Entry buffer = table.allocate(8192, 0, true);
 * table.lock(buffer.id());    // 1: the NIC may now DMA to its pages
 * table.free(buffer.id());
 * }</pre>
 */
final class ProcessProtectionTable
{
    private final PageAllocator allocator;
    private final ClusterParameters params;
    private final AtomicBuffer sdram;
    private final NicSdramLayout layout;
    private final NicCoordinates node;
    private final ProcessName name;
    private final int index;
    private final Int2ObjectHashMap<Entry> regions = new Int2ObjectHashMap<>();
    private Entry pool;

    /** A request the driver refuses: {@link #code()} is a Doorbell error code or {@code REFUSED}. */
    static final class Refusal extends Exception
    {
        private static final long serialVersionUID = 1L;

        private final int code;

        Refusal(final int code, final String message)
        {
            super(message, null, false, false);
            this.code = code;
        }

        int code()
        {
            return code;
        }
    }

    /** A region of the process with its lock count. */
    static final class Entry
    {
        private final PageAllocator.Region region;
        private final boolean pool;
        /** Memory the driver keeps for the process (VIA Process Structures, a CQ ring): locked, not the process's to free. */
        private final boolean fixed;
        private int lockCount;
        /** VIA memory regions registered on this allocation (issue 14): it may not be freed while any is. */
        private int viaRegistrations;

        private Entry(final PageAllocator.Region region, final boolean pool, final boolean fixed)
        {
            this.region = region;
            this.pool = pool;
            this.fixed = fixed;
        }

        int id()
        {
            return region.id();
        }

        int pages()
        {
            return region.pages();
        }

        long address(final int page)
        {
            return region.address(page);
        }

        int lockCount()
        {
            return lockCount;
        }

        boolean isPool()
        {
            return pool;
        }

        /** @return true for pages the driver keeps for the process ({@link #allocateFixed}). */
        boolean isFixed()
        {
            return fixed;
        }
    }

    ProcessProtectionTable(
        final PageAllocator allocator, final AtomicBuffer sdram, final NicSdramLayout layout, final NicCoordinates node,
        final ProcessName name, final int index)
    {
        this.allocator = allocator;
        this.params = layout.parameters();
        this.sdram = sdram;
        this.layout = layout;
        this.node = node;
        this.name = name;
        this.index = index;
    }

    /**
     * A buffer of {@code length} bytes starting {@code firstPageOffset} bytes into its first page, not
     * locked yet. At most a message's worth of bytes (thesis 3.6: "cannot be greater than 2 MB"), so one
     * Context Region of K descriptors can always describe it; a zero-length buffer still gets a page.
     */
    Entry allocate(final int length, final int firstPageOffset, final boolean contiguous) throws Refusal
    {
        if (firstPageOffset < 0 || firstPageOffset >= params.pageSize())
        {
            throw refused("first page offset " + firstPageOffset + " is outside [0, " + params.pageSize() +
                ") (page size " + params.pageSize() + ")");
        }
        if (length < 0 || length > params.maxMessageBytes())
        {
            throw refused("buffer length " + length + " is outside [0, " + params.maxMessageBytes() +
                "], the largest message K-1=" + (params.descriptorsPerRegion() - 1) + " pages can carry");
        }
        final int pages = Math.max(1, (int)(((long)firstPageOffset + length + params.pageSize() - 1) / params.pageSize()));
        final PageAllocator.Region region = contiguous ?
            allocator.allocateContiguous(index, pages) : allocator.allocateScattered(index, pages);
        if (null == region)
        {
            throw new Refusal(Doorbell.NO_RESOURCES, "host memory of node " + node + " is exhausted: a buffer of " +
                length + " bytes at page offset " + firstPageOffset + " needs " + pages +
                (contiguous ? " contiguous" : "") + " pages of " + params.pageSize() + " bytes, " +
                freePagesText() + (contiguous ? " (try a scattered buffer)" : ""));
        }
        final Entry entry = new Entry(region, false, false);
        regions.put(entry.id(), entry);
        return entry;
    }

    /**
     * Contiguous pages the driver keeps for the process (issue 14: the VIA Process Structures, a CQ
     * ring), locked until {@link #releaseFixed} or de-registration; the process may map them but not
     * lock, unlock or free them. @return the entry, or null if host memory has no such run.
     */
    Entry allocateFixed(final int pages)
    {
        final PageAllocator.Region region = allocator.allocateContiguous(index, pages);
        if (null == region)
        {
            return null;
        }
        allocator.protect(region, 1);
        final Entry entry = new Entry(region, false, true);
        entry.lockCount = 1;
        regions.put(entry.id(), entry);
        return entry;
    }

    /** Gives back what {@link #allocateFixed} gave. */
    void releaseFixed(final Entry entry)
    {
        regions.remove(entry.id());
        allocator.free(index, entry.id());
    }

    /**
     * {@code VipRegisterMem} (issue 14): one more lock of the allocation, counted so that it cannot be
     * freed while registered. @return the allocation.
     */
    Entry registerVia(final int regionId) throws Refusal
    {
        final Entry entry = find(regionId);
        if (entry.pool || entry.fixed)
        {
            throw refused("buffer region " + regionId + " is not memory the process allocated for DMA");
        }
        lock(regionId);
        entry.viaRegistrations++;
        return entry;
    }

    /** {@code VipDeregisterMem}: undoes one {@link #registerVia}. */
    void deregisterVia(final int regionId) throws Refusal
    {
        final Entry entry = find(regionId);
        if (entry.viaRegistrations < 1)
        {
            throw refused("buffer region " + regionId + " has no VIA memory region registered");
        }
        entry.viaRegistrations--;
        allocator.protect(entry.region, entry.lockCount - 1);
        entry.lockCount--;
    }

    private String freePagesText()
    {
        final int waiting = allocator.pagesWaitingForNic();
        return allocator.freePages() + " pages are free" + (0 == waiting ? "" : ", " + waiting +
            " of them freed while NIC " + node + " may still have been copying them (it has not ended that duty" +
            " cycle: is its firmware running?)");
    }

    /**
     * {@code qx_buffer_pool}: once per process, 1..Q scattered pages, locked for the process's life, and
     * their addresses written into the Buffer Pool of the process's VNI (thesis 3.3.1, 3.6).
     */
    Entry pool(final int pages) throws Refusal
    {
        if (null != pool)
        {
            throw refused("process " + name + " already has its buffer pool (region " + pool.id() + ", " +
                pool.pages() + " pages): qx_buffer_pool is called once per process");
        }
        final int q = params.bufferPoolPages();
        if (pages < 1 || pages > q)
        {
            throw refused("a buffer pool of " + pages + " pages is outside [1, Q=" + q + "] (Q pages of " +
                params.pageSize() + " bytes)");
        }
        final PageAllocator.Region region = allocator.allocateScattered(index, pages);
        if (null == region)
        {
            throw new Refusal(Doorbell.NO_RESOURCES, "host memory of node " + node + " is exhausted: a buffer pool of " +
                pages + " pages of " + params.pageSize() + " bytes, " + freePagesText());
        }
        final Entry entry = new Entry(region, true, false);
        entry.lockCount = 1;
        allocator.protect(region, 1);
        final VniLayout vni = layout.vni();
        final long poolAddress = layout.vniOffset(index) + vni.bufferPoolOffset();
        // Reader: the NIC (ContextReader), at a Send of a context that names the pool; plain stores,
        // since the process learns of the pool only from this request's reply and names it in a
        // command it publishes with release after that. The NIC checks each page's owner anyway.
        for (int i = 0; i < pages; i++)
        {
            sdram.putLong((int)(poolAddress + (long)i * VniLayout.BUFFER_POOL_ENTRY_LENGTH), region.address(i));
        }
        regions.put(entry.id(), entry);
        pool = entry;
        return entry;
    }

    /** {@code qx_buffer_lock}: nests. @return the region's lock count after the call. */
    int lock(final int regionId) throws Refusal
    {
        final Entry entry = find(regionId);
        refuseFixed(entry);
        if (entry.pool)
        {
            throw refused("buffer region " + regionId + " is the buffer pool: it is locked for the process's " +
                "whole life (thesis 3.6), not by qx_buffer_lock");
        }
        if (entry.lockCount >= ProtectionTableLayout.MAX_LOCK_COUNT)
        {
            throw refused("buffer region " + regionId + " is already locked " + entry.lockCount +
                " times, the most a Protection Table entry holds");
        }
        allocator.protect(entry.region, entry.lockCount + 1);
        return ++entry.lockCount;
    }

    /** {@code qx_buffer_unlock}: undoes one lock. @return the region's lock count after the call. */
    int unlock(final int regionId) throws Refusal
    {
        final Entry entry = find(regionId);
        refuseFixed(entry);
        if (entry.pool)
        {
            throw refused("buffer region " + regionId + " is the buffer pool: it stays locked until the " +
                "process de-registers (thesis 3.6)");
        }
        if (entry.lockCount > 0 && entry.lockCount <= entry.viaRegistrations)
        {
            throw refused("buffer region " + regionId + " holds " + entry.viaRegistrations + " lock(s) of registered " +
                "VIA memory regions: deregister them instead");
        }
        if (0 == entry.lockCount)
        {
            throw refused("buffer region " + regionId + " is not locked: every qx_buffer_unlock needs an " +
                "earlier qx_buffer_lock");
        }
        allocator.protect(entry.region, entry.lockCount - 1);
        return --entry.lockCount;
    }

    /** Frees a region, locked or not: its Protection Table entries are cleared. */
    void free(final int regionId) throws Refusal
    {
        final Entry entry = find(regionId);
        refuseFixed(entry);
        if (entry.viaRegistrations > 0)
        {
            throw refused("buffer region " + regionId + " is registered as " + entry.viaRegistrations +
                " VIA memory region(s): deregister them before freeing it");
        }
        if (entry.pool)
        {
            throw refused("buffer region " + regionId + " is the buffer pool: it is freed when the process " +
                "de-registers (thesis 3.6)");
        }
        regions.remove(regionId);
        allocator.free(index, regionId);
    }

    /** @return the process's Buffer Pool entry, or null. */
    Entry pool()
    {
        return pool;
    }

    /** @return the region with an id, or null. */
    Entry region(final int regionId)
    {
        return regions.get(regionId);
    }

    private void refuseFixed(final Entry entry) throws Refusal
    {
        if (entry.fixed)
        {
            throw refused("buffer region " + entry.id() + " is kept by the driver for process " + name +
                " (VIA Process Structures or a CQ ring): it is not the process's to lock, unlock or free");
        }
    }

    private Entry find(final int regionId) throws Refusal
    {
        final Entry entry = regions.get(regionId);
        if (null == entry)
        {
            throw refused("no buffer region " + regionId + " of process " + name + " on node " + node);
        }
        return entry;
    }

    private static Refusal refused(final String message)
    {
        return new Refusal(DriverProtocol.REFUSED, message);
    }
}
