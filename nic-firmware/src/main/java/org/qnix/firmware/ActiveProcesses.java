package org.qnix.firmware;

import java.util.Arrays;

/**
 * The Process Table entries whose process is active on this NIC, in table order: what the two round
 * robins of a duty cycle (the Command Queues, thesis 3.5 TX steps 5-6, and the Scheduling Queues, TX steps
 * 1-4 and 7) walk. They used to walk all P entries (64 by default) and skip the empty ones; with one or
 * two processes per NIC, as in a benchmark, that walk took a fifth of the firmware thread's samples in a
 * 4 KiB stream (docs/performance/active-processes.txt). The order of a walk is the same: the active
 * entries from a cursor up, then from the start.
 *
 * <pre>{@code
 * final int count = active.count();
 * for (int n = 0, p = active.positionFrom(cursor); n < count; n++, p = active.next(p))
 * {
 *     final ProcessSlot slot = slots[active.entryAt(p)];
 *     ...
 * }
 * }</pre>
 *
 * <p>Changed only by {@link ProcessRegistrations}, on the firmware thread; no allocation after construction.
 */
final class ActiveProcesses
{
    private final int[] entries;
    private int count;

    ActiveProcesses(final int processTableEntries)
    {
        entries = new int[processTableEntries];
    }

    /** Entry {@code index} now has an active process; nothing changes if it was already listed. */
    void add(final int index)
    {
        final int found = Arrays.binarySearch(entries, 0, count, index);
        if (found >= 0)
        {
            return;
        }
        final int at = -found - 1;
        System.arraycopy(entries, at, entries, at + 1, count - at);
        entries[at] = index;
        count++;
    }

    /** Entry {@code index} no longer has an active process; nothing changes if it was not listed. */
    void remove(final int index)
    {
        final int at = Arrays.binarySearch(entries, 0, count, index);
        if (at < 0)
        {
            return;
        }
        System.arraycopy(entries, at + 1, entries, at, count - at - 1);
        count--;
    }

    int count()
    {
        return count;
    }

    /** @return the Process Table index at {@code position} (0 to {@link #count()} - 1). */
    int entryAt(final int position)
    {
        return entries[position];
    }

    /**
     * @return the position of the first active entry at or after Process Table index {@code cursor}, or 0
     * (the first) if there is none after it: where a round robin whose turn is at {@code cursor} starts.
     */
    int positionFrom(final int cursor)
    {
        final int found = Arrays.binarySearch(entries, 0, count, cursor);
        final int at = found >= 0 ? found : -found - 1;
        return at < count ? at : 0;
    }

    /** @return the position after {@code position}, wrapping to the first. */
    int next(final int position)
    {
        return position + 1 >= count ? 0 : position + 1;
    }
}
