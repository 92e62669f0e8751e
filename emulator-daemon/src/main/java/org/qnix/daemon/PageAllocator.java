package org.qnix.daemon;

import java.util.BitSet;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ProtectionTableLayout;

/**
 * The driver's page allocator over a node's {@code host.mem} page pool (thesis 3.4: "a page pool in
 * its address space"). Pages are handed out to an owner (a Process Table index) as regions, either a
 * physically contiguous run or scattered pages; one region can be freed alone, and everything an owner
 * holds is freed at once when it goes. Pages are zeroed when handed out. The free count is published
 * in the NIC Status for tools and tests.
 *
 * <p>The allocator is also the only writer of the Translation and Protection Table in NIC SDRAM
 * (DESIGN.md 3.2 and 8, item 10): every page it hands out gets the owner's NIC PID with lock count 0,
 * {@link #protect} sets a region's lock count, and a freed page's entry goes back to 0, so the NIC
 * control program refuses a DMA to a page the moment it stops belonging to the process that named it.
 *
 * <pre>{@code
 * PageAllocator.Region region = allocator.allocateScattered(index, 4);
 * allocator.protect(region, 1);      // locked: the NIC may DMA to its pages
 * allocator.free(index, region.id());
 * }</pre>
 */
final class PageAllocator
{
    private final AtomicBuffer host;
    private final AtomicBuffer sdram;
    private final NicSdramLayout sdramLayout;
    private final long firstPage;
    private final int pageSize;
    private final int pages;
    private final BitSet used;
    private final Int2ObjectHashMap<Int2ObjectHashMap<Region>> byOwner = new Int2ObjectHashMap<>();
    private final int freePagesField;
    private int free;
    private int nextRegionId = 1;

    /**
     * A run of pages handed to one owner. {@link #address(int)} is the physical address of the region's
     * i-th page in the order the owner maps them (virtually contiguous), not necessarily ascending.
     */
    static final class Region
    {
        private final int id;
        private final int owner;
        private final long[] addresses;

        private Region(final int id, final int owner, final long[] addresses)
        {
            this.id = id;
            this.owner = owner;
            this.addresses = addresses;
        }

        int id()
        {
            return id;
        }

        int owner()
        {
            return owner;
        }

        int pages()
        {
            return addresses.length;
        }

        long address(final int page)
        {
            return addresses[page];
        }

        public String toString()
        {
            return "region " + id + " of owner " + owner + " (" + addresses.length + " pages)";
        }
    }

    PageAllocator(
        final AtomicBuffer host, final HostMemoryLayout hostLayout, final AtomicBuffer sdram, final NicSdramLayout sdramLayout)
    {
        this.host = host;
        this.sdram = sdram;
        this.sdramLayout = sdramLayout;
        this.firstPage = hostLayout.pagePoolOffset();
        this.pageSize = sdramLayout.parameters().pageSize();
        this.pages = (int)hostLayout.pagePoolPages();
        this.used = new BitSet(pages);
        this.free = pages;
        this.freePagesField = (int)(hostLayout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_FREE_PAGES_OFFSET);
        // Every page starts free, so no page may look owned: a driver started over old files must not
        // leave a previous process's entries for the NIC to honour.
        sdram.setMemory((int)sdramLayout.protectionTableOffset(), (int)ProtectionTableLayout.length(sdramLayout.parameters()),
            (byte)0);
        publish();
    }

    /**
     * @return {@code count} physically contiguous zeroed pages, or null if no run is long enough.
     */
    synchronized Region allocateContiguous(final int owner, final int count)
    {
        checkCount(count);
        int start = used.nextClearBit(0);
        while (start + count <= pages)
        {
            final int nextUsed = used.nextSetBit(start);
            if (nextUsed < 0 || nextUsed >= start + count)
            {
                final long[] addresses = new long[count];
                for (int i = 0; i < count; i++)
                {
                    addresses[i] = take(owner, start + i);
                }
                return add(owner, addresses);
            }
            start = used.nextClearBit(nextUsed);
        }
        return null;
    }

