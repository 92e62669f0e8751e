package org.qnix.vipl;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplResult;
import org.qnix.host.DoorbellWait;
import org.qnix.host.DoorbellWaiter;
import org.qnix.host.EmptyPolls;
import org.qnix.host.MappingGuard;

/**
 * One work queue of a {@link Vi} on the process's side (issue 14): the descriptors posted and not yet
 * taken back, in posting order, since the NIC completes them in that order; {@code VipSendDone} /
 * {@code VipRecvDone} look at the oldest one's status; {@code VipSendWait} / {@code VipRecvWait} sleep
 * on the queue's completion counter in the VIA Process Structures (the NIC increments it after the
 * status, with release, and wakes the sleepers its waiters word counts), through libhost's
 * {@link DoorbellWaiter} as libqnix waits on a doorbell.
 *
 * <p>The queue is a fixed ring of {@link ViaTablesLayout#MAX_DESCRIPTORS_PER_QUEUE} (the NIC's own
 * work queue's depth, {@code MaxDescriptorsPerQueue} of {@code VipQueryNic}): a post beyond it is
 * refused with {@code ERROR_RESOURCE} before it reaches the NIC, which would otherwise complete it
 * with a format error. A descriptor is counted here until it is taken back, the NIC only until it
 * completes, so the NIC's queue never overflows. Posting allocates nothing.
 *
 * <p>Every access to memory the NIC's close unmaps (the counter, a descriptor's status, the Command
 * Queue, the heartbeat) is inside the NIC's guard, so that the close never unmaps it under a call: a
 * call on a closed NIC throws {@code INVALID_STATE} instead. Once its VI is destroyed
 * ({@link #destroyed()}) every call throws {@code INVALID_PARAMETER}: the driver may give the VI's index
 * to the next VI, which a post would reach.
 *
 * <pre>{@code
 * ViWorkQueue sends = new ViWorkQueue(nic, nic.structures(), ViaProcessStructuresLayout.sendCompletionOffset(n),
 *     "sends", viGuard);
 * sends.post(descriptor, true, vi.index(), region.handle(), offset);
 * Descriptor done = sends.await(TimeUnit.SECONDS.toNanos(1), DoorbellWait.SLEEP);
 * }</pre>
 */
final class ViWorkQueue
{
    static final int DEPTH = ViaTablesLayout.MAX_DESCRIPTORS_PER_QUEUE;
    private static final int MASK = DEPTH - 1;

    private final Descriptor[] posted = new Descriptor[DEPTH];
    private final UnsafeBuffer structures;
    private final int line;
    private final int counter;
    private final int waiters;
    private final ViplNic nic;
    /** The NIC's posts, waits and guard: read once here, not on every call. */
    private final ViplDataPath dataPath;
    private final DoorbellWaiter waiter;
    private final String name;
    /** Done polls of this queue that found nothing: a loop of them looks at the NIC now and then. */
    private final EmptyPolls emptyPolls = new EmptyPolls();
    private long head;
    private long tail;
    /** Completions this queue's descriptors taken back account for, from the counter's value at creation. */
    private int taken;
    /** A {@code VipSendNotify}/{@code VipRecvNotify} not yet called back: at most one per queue. */
    private boolean notifyPending;
    /** The VI was destroyed: its index may be another VI's now. */
    private boolean destroyed;

    /**
     * @param line the offset of the queue's completion line in the VIA Process Structures.
     * @param ends the VI's guard: its close (the VI destroyed, or the NIC closed) ends the waits.
     */
    ViWorkQueue(final ViplNic nic, final UnsafeBuffer structures, final int line, final String name,
        final MappingGuard ends)
    {
        this.nic = nic;
        this.dataPath = nic.dataPath();
        this.waiter = dataPath.waiter(structures, ends);
        this.structures = structures;
        this.line = line;
        this.counter = line + ViaProcessStructuresLayout.COMPLETION_COUNTER_OFFSET;
        this.waiters = line + ViaProcessStructuresLayout.COMPLETION_WAITERS_OFFSET;
        this.name = name;
        // A VI number used before keeps its line's count: this VI's completions start from here.
        this.taken = structures.getIntVolatile(counter);
    }

    /**
     * Clears {@code descriptor}'s status, queues it and writes its Command Queue entry under this
     * queue's lock, so that two threads posting on one queue put their descriptors here and on the
     * Command Queue in the same order, the order the NIC completes them in.
     *
     * @throws ViplException {@code INVALID_STATE} once the NIC was closed, {@code INVALID_PARAMETER} once
     *                       the VI was destroyed, {@code ERROR_RESOURCE} with the queue full.
     */
    void post(final Descriptor descriptor, final boolean send, final int vi, final int handle, final int offset)
    {
        // The descriptor's memory and the Command Queue are what the NIC's close unmaps.
        dataPath.enterGuardOrThrow();
        try
        {
            postInside(descriptor, send, vi, handle, offset);
        }
        finally
        {
            dataPath.exitGuard();
        }
    }

