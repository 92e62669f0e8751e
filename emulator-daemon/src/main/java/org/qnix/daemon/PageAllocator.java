package org.qnix.daemon;

import java.util.BitSet;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.LongArrayList;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.HostMemoryLayout;

/**
 * The driver's page allocator over a node's {@code host.mem} page pool (thesis 3.4: "a page pool in
 * its address space"). Pages are handed out to an owner (a Process Table index) as contiguous runs,
 * and everything an owner holds is freed at once when it goes. Pages are zeroed
 * when handed out. The free count is published in the NIC Status for tools and tests.
 */
final class PageAllocator
{
    private final AtomicBuffer host;
    private final long firstPage;
    private final int pageSize;
    private final int pages;
    private final BitSet used;
    private final Int2ObjectHashMap<LongArrayList> byOwner = new Int2ObjectHashMap<>();
    private final int freePagesField;
    private int free;

    PageAllocator(final AtomicBuffer host, final HostMemoryLayout layout, final int pageSize)
    {
        this.host = host;
        this.firstPage = layout.pagePoolOffset();
        this.pageSize = pageSize;
        this.pages = (int)layout.pagePoolPages();
        this.used = new BitSet(pages);
        this.free = pages;
        this.freePagesField = (int)(layout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_FREE_PAGES_OFFSET);
        publish();
    }

    /**
     * @return the physical address of the first of {@code count} contiguous zeroed pages, or -1.
     */
    synchronized long allocateContiguous(final int owner, final int count)
    {
        int start = used.nextClearBit(0);
        while (start + count <= pages)
        {
            final int nextUsed = used.nextSetBit(start);
            if (nextUsed < 0 || nextUsed >= start + count)
            {
                final LongArrayList owned = byOwner.computeIfAbsent(owner, k -> new LongArrayList());
                for (int p = start; p < start + count; p++)
                {
                    take(p, owned);
                }
                publish();
                return address(start);
            }
            start = used.nextClearBit(nextUsed);
        }
        return -1;
    }

    /** Frees every page the owner holds. @return how many. */
    synchronized int freeAll(final int owner)
    {
        final LongArrayList owned = byOwner.remove(owner);
        if (null == owned)
        {
            return 0;
        }
        for (int i = 0; i < owned.size(); i++)
        {
            used.clear(pageIndex(owned.getLong(i)));
        }
        free += owned.size();
        publish();
        return owned.size();
    }

    private void take(final int page, final LongArrayList owned)
    {
        used.set(page);
        free--;
        owned.addLong(address(page));
        host.setMemory((int)address(page), pageSize, (byte)0);
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
