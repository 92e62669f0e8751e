package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.MemoryRegionEntry;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViaTablesLayout;

/**
 * The VIA data path's Translation and Protection checks (issue 14): a VIA address with its memory
 * handle becomes a host physical address only if the handle names a live region of the memory-region
 * table, the region belongs to the VI's process and carries the VI's ptag, the bytes lie inside the
 * region, and the page is one the driver locked for that very process in the Translation and
 * Protection Table (DESIGN.md 8, item 10, as QNIX's pages are checked). Every page the NIC reads or
 * writes for VIA goes through here, in the duty cycle that copies it: a region deregistered, or a page
 * taken back, since the descriptor was posted fails here and nothing is copied.
 *
 * <pre>{@code
 * long physical = memory.translate(owner, ptag, handle, address, bytes);   // bytes within one page
 * if (ViaMemory.REFUSED != physical) { host.putBytes((int)physical, ...); }
 * }</pre>
 */
final class ViaMemory
{
    /** What {@link #translate} answers for bytes the process may not touch. */
    static final long REFUSED = -1;
    /** A ptag argument that skips the ptag check (a completion write into the owner's own descriptor). */
    static final int ANY_PTAG = Integer.MIN_VALUE;

    private final AtomicBuffer sdram;
    private final ViaTablesLayout via;
    private final ContextReader pages;
    private final int pageSize;
    private final MemoryRegionEntry region = new MemoryRegionEntry();

    ViaMemory(final FirmwareContext ctx)
    {
        this.sdram = ctx.sdram();
        this.via = ctx.sdramLayout().via();
        this.pages = ctx.contextReader();
        this.pageSize = ctx.parameters().pageSize();
    }

    int pageSize()
    {
        return pageSize;
    }

    /** @return the bytes from {@code address} to the end of its page. */
    int toPageEnd(final long address)
    {
        return pageSize - (int)(address % pageSize);
    }

    /**
     * @param owner   Process Table index of the VI's process.
     * @param ptag    the VI's ptag, or {@link #ANY_PTAG}.
     * @param bytes   at least 0, and [address, address + bytes) within one page.
     * @return the host physical address of {@code address}, or {@link #REFUSED}.
     */
    long translate(final int owner, final int ptag, final int handle, final long address, final int bytes)
    {
        final MemoryRegionEntry r = regionOf(owner, ptag, handle);
        if (null == r || !r.contains(address, bytes))
        {
            return REFUSED;
        }
        // The entry's words may be torn (the driver publishing another region in it): physicalAddress
        // refuses words that do not hold together, and the page must be the owner's, locked.
        final long physical = r.physicalAddress(sdram, via, address, pageSize);
        return MemoryRegionEntry.NO_TRANSLATION != physical &&
            pages.isLockedBy(ProcessTableLayout.nicPid(owner), physical) ? physical : REFUSED;
    }

    /** @return true if {@code [address, address + bytes)} lies in the live region {@code handle} of owner and ptag. */
    boolean inRegion(final int owner, final int ptag, final int handle, final long address, final long bytes)
    {
        final MemoryRegionEntry r = regionOf(owner, ptag, handle);
        return null != r && r.contains(address, bytes);
    }

    /**
     * @param enable {@code ViTableEntry.ATTRIBUTE_RDMA_WRITE} or {@code ATTRIBUTE_RDMA_READ}.
     * @return true if {@code [address, address + bytes)} lies in the live region {@code handle} of owner
     * and ptag and the region enables that RDMA op (VipRegisterMem's EnableRdmaWrite, EnableRdmaRead).
     */
    boolean rdmaEnabled(final int owner, final int ptag, final int handle, final long address, final long bytes,
        final int enable)
    {
        final MemoryRegionEntry r = regionOf(owner, ptag, handle);
        return null != r && r.contains(address, bytes) && 0 != (r.attributes() & enable);
    }

    /** @return the base VIA address of the live region {@code handle} of {@code owner}, or {@link #REFUSED}. */
    long base(final int owner, final int handle)
    {
        final MemoryRegionEntry r = regionOf(owner, ANY_PTAG, handle);
        return null == r ? REFUSED : r.base();
    }

    private MemoryRegionEntry regionOf(final int owner, final int ptag, final int handle)
    {
        final int slot = MemoryRegionEntry.slot(handle);
        if (0 == handle || slot >= via.regionEntries())
        {
            return null;
        }
        // Writer: the driver, the Handle last with release (MemoryRegionEntry.publish).
        final MemoryRegionEntry r = region.wrap(sdram, (int)via.regionOffset(slot));
        if (!r.isHandle(handle) || r.owner() != owner || (ANY_PTAG != ptag && r.ptag() != ptag))
        {
            return null;
        }
        return r;
    }
}