    private synchronized void postInside(final Descriptor descriptor, final boolean send, final int vi,
        final int handle, final int offset)
    {
        // Under the lock the destroy takes too: no post names the VI's index once the driver may give it away.
        ensureNotDestroyed();
        if (tail - head >= DEPTH)
        {
            throw new ViplException(ViplResult.ERROR_RESOURCE, name + " holds " + DEPTH +
                " descriptors not taken back (MaxDescriptorsPerQueue): take completed ones with Done or Wait first");
        }
        descriptor.clearStatus();
        // Queued before the post: the NIC may complete it before this thread returns.
        posted[(int)(tail & MASK)] = descriptor;
        tail++;
        try
        {
            dataPath.post(send, vi, handle, offset);
        }
        catch (final RuntimeException ex)
        {
            // Never reached the NIC: nothing will complete it.
            tail--;
            posted[(int)(tail & MASK)] = null;
            throw ex;
        }
    }

    /**
     * @return the oldest posted descriptor if the NIC completed it (taken off the queue), else null.
     * @throws ViplException {@code INVALID_STATE} once the NIC was closed, {@code INVALID_PARAMETER} once
     *                       the VI was destroyed.
     */
    Descriptor done()
    {
        // Its status is in memory the NIC's close unmaps.
        dataPath.enterGuardOrThrow();
        try
        {
            return doneInside();
        }
        finally
        {
            dataPath.exitGuard();
        }
    }

    private synchronized Descriptor doneInside()
    {
        ensureNotDestroyed();
        if (head == tail)
        {
            return null;
        }
        final int i = (int)(head & MASK);
        final Descriptor oldest = posted[i];
        if (oldest.isDone())
        {
            posted[i] = null;
            head++;
            taken++;
            return oldest;
        }
        if (emptyPolls.lookDue())
        {
            dataPath.checkRunning();
        }
        return null;
    }

    synchronized boolean isEmpty()
    {
        return head == tail;
    }

    /** @return descriptors posted and not taken back. */
    synchronized int size()
    {
        return (int)(tail - head);
    }

    /** Claims the queue's one notification. @throws ViplException INVALID_STATE if one is pending already. */
    synchronized void claimNotify()
    {
        ensureNotDestroyed();
        if (notifyPending)
        {
            throw new ViplException(ViplResult.INVALID_STATE, name + " has a notification pending already");
        }
        notifyPending = true;
    }

    synchronized void notifyEnded()
    {
        notifyPending = false;
    }

    /** Wakes this process's threads asleep on the queue's counter (a close ends their waits). */
    void wakeAll()
    {
        waiter.wakeAll(counter);
    }

    /** Every later call throws {@code INVALID_PARAMETER}: the driver destroyed the VI. */
    synchronized void destroyed()
    {
        destroyed = true;
    }

    private void ensureNotDestroyed()
    {
        if (destroyed)
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, name + ": the VI was destroyed");
        }
    }

    /** @return the queue's completion line in the VIA Process Structures. */
    int line()
    {
        return line;
    }

    /**
     * @return the oldest posted descriptor once completed; waits up to {@code timeoutNs}.
     * @throws ViplException {@code TIMEOUT}; {@code INVALID_STATE} once the NIC was closed,
     *                       {@code INVALID_PARAMETER} once the VI was destroyed, also during the wait;
     *                       {@link ViplNicDeadException} if the NIC stopped.
     */
    Descriptor await(final long timeoutNs, final DoorbellWait wait)
    {
        final long deadline = System.nanoTime() + timeoutNs;
        while (true)
        {
            // From the counter's read to the end of the sleep inside the NIC's guard: its close unmaps the
            // VIA Process Structures, and the control area the heartbeat is read from, only once no call is
            // inside. The sleep itself ends when the VI's guard closes, which the NIC's close does too.
            dataPath.enterGuardOrThrow();
            try
            {
                // Read before the oldest's status: the NIC writes the status, then the counter (release),
                // so an oldest not done below is not counted in this value yet, and its completion moves
                // the counter past it. Read after, a completion in between would be counted already, and
                // the wait below would be for one more that never comes.
                // Writer: the NIC, after the status of the descriptor it completed.
                final int count = structures.getIntVolatile(counter);
                final Descriptor done = doneInside();
                if (null != done)
                {
                    return done;
                }
                final int expected;
                synchronized (this)
                {
                    expected = taken + 1;
                }
                final long left = deadline - System.nanoTime();
                if (left <= 0)
                {
                    throw timeout(timeoutNs);
                }
                // Normally the next completion is the oldest's; if the counter is past it already and the
                // oldest is still not done, wait for one more.
                final int code = waiter.await(counter, waiters,
                    CountReached.of(count - expected >= 0 ? count + 1 : expected), left, wait);
                switch (code)
                {
                    case DoorbellWaiter.COMPLETE:
                        break;

                    case DoorbellWaiter.TIMED_OUT:
                        throw timeout(timeoutNs);

                    case DoorbellWaiter.NIC_DEAD:
                        // Still inside the guard: it reads the control area.
                        throw dataPath.nicDead();

                    default:
                        throw endedDuringWait();
                }
            }
            finally
            {
                dataPath.exitGuard();
            }
        }
    }

    /** @return why a wait ended CLOSED: the NIC's close, or the VI's destroy. */
    private ViplException endedDuringWait()
    {
        if (nic.isClosed())
        {
            return new ViplException(ViplResult.INVALID_STATE, "the NIC was closed during the wait on " + name);
        }
        return new ViplException(ViplResult.INVALID_PARAMETER, name + ": the VI was destroyed during the wait");
    }

    private ViplException timeout(final long timeoutNs)
    {
        return new ViplException(ViplResult.TIMEOUT, name + ": nothing completed in " +
            TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms");
    }
}
