package org.qnix.firmware;

import org.agrona.collections.LongHashSet;

/**
 * The synchronisation counters of one group (thesis 3.5.1, Barrier; 3.5.2, Barrier step 1): for each
 * barrier sequence number in progress, the members that have entered it, here or on another NIC, and
 * the local Barrier operations waiting for it. Members are counted as a set of names, so an arrival is
 * never counted twice, and by sequence number, so an arrival for the next barrier is never counted for
 * this one (DESIGN.md 8, item 9).
 *
 * <p>At most {@link #MAX_ROUNDS} are in progress. A process may have at most {@link #MAX_OUTSTANDING}
 * (R) Barriers posted on a group. While barrier k is incomplete on a NIC, a member of that NIC has not
 * posted past k + R - 1, so no barrier past k + R - 1 completes anywhere, so nobody posts past
 * k + 2R - 1: 2R sequence numbers at most.
 */
final class BarrierRounds
{
    static final int MAX_ROUNDS = 8;
    static final int MAX_OUTSTANDING = MAX_ROUNDS / 2;

    private final int[] sequences = new int[MAX_ROUNDS];
    private final boolean[] used = new boolean[MAX_ROUNDS];
    private final LongHashSet[] arrived = new LongHashSet[MAX_ROUNDS];
    private GroupWait waitingHead;

    BarrierRounds()
    {
        for (int i = 0; i < MAX_ROUNDS; i++)
        {
            arrived[i] = new LongHashSet();
        }
    }

    static long memberKey(final int ai, final int pi)
    {
        return ((long)ai << 32) | (pi & 0xFFFF_FFFFL);
    }

    /**
     * Counts a member entering barrier {@code sequence}.
     *
     * @return the members counted for it so far, or -1 if no round is free for a new sequence number.
     */
    int arrive(final int sequence, final long member)
    {
        int free = -1;
        for (int i = 0; i < MAX_ROUNDS; i++)
        {
            if (used[i] && sequences[i] == sequence)
            {
                arrived[i].add(member);
                return arrived[i].size();
            }
            if (!used[i] && free < 0)
            {
                free = i;
            }
        }
        if (free < 0)
        {
            return -1;
        }
        used[free] = true;
        sequences[free] = sequence;
        arrived[free].add(member);
        return 1;
    }

    /** @return true if an arrival for {@code sequence} can be counted: its round exists or one is free. */
    boolean canCount(final int sequence)
    {
        for (int i = 0; i < MAX_ROUNDS; i++)
        {
            if (!used[i] || sequences[i] == sequence)
            {
                return true;
            }
        }
        return false;
    }

    /** @return the members counted for barrier {@code sequence} (0 if none yet). */
    int arrivals(final int sequence)
    {
        for (int i = 0; i < MAX_ROUNDS; i++)
        {
            if (used[i] && sequences[i] == sequence)
            {
                return arrived[i].size();
            }
        }
        return 0;
    }

    /** Forgets a completed round. */
    void remove(final int sequence)
    {
        for (int i = 0; i < MAX_ROUNDS; i++)
        {
            if (used[i] && sequences[i] == sequence)
            {
                used[i] = false;
                arrived[i].clear();
            }
        }
    }

    int roundsInProgress()
    {
        int count = 0;
        for (final boolean u : used)
        {
            count += u ? 1 : 0;
        }
        return count;
    }

    void clearRounds()
    {
        for (int i = 0; i < MAX_ROUNDS; i++)
        {
            used[i] = false;
            arrived[i].clear();
        }
    }

    // Local Barrier operations waiting -----------------------------------------------------------

    GroupWait firstWaiting()
    {
        return waitingHead;
    }

    void addWaiting(final GroupWait wait)
    {
        wait.previous = null;
        wait.next = waitingHead;
        if (null != waitingHead)
        {
            waitingHead.previous = wait;
        }
        waitingHead = wait;
    }

    void removeWaiting(final GroupWait wait)
    {
        if (null == wait.previous)
        {
            if (waitingHead == wait)
            {
                waitingHead = wait.next;
            }
        }
        else
        {
            wait.previous.next = wait.next;
        }
        if (null != wait.next)
        {
            wait.next.previous = wait.previous;
        }
        wait.previous = null;
        wait.next = null;
    }
}
