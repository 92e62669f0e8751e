package org.qnix.vipl;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplResult;
import org.qnix.host.DoorbellWait;
import org.qnix.host.DoorbellWaiter;
import org.qnix.host.EmptyPolls;

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
 * <pre>{@code
 * ViWorkQueue sends = new ViWorkQueue(nic, nic.structures(), ViaProcessStructuresLayout.sendCompletionOffset(n), "sends");
 * sends.post(descriptor, () -> nic.post(true, vi, handle, offset));
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

    /** @param line the offset of the queue's completion line in the VIA Process Structures. */
    ViWorkQueue(final ViplNic nic, final UnsafeBuffer structures, final int line, final String name)
    {
        this.nic = nic;
        this.waiter = nic.waiter(structures);
        this.structures = structures;
        this.line = line;
        this.counter = line + ViaProcessStructuresLayout.COMPLETION_COUNTER_OFFSET;
        this.waiters = line + ViaProcessStructuresLayout.COMPLETION_WAITERS_OFFSET;
        this.name = name;
        // A VI number used before keeps its line's count: this VI's completions start from here.
        this.taken = structures.getIntVolatile(counter);
    }

    /**
     * Queues {@code descriptor} and runs {@code post} (the Command Queue entry) under this queue's lock,
     * so that two threads posting on one queue put their descriptors here and on the Command Queue in
     * the same order, the order the NIC completes them in.
     */
    synchronized void post(final Descriptor descriptor, final boolean send, final int vi, final int handle,
        final int offset)
    {
        if (tail - head >= DEPTH)
        {
            throw new ViplException(ViplResult.ERROR_RESOURCE, name + " holds " + DEPTH +
                " descriptors not taken back (MaxDescriptorsPerQueue): take completed ones with Done or Wait first");
        }
        // Queued before the post: the NIC may complete it before this thread returns.
        posted[(int)(tail & MASK)] = descriptor;
        tail++;
        try
        {
            nic.post(send, vi, handle, offset);
        }
        catch (final RuntimeException ex)
        {
            // Never reached the NIC: nothing will complete it.
            tail--;
            posted[(int)(tail & MASK)] = null;
            throw ex;
        }
    }

    /** @return the oldest posted descriptor if the NIC completed it (taken off the queue), else null. */
    synchronized Descriptor done()
    {
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
            nic.checkRunning();
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

    /** @return the queue's completion line in the VIA Process Structures. */
    int line()
    {
        return line;
    }

    /** @return the oldest posted descriptor once completed; waits up to {@code timeoutNs}. */
    Descriptor await(final long timeoutNs, final DoorbellWait wait)
    {
        final long deadline = System.nanoTime() + timeoutNs;
        while (true)
        {
            // Read before the oldest's status: the NIC writes the status, then the counter (release), so
            // an oldest not done below is not counted in this value yet, and its completion moves the
            // counter past it. Read after, a completion in between would be counted already, and the
            // wait below would be for one more that never comes.
            // Writer: the NIC, after the status of the descriptor it completed.
            final int count = structures.getIntVolatile(counter);
            final Descriptor done = done();
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
            final int code = nic.await(waiter, counter, waiters,
                CountReached.of(count - expected >= 0 ? count + 1 : expected), left, wait);
            switch (code)
            {
                case DoorbellWaiter.COMPLETE:
                    break;

                case DoorbellWaiter.TIMED_OUT:
                    throw timeout(timeoutNs);

                case DoorbellWaiter.NIC_DEAD:
                    throw nic.nicDead();

                default:
                    throw new ViplException(ViplResult.INVALID_STATE, "the NIC was closed during the wait");
            }
        }
    }

    private ViplException timeout(final long timeoutNs)
    {
        return new ViplException(ViplResult.TIMEOUT, name + ": nothing completed in " +
            TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms");
    }
}
