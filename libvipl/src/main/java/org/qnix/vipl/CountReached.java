package org.qnix.vipl;

import java.util.function.IntPredicate;

/**
 * A wait's end for a counter the NIC only ever increments (a queue's completion counter, a CQ's
 * Tail, the async-event Tail): it has reached {@link #target}, in wrapping int arithmetic. One per
 * thread, reused, so that a wait allocates nothing and two threads waiting on one word (two
 * {@code VipCQWait}s on one CQ, a wait beside a notification) never see each other's target.
 *
 * <pre>{@code
 * waiter.await(counter, waiters, CountReached.of(taken + 1), timeoutNs, DoorbellWait.SLEEP);
 * }</pre>
 */
final class CountReached implements IntPredicate
{
    private static final ThreadLocal<CountReached> PER_THREAD = ThreadLocal.withInitial(CountReached::new);

    int target;

    /** @return this thread's predicate, now waiting for {@code target}. */
    static CountReached of(final int target)
    {
        final CountReached reached = PER_THREAD.get();
        reached.target = target;
        return reached;
    }

    @Override
    public boolean test(final int value)
    {
        return value - target >= 0;
    }
}
