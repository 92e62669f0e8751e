package org.qnix.vipl;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.AsyncEventRing;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.host.DoorbellWait;
import org.qnix.host.DoorbellWaiter;

/**
 * The reader of a VIA process's async-event ring ({@code VipErrorCallback}; issue 14, "Where things
 * live"): the NIC appends an event (VI, CQ, descriptor, op, resource and error codes), Valid last with
 * release, then advances the Tail and wakes the sleepers the Waiters word counts; a full ring sets
 * Overflowed instead. This reader takes events in order, one at a time, hands the Head back with
 * release, and calls the NIC's {@link AsyncErrorHandler}; an overflow is reported after the events
 * the ring held. It runs on a daemon thread of the {@link ViplNic}, asleep on the
 * Tail through {@link DoorbellWaiter} (never spinning: no hot window), and ends when the NIC closes,
 * or after it reported the NIC's death (a {@code CATASTROPHIC} event of resource NIC), since nothing
 * more can come.
 *
 * <p>The ring is read inside the NIC's {@code MappingGuard}, the handler called outside it, so that a
 * handler may close the NIC.
 *
 * <pre>{@code
 * AsyncEvents events = new AsyncEvents(nic, structures, new DoorbellWaiter(structures, heartbeat, guard, 0));
 * Thread thread = new Thread(events, "vipl-errors-0-0");
 * events.handler(error -> System.err.println(error.describe()));
 * }</pre>
 */
final class AsyncEvents implements Runnable
{
    /** A wait's length: the waiter ends it early on a close or a dead NIC anyway. */
    private static final long WAIT_NS = TimeUnit.HOURS.toNanos(1);

    private final ViplNic nic;
    /** The NIC's posts, waits and guard: read once here, not on every call. */
    private final ViplDataPath dataPath;
    private final AsyncEventRing ring;
    private final DoorbellWaiter waiter;
    private volatile AsyncErrorHandler handler = AsyncErrorHandler.DEFAULT;
    private int head;

    AsyncEvents(final ViplNic nic, final UnsafeBuffer structures, final DoorbellWaiter waiter)
    {
        this.nic = nic;
        this.dataPath = nic.dataPath();
        this.ring = new AsyncEventRing().wrap(structures, 0);
        this.waiter = waiter;
        this.head = ring.head();
    }

    void handler(final AsyncErrorHandler handler)
    {
        this.handler = null == handler ? AsyncErrorHandler.DEFAULT : handler;
    }

    @Override
    public void run()
    {
        while (true)
        {
            if (!dataPath.enterGuard())
            {
                return;
            }
            final AsyncError next;
            try
            {
                next = poll();
            }
            finally
            {
                dataPath.exitGuard();
            }
            if (null != next)
            {
                dispatch(next);
                continue;
            }
            final int code = dataPath.await(waiter, ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET,
                ViaProcessStructuresLayout.ASYNC_WAITERS_OFFSET, CountReached.of(head + 1), WAIT_NS, DoorbellWait.SLEEP);
            if (DoorbellWaiter.NIC_DEAD == code)
            {
                dispatch(new AsyncError(nic, AsyncError.Resource.NIC, AsyncError.Code.CATASTROPHIC, null, null, 0, 0, 0,
                    false));
                return;
            }
            if (DoorbellWaiter.CLOSED == code)
            {
                return;
            }
        }
    }

    /**
     * Takes the oldest whole event the NIC appended or, once the ring is empty, a report that it
     * overflowed. One at a time, each handed to the handler before the next is taken: a slow handler
     * holds back one event, and the ring's room is what the NIC may raise meanwhile. Inside the NIC's
     * guard.
     *
     * @return the event, or null if there is none.
     */
    AsyncError poll()
    {
        // Writer: the NIC, after the event's Valid word.
        if (head != ring.tailVolatile() && ring.isWhole(head))
        {
            final AsyncError error = eventAt(head);
            ring.take(head);
            head++;
            return error;
        }
        // Writer: the NIC, with release, when an event found the ring full.
        if (ring.takeOverflowed())
        {
            return new AsyncError(nic, AsyncError.Resource.NIC, AsyncError.Code.CATASTROPHIC, null, null, 0, 0, 0, true);
        }
        return null;
    }

    private AsyncError eventAt(final int sequence)
    {
        final int viIndex = ring.vi(sequence);
        final AsyncError.Resource resource = AsyncError.Resource.of(ring.resource(sequence));
        final Vi vi = viIndex >= 0 ? nic.viOfIndex(viIndex) : null;
        return new AsyncError(nic, resource, AsyncError.Code.of(ring.error(sequence)), vi,
            AsyncError.Resource.CQ == resource ? cqOf(ring.cq(sequence)) : null,
            ring.descriptorHandle(sequence), ring.descriptorOffset(sequence), ring.op(sequence), false);
    }

    /** The CQ an event names (a CQ's overflow), or null. */
    private CompletionQueue cqOf(final int cqIndex)
    {
        return cqIndex >= 0 ? nic.cqOfIndex(cqIndex) : null;
    }

    private void dispatch(final AsyncError error)
    {
        try
        {
            handler.onError(error);
        }
        catch (final RuntimeException ex)
        {
            // A handler's failure must not end the NIC's error reporting.
            System.err.println("VIPL: the async error handler of NIC " + nic.node() + " threw " + ex);
        }
    }
}
