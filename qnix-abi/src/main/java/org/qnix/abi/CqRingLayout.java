package org.qnix.abi;

/**
 * A completion queue's ring in host memory ({@code VipCreateCQ}): allocated by the driver for the
 * owning VIA process, locked for the CQ's life and mapped by the process; the CQ table entry
 * ({@link CqTableEntry}) names it for the NIC. The NIC appends an entry per completed descriptor of a
 * work queue attached to the CQ (VI and which queue), after the descriptor's status and the queue's
 * completion counter; the process takes entries from the head ({@code VipCQDone}) and sleeps on the
 * Tail ({@code VipCQWait}). An entry's Queue word is written last, with release, and cleared by the
 * process when it takes the entry. A ring with no free entry when a completion arrives is overflowed:
 * the NIC sets Overflowed and posts an async error (VIA 1.0: CQ overflow is catastrophic for the CQ).
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  Tail (NIC: entries appended; release; futex word)            |
 *  |  Waiters (process)                                            |
 *  |  Overflowed (NIC)                                             |
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+ 64
 *  |  Head (process: entries taken)                                |
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+ 128
 *  Slots (8 bytes each, slots(Entries) of them):
 *  |  VI (NIC VI table index)                                      |
 *  |  Queue (QUEUE_SEND, QUEUE_RECEIVE; 0 = empty; release, last)  |
 *  +---------------------------------------------------------------+ length(entries)
 * </pre>
 *
 * <p>Entry n (Head and Tail count entries, as 32-bit words that wrap) is in slot n mod slots(Entries),
 * the power of two at or above Entries: 2^32 is a multiple of it, so the slot sequence goes on across
 * the wrap. (With Entries slots, 3 say, entry 2^32 - 1 and entry 0 would share a slot: one completion
 * overwritten, and the process waiting at a slot the NIC no longer writes.) The ring still holds
 * Entries at most: the overflow check is Tail - Head against Entries. Both parties use the ring
 * through {@link CqRing}, which holds these orders.
 */
public final class CqRingLayout
{
    public static final int MAX_ENTRIES = 16_384;

    public static final int TAIL_OFFSET = 0;
    public static final int WAITERS_OFFSET = TAIL_OFFSET + Integer.BYTES;
    public static final int OVERFLOWED_OFFSET = WAITERS_OFFSET + Integer.BYTES;
    public static final int HEAD_OFFSET = Sizes.CACHE_LINE;
    public static final int ENTRIES_OFFSET = 2 * Sizes.CACHE_LINE;
    public static final int ENTRY_VI_OFFSET = 0;
    public static final int ENTRY_QUEUE_OFFSET = ENTRY_VI_OFFSET + Integer.BYTES;
    public static final int ENTRY_LENGTH = ENTRY_QUEUE_OFFSET + Integer.BYTES;

    public static final int QUEUE_EMPTY = 0;
    public static final int QUEUE_SEND = 1;
    public static final int QUEUE_RECEIVE = 2;

    private CqRingLayout()
    {
    }

    /** @return the slots of a ring of {@code entries} (at least 1): the power of two at or above it. */
    public static int slots(final int entries)
    {
        return entries <= 1 ? 1 : Integer.highestOneBit(entries - 1) << 1;
    }

    /** @return the offset of the slot of entry {@code sequence} (Head or Tail, taken as unsigned). */
    public static int entryOffset(final int entries, final long sequence)
    {
        return ENTRIES_OFFSET + (int)(sequence & (slots(entries) - 1)) * ENTRY_LENGTH;
    }

    public static int length(final int entries)
    {
        return ENTRIES_OFFSET + slots(entries) * ENTRY_LENGTH;
    }

    public static int pages(final int entries, final int pageSize)
    {
        return (length(entries) + pageSize - 1) / pageSize;
    }
}
