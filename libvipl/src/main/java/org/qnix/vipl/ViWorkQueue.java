package org.qnix.vipl;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplResult;
import org.qnix.host.DoorbellWait;
import org.qnix.host.DoorbellWaiter;

/**
 * One work queue of a {@link Vi} on the process's side (issue 14): the descriptors posted and not yet
 * taken back, in posting order, since the NIC completes them in that order; {@code VipSendDone} /
 * {@code VipRecvDone} look at the oldest one's status; {@code VipSendWait} / {@code VipRecvWait} sleep
 * on the queue's completion counter in the VIA Process Structures (the NIC increments it after the
 * status, with release, and wakes a sleeper its waiters word announces), through libhost's
 * {@link DoorbellWaiter} as libqnix waits on a doorbell.
 */
final class ViWorkQueue
{
    private final ArrayDeque<Descriptor> posted = new ArrayDeque<>(64);
    private final UnsafeBuffer structures;
    private final int counter;
    private final int waiters;
    private final ViplNic nic;
    private final DoorbellWaiter waiter;
    private final CountReached reached = new CountReached();
    private final String name;
    /** Completions this queue's descriptors taken back account for, from the counter's value at creation. */
    private int taken;

    /** @param line the offset of the queue's completion line in the VIA Process Structures. */
    ViWorkQueue(final ViplNic nic, final UnsafeBuffer structures, final int line, final String name)
    {
        this.nic = nic;
        this.waiter = nic.waiter(structures);
        this.structures = structures;
        this.counter = line + ViaProcessStructuresLayout.COMPLETION_COUNTER_OFFSET;
        this.waiters = line + ViaProcessStructuresLayout.COMPLETION_WAITERS_OFFSET;
        this.name = name;
        // A VI number used before keeps its line's count: this VI's completions start from here.
        this.taken = structures.getIntVolatile(counter);
    }

    synchronized void posted(final Descriptor descriptor)
    {
        posted.addLast(descriptor);
    }

    /** @return the oldest posted descriptor if the NIC completed it (taken off the queue), else null. */
    synchronized Descriptor done()
    {
        final Descriptor head = posted.peekFirst();
        if (null != head && head.isDone())
        {
            posted.pollFirst();
            taken++;
            return head;
        }
        return null;
    }

    synchronized boolean isEmpty()
    {
        return posted.isEmpty();
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
            // Normally the next completion is the oldest's; if the counter is past it already and the
            // oldest is still not done, wait for one more.
            reached.target = count - expected >= 0 ? count + 1 : expected;
            final long left = deadline - System.nanoTime();
            if (left <= 0)
            {
                throw timeout(timeoutNs);
            }
            switch (nic.await(waiter, counter, waiters, reached, left, wait))
            {
                case DoorbellWaiter.COMPLETE:
                    break;

                case DoorbellWaiter.TIMED_OUT:
                    throw timeout(timeoutNs);

                case DoorbellWaiter.NIC_DEAD:
                    throw new ViplException(ViplResult.ERROR_RESOURCE, nic.describeStopped());

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