    /**
     * @return {@code count} zeroed pages of which no two consecutive ones are physically adjacent in
     * ascending order, or null if fewer pages are free. The highest free pages are taken, in descending
     * address order: so a process's page table is never one run in disguise, and contiguous runs,
     * allocated from the bottom, keep their room.
     */
    synchronized Region allocateScattered(final int owner, final int count)
    {
        checkCount(count);
        if (count > free)
        {
            return null;
        }
        final long[] addresses = new long[count];
        int page = pages;
        for (int i = 0; i < count; i++)
        {
            page = used.previousClearBit(page - 1);
            addresses[i] = take(owner, page);
        }
        return add(owner, addresses);
    }

    /**
     * Sets the lock count of every page of a region in the Protection Table (release, so the NIC sees
     * the pages' zeroed contents before it sees them locked).
     */
    synchronized void protect(final Region region, final int lockCount)
    {
        if (lockCount < 0 || lockCount > ProtectionTableLayout.MAX_LOCK_COUNT)
        {
            throw new IllegalArgumentException("lock count " + lockCount + " is outside [0, " +
                ProtectionTableLayout.MAX_LOCK_COUNT + "]");
        }
        final Int2ObjectHashMap<Region> regions = byOwner.get(region.owner());
        if (null == regions || regions.get(region.id()) != region)
        {
            throw new IllegalStateException(region + " is not allocated");
        }
        final int entry = ProtectionTableLayout.entry(ProcessTableLayout.nicPid(region.owner()), lockCount);
        for (int i = 0; i < region.pages(); i++)
        {
            sdram.putIntRelease((int)sdramLayout.protectionEntryOffset(region.address(i)), entry);
        }
    }

    /** Frees one region of an owner. @return false if the owner holds no region with that id. */
    synchronized boolean free(final int owner, final int regionId)
    {
        final Int2ObjectHashMap<Region> regions = byOwner.get(owner);
        final Region region = null == regions ? null : regions.remove(regionId);
        if (null == region)
        {
            return false;
        }
        if (regions.isEmpty())
        {
            byOwner.remove(owner);
        }
        release(region);
        publish();
        return true;
    }

    /** Frees every page the owner holds. @return how many. */
    synchronized int freeAll(final int owner)
    {
        final Int2ObjectHashMap<Region> regions = byOwner.remove(owner);
        if (null == regions)
        {
            return 0;
        }
        int freed = 0;
        for (final Region region : regions.values())
        {
            release(region);
            freed += region.pages();
        }
        publish();
        return freed;
    }

    /** @return pages not held by any owner. */
    synchronized int freePages()
    {
        return free;
    }

    private static void checkCount(final int count)
    {
        if (count < 1)
        {
            throw new IllegalArgumentException("page count " + count + " must be at least 1");
        }
    }

    private long take(final int owner, final int page)
    {
        used.set(page);
        free--;
        final long address = address(page);
        host.setMemory((int)address, pageSize, (byte)0);
        // Owned but not locked: the NIC may not DMA to it until the owner locks it (thesis 3.6).
        sdram.putIntRelease((int)sdramLayout.protectionEntryOffset(address),
            ProtectionTableLayout.entry(ProcessTableLayout.nicPid(owner), 0));
        return address;
    }

    private Region add(final int owner, final long[] addresses)
    {
        final Region region = new Region(nextRegionId++, owner, addresses);
        byOwner.computeIfAbsent(owner, k -> new Int2ObjectHashMap<>()).put(region.id(), region);
        publish();
        return region;
    }

    private void release(final Region region)
    {
        for (int i = 0; i < region.pages(); i++)
        {
            final long address = region.address(i);
            // Cleared before the page can be handed out again, so no DMA lands in the next owner's page.
            sdram.putIntRelease((int)sdramLayout.protectionEntryOffset(address), 0);
            used.clear(pageIndex(address));
        }
        free += region.pages();
    }

    private long address(final int page)
    {
        return firstPage + (long)page * pageSize;
    }

    private int pageIndex(final long address)
    {
        return (int)((address - firstPage) / pageSize);
    }

    private void publish()
    {
        // Readers: `cluster status` and tests checking that a dead process's memory came back.
        host.putIntRelease(freePagesField, free);
    }
}
