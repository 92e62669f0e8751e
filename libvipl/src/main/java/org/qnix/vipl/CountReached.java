package org.qnix.vipl;

import java.util.function.IntPredicate;

/**
 * A wait's end for a counter the NIC only ever increments (a queue's completion counter, a CQ's
 * Tail): it has reached {@link #target}, in wrapping int arithmetic. One per waited word, reused, so
 * that a wait allocates nothing.
 */
final class CountReached implements IntPredicate
{
    int target;

    @Override
    public boolean test(final int value)
    {
        return value - target >= 0;
    }
}
