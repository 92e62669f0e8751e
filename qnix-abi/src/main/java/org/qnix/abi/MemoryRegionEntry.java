package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * One entry of the memory-region table in NIC internal memory ({@link ViaTablesLayout}): a range of a
 * VIA process's DMA memory registered under a ptag ({@code VipRegisterMem}), with its page
 * translations in the table's translation area. The driver is the only writer: it writes the fields,
 * then the Handle with release; it clears the Handle first when the region is deregistered. The NIC
 * reads the Handle with acquire and honours a descriptor's or packet's handle only if it is the very
 * same value, so a handle of a deregistered region never matches the entry's next region (the
 * generation differs).
 *
 * <p>Memory handle: {@code generation << 20 | slot}, generation 1..4095 (never 0, so no handle is 0).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+ 0
 *  |  Handle (0 = free; release, written last)                     |
 *  +---------------------------------------------------------------+ 4
 *  |  Owner: Process Table index of the VIA process                |
 *  +---------------------------------------------------------------+ 8
 *  |  Ptag                                                         |
 *  +---------------------------------------------------------------+ 12
 *  |  Attributes (ViTableEntry.ATTRIBUTE_RDMA_WRITE, _RDMA_READ)   |
 *  +---------------------------------------------------------------+ 16
 *  |  Base address (ViaAddressSpace, 64 bits)                      |
 *  +---------------------------------------------------------------+ 24
 *  |  Length (64 bits)                                             |
 *  +---------------------------------------------------------------+ 32
 *  |  First page translation (index in the translation area)       |
 *  +---------------------------------------------------------------+ 36
 *  |  Pages (translations, from the page holding the base)         |
 *  +---------------------------------------------------------------+ 40
 *  |  Allocation (the driver's region id of the DMA memory)        |
 *  +---------------------------------------------------------------+
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+ 64
 * </pre>
 *
 * <pre>{@code
 * MemoryRegionEntry region = new MemoryRegionEntry().wrap(sdram, (int)via.regionOffset(MemoryRegionEntry.slot(handle)));
 * long physical = region.isHandle(handle) ? region.physicalAddress(sdram, via, address, pageSize) : -1;
 * }</pre>
 */
public final class MemoryRegionEntry
{
    public static final int HANDLE_OFFSET = 0;
    public static final int OWNER_OFFSET = HANDLE_OFFSET + Integer.BYTES;
    public static final int PTAG_OFFSET = OWNER_OFFSET + Integer.BYTES;
    public static final int ATTRIBUTES_OFFSET = PTAG_OFFSET + Integer.BYTES;
    public static final int BASE_OFFSET = ATTRIBUTES_OFFSET + Integer.BYTES;
    public static final int LENGTH_OFFSET = BASE_OFFSET + Long.BYTES;
    public static final int FIRST_TRANSLATION_OFFSET = LENGTH_OFFSET + Long.BYTES;
    public static final int PAGES_OFFSET = FIRST_TRANSLATION_OFFSET + Integer.BYTES;
    public static final int ALLOCATION_OFFSET = PAGES_OFFSET + Integer.BYTES;
    public static final int LENGTH = Sizes.CACHE_LINE;

    public static final int SLOT_BITS = 20;
    public static final int MAX_SLOTS = 1 << SLOT_BITS;
    public static final int MAX_GENERATION = (1 << (Integer.SIZE - SLOT_BITS)) - 1;

    private AtomicBuffer buffer;
    private int offset;

    public MemoryRegionEntry wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public static int handle(final int generation, final int slot)
    {
        return generation << SLOT_BITS | slot;
    }

    public static int slot(final int handle)
    {
        return handle & (MAX_SLOTS - 1);
    }

    public static int generation(final int handle)
    {
        return handle >>> SLOT_BITS;
    }

    /** @return the generation after {@code generation}: 1..MAX_GENERATION, never 0. */
    public static int nextGeneration(final int generation)
    {
        return generation >= MAX_GENERATION ? 1 : generation + 1;
    }

    /** @return the Handle (acquire), 0 for a free entry. Writer: the driver, with release. */
    public int handle()
    {
        return buffer.getIntVolatile(offset + HANDLE_OFFSET);
    }

    /** @return true if the entry is live and is the region {@code handle} names. */
    public boolean isHandle(final int handle)
    {
        return 0 != handle && handle() == handle;
    }

    /** Driver side: every field, then the Handle; the reader is the NIC checking descriptors and packets. */
    public void publish(final int handle, final int owner, final int ptag, final int attributes, final long base,
        final long length, final int firstTranslation, final int pages, final int allocation)
    {
        buffer.putInt(offset + OWNER_OFFSET, owner);
        buffer.putInt(offset + PTAG_OFFSET, ptag);
        buffer.putInt(offset + ATTRIBUTES_OFFSET, attributes);
        buffer.putLong(offset + BASE_OFFSET, base);
        buffer.putLong(offset + LENGTH_OFFSET, length);
        buffer.putInt(offset + FIRST_TRANSLATION_OFFSET, firstTranslation);
        buffer.putInt(offset + PAGES_OFFSET, pages);
        buffer.putInt(offset + ALLOCATION_OFFSET, allocation);
        buffer.putIntRelease(offset + HANDLE_OFFSET, handle);
    }

    /**
     * Driver side: SetMemAttributes. Not atomic with a NIC check in progress: a packet checked just
     * before sees the old ptag and enables, as a packet in flight would on real hardware.
     */
    public void attributes(final int ptag, final int attributes)
    {
        buffer.putIntRelease(offset + PTAG_OFFSET, ptag);
        buffer.putIntRelease(offset + ATTRIBUTES_OFFSET, attributes);
    }

    /** Driver side: the entry is free; the NIC honours no handle of it from here on. */
    public void clear()
    {
        buffer.putIntRelease(offset + HANDLE_OFFSET, 0);
    }

    public int owner()
    {
        return buffer.getInt(offset + OWNER_OFFSET);
    }

    public int ptag()
    {
        return buffer.getIntVolatile(offset + PTAG_OFFSET);
    }

    public int attributes()
    {
        return buffer.getIntVolatile(offset + ATTRIBUTES_OFFSET);
    }

    public long base()
    {
        return buffer.getLong(offset + BASE_OFFSET);
    }

    public long length()
    {
        return buffer.getLong(offset + LENGTH_OFFSET);
    }

    public int firstTranslation()
    {
        return buffer.getInt(offset + FIRST_TRANSLATION_OFFSET);
    }

    public int pages()
    {
        return buffer.getInt(offset + PAGES_OFFSET);
    }

    public int allocation()
    {
        return buffer.getInt(offset + ALLOCATION_OFFSET);
    }

    /** @return true if {@code [address, address + bytes)} lies inside the region. */
    public boolean contains(final long address, final long bytes)
    {
        final long base = base();
        return bytes >= 0 && address >= base && address - base <= length() - bytes;
    }

    /** What {@link #physicalAddress} answers for a byte it finds no translation for. */
    public static final long NO_TRANSLATION = -1;

    /**
     * @return the host physical address of byte {@code address} (which must be {@link #contains inside}),
     * through the region's page translations in {@code sdram}; {@link #NO_TRANSLATION} if the entry's
     * words do not hold together: a page outside the region's Pages or the translation table, or a
     * physical address at another offset in its page than {@code address} (pages are page-aligned at
     * both ends). The NIC reads the words while the driver may clear the entry and publish another
     * region in it; a Base of one with the First translation of the other would otherwise give a byte
     * in the middle of a page the Protection Table check looks at, whose copy ends in the next page.
     */
    public long physicalAddress(final AtomicBuffer sdram, final ViaTablesLayout via, final long address,
        final int pageSize)
    {
        final long base = base();
        final long fromFirstPage = address - (base - base % pageSize);
        final long page = fromFirstPage / pageSize;
        final long translation = firstTranslation() + page;
        if (fromFirstPage < 0 || page >= pages() || translation < 0 || translation >= via.translationEntries())
        {
            return NO_TRANSLATION;
        }
        final long physical = sdram.getLong((int)via.translationOffset((int)translation)) + fromFirstPage % pageSize;
        return physical >= 0 && physical % pageSize == address % pageSize ? physical : NO_TRANSLATION;
    }
}
