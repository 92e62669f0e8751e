package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * One entry of the CQ table in NIC internal memory ({@link ViaTablesLayout}): a completion queue of a
 * VIA process, whose ring ({@link CqRingLayout}) is in host memory the driver allocated and the
 * process maps. Written by the driver only: the fields, then the Owner + 1 with release; cleared
 * (Owner word 0) first at destroy. A CQ's number is its index in the table.
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
    public void publish(final int owner, final int entries, final long ringAddress)
    {
        buffer.putInt(offset + ENTRIES_OFFSET, entries);
        buffer.putLong(offset + RING_ADDRESS_OFFSET, ringAddress);
        buffer.putIntRelease(offset + OWNER_OFFSET, owner + 1);
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
}
