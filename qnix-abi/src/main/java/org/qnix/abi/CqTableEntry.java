package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * One entry of the CQ table in NIC internal memory ({@link ViaTablesLayout}): a completion queue of a
 * VIA process, whose ring ({@link CqRingLayout}) is in host memory the driver allocated and the
 * process maps. Written by the driver: the fields, then the Owner + 1 with release; cleared (Owner
 * word 0) first at destroy. The one exception is {@code VipResizeCQ}: the driver asks the NIC
 * (Via_Resize_Cq, {@link DriverCommand#VIA_RESIZE_CQ}) and the NIC, the ring's only writer, writes
 * the new Entries and Ring address between two of its appends. The Generation changes with every
 * create, so that a resize posted for a CQ destroyed and made again in the entry is refused. A CQ's
 * number is its index in the table.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+ 0
 *  |  Owner + 1: Process Table index + 1 (0 = free; release)       |
 *  +---------------------------------------------------------------+ 4
 *  |  Entries (the ring's capacity)                                |
 *  +---------------------------------------------------------------+ 8
 *  |  Ring address (host, 64 bits)                                 |
 *  +---------------------------------------------------------------+ 16
 *  |  Generation (driver, at create)                               |
 *  +---------------------------------------------------------------+
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+ 64
 * </pre>
 *
 * <pre>{@code
 * CqTableEntry cq = new CqTableEntry().wrap(sdram, (int)via.cqOffset(vi.receiveCq()));
 * if (cq.isOwnedBy(vi.owner())) { long ring = cq.ringAddress(); ... }
 * }</pre>
 */
public final class CqTableEntry
{
    public static final int OWNER_OFFSET = 0;
    public static final int ENTRIES_OFFSET = OWNER_OFFSET + Integer.BYTES;
    public static final int RING_ADDRESS_OFFSET = ENTRIES_OFFSET + Integer.BYTES;
    public static final int GENERATION_OFFSET = RING_ADDRESS_OFFSET + Long.BYTES;
    public static final int LENGTH = Sizes.CACHE_LINE;

    private AtomicBuffer buffer;
    private int offset;

    public CqTableEntry wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** Driver side: the ring, then the owner with release; the reader is the NIC completing into it. */
    public void publish(final int owner, final int entries, final long ringAddress, final int generation)
    {
        buffer.putInt(offset + ENTRIES_OFFSET, entries);
        buffer.putLong(offset + RING_ADDRESS_OFFSET, ringAddress);
        buffer.putInt(offset + GENERATION_OFFSET, generation);
        buffer.putIntRelease(offset + OWNER_OFFSET, owner + 1);
    }

    /**
     * NIC side, Via_Resize_Cq: the new ring, then the Owner again with release. The NIC reads these
     * words itself on its own thread; the release is for the tools that list the table
     * ({@code cluster status}), which read the Owner first.
     */
    public void moveRing(final int entries, final long ringAddress)
    {
        final int ownerWord = buffer.getInt(offset + OWNER_OFFSET);
        buffer.putInt(offset + ENTRIES_OFFSET, entries);
        buffer.putLong(offset + RING_ADDRESS_OFFSET, ringAddress);
        buffer.putIntRelease(offset + OWNER_OFFSET, ownerWord);
    }

    public void clear()
    {
        buffer.putIntRelease(offset + OWNER_OFFSET, 0);
    }

    public boolean isFree()
    {
        return 0 == buffer.getIntVolatile(offset + OWNER_OFFSET);
    }

    /** @return the owner's Process Table index (acquire), or -1 for a free entry. */
    public int owner()
    {
        return buffer.getIntVolatile(offset + OWNER_OFFSET) - 1;
    }

    public boolean isOwnedBy(final int owner)
    {
        return owner >= 0 && owner() == owner;
    }

    public int entries()
    {
        return buffer.getInt(offset + ENTRIES_OFFSET);
    }

    public long ringAddress()
    {
        return buffer.getLong(offset + RING_ADDRESS_OFFSET);
    }

    public int generation()
    {
        return buffer.getInt(offset + GENERATION_OFFSET);
    }
}
