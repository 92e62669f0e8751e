package org.qnix.abi;

import java.lang.invoke.VarHandle;

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
 * CqRing ring = cq.ringOf(vi.owner(), host, view);   // null unless the owner's, read whole
 * if (null != ring) { ring.append(viIndex, CqRingLayout.QUEUE_RECEIVE); }
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

    /**
     * Driver side: the ring, then the Generation and the Owner with release; the reader is the NIC
     * completing into it, which takes the ring only as {@link #isStill} confirms it. The entry was
     * {@link #clear cleared} before (a CQ destroyed in it) or never used: the fence keeps the new ring's
     * words from being seen before that clear, so that a NIC that reads one of them sees the Owner or
     * Generation change when it looks again.
     */
    public void publish(final int owner, final int entries, final long ringAddress, final int generation)
    {
        VarHandle.storeStoreFence();
        buffer.putInt(offset + ENTRIES_OFFSET, entries);
        buffer.putLong(offset + RING_ADDRESS_OFFSET, ringAddress);
        buffer.putIntRelease(offset + GENERATION_OFFSET, generation);
        buffer.putIntRelease(offset + OWNER_OFFSET, owner + 1);
    }

    /**
     * NIC side, Via_Resize_Cq: the new ring, then the Owner again with release. The NIC reads these
     * words itself on its own thread; the release is for the tools that list the table
     * ({@code cluster status}), which read the Owner first.
     */
    public void moveRing(final int entries, final long ringAddress)
    {
        final int ownerWord = buffer.getIntVolatile(offset + OWNER_OFFSET);
        buffer.putInt(offset + ENTRIES_OFFSET, entries);
        buffer.putLong(offset + RING_ADDRESS_OFFSET, ringAddress);
        // Not a plain write back: the driver may have destroyed the CQ meanwhile (Owner 0), and a free
        // entry must not look owned again. It is not reused while the resize is outstanding.
        buffer.compareAndSetInt(offset + OWNER_OFFSET, ownerWord, ownerWord);
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

    /**
     * @return the Generation (acquire): read after {@link #isOwnedBy} and before the ring's words, so that
     * a Generation of a newer CQ comes with that CQ's ring (the driver writes it after them, with release).
     */
    public int generation()
    {
        return buffer.getIntVolatile(offset + GENERATION_OFFSET);
    }

    /**
     * NIC side: the ring of the CQ in this entry, if {@code owner}'s: the Owner and Generation, the ring's
     * words once, then the Owner and Generation again ({@link #isStill}), so that a CQ destroyed and made
     * again meanwhile, even by the same owner, is not taken with a ring address of one and the Entries of
     * the other.
     *
     * @param host the host memory the ring is in.
     * @param view the flyweight to wrap over the ring.
     * @return {@code view} over the ring, or null if the entry does not hold a CQ of {@code owner} (now).
     */
    public CqRing ringOf(final int owner, final AtomicBuffer host, final CqRing view)
    {
        // Writer: the driver, the ring before the Generation and the Owner (release).
        if (!isOwnedBy(owner))
        {
            return null;
        }
        final int generation = generation();
        final long ringAddress = ringAddress();
        final int entries = entries();
        if (!isStill(owner, generation) || entries <= 0)
        {
            return null;
        }
        return view.wrap(host, (int)ringAddress, entries);
    }

    /**
     * The NIC's second look, after it read the ring's words ({@link #ringAddress}, {@link #entries}) of
     * the CQ it found owned by {@code owner} with {@code generation}: the driver may destroy a CQ and make
     * another in the entry at any time, even one of the same owner, and a ring address of one with the
     * Entries of the other would let a completion land past the ring, in another process's memory.
     *
     * @return true if the entry still holds that CQ, so the words read between the two looks are its own.
     */
    public boolean isStill(final int owner, final int generation)
    {
        // The ring's words are read before this look: a word the driver wrote for a newer CQ implies, by
        // its fence, that the clear before it is seen here, or the newer Owner and Generation.
        VarHandle.loadLoadFence();
        return isOwnedBy(owner) && buffer.getIntVolatile(offset + GENERATION_OFFSET) == generation;
    }
}
