package org.qnix.vipl;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.ViplResult;
import org.qnix.host.DoorbellWait;
import org.qnix.host.DoorbellWaiter;
import org.qnix.host.MappedViews;

/**
 * A completion queue ({@code VipCreateCQ}): the work queues attached to it report each completed
 * descriptor here. Its ring is in host memory the driver allocated and this process maps.
 * {@link #close()} is {@code VipDestroyCQ}, refused ({@code ERROR_RESOURCE}) while a VI's queue is
 * attached.
 *
 * <pre>{@code
 * try (CompletionQueue cq = nic.createCq(256)) { Vi vi = nic.createVi(attributes, cq, cq); ... }
 * CompletionQueue.Completion c = cq.await(1_000);      // VipCQWait: which VI, which queue
 * Descriptor d = c.sendQueue() ? c.vi().sendDone() : c.vi().recvDone();
 * }</pre>
 *
 * <p>An entry says only that a queue of a VI completed a descriptor; the descriptor itself is taken
 * from that queue ({@link Vi#sendDone()}, {@link Vi#recvDone()}), as in VIPL 1.0.
 */
public final class CompletionQueue extends DriverResource
{
    private final int cq;
    private final int entries;
    private final MappedViews ring;
    private final DoorbellWaiter waiter;
    private final CountReached reached = new CountReached();

    /** A CQ entry ({@code VipCQDone}): {@code vi}'s send queue or its receive queue completed a descriptor. */
    public record Completion(Vi vi, boolean sendQueue)
    {
    }

    CompletionQueue(final ViplNic nic, final int cq, final int entries, final MappedViews ring)
    {
        super(nic);
        this.cq = cq;
        this.entries = entries;
        this.ring = ring;
        this.waiter = nic.waiter(ring.buffer());
    }

    /** {@code VipCQDone}: the oldest entry, taken off the ring, or null ({@code NOT_DONE}). */
    public synchronized Completion done()
    {
        final UnsafeBuffer b = ring.buffer();
        final int head = b.getInt(CqRingLayout.HEAD_OFFSET);
        final int entry = CqRingLayout.entryOffset(entries, head & 0xFFFFFFFFL);
        // Writer: the NIC, the Queue word last with release.
        final int queue = b.getIntVolatile(entry + CqRingLayout.ENTRY_QUEUE_OFFSET);
        if (CqRingLayout.QUEUE_EMPTY == queue)
        {
            return null;
        }
        final int vi = b.getInt(entry + CqRingLayout.ENTRY_VI_OFFSET);
        b.putInt(entry + CqRingLayout.ENTRY_QUEUE_OFFSET, CqRingLayout.QUEUE_EMPTY);
        // Reader: the NIC, which appends only while Tail - Head leaves room.
        b.putIntRelease(CqRingLayout.HEAD_OFFSET, head + 1);
        return new Completion(nic.viOfIndex(vi), CqRingLayout.QUEUE_SEND == queue);
    }

    /** {@code VipCQWait}: the oldest entry once there is one; {@code TIMEOUT} after {@code timeoutMs}. */
    public Completion await(final long timeoutMs)
    {
        final long timeoutNs = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        final long deadline = System.nanoTime() + timeoutNs;
        while (true)
        {
            final Completion done = done();
            if (null != done)
            {
                return done;
            }
            final long left = deadline - System.nanoTime();
            if (left <= 0)
            {
                throw new ViplException(ViplResult.TIMEOUT, "CQ " + cq + ": nothing completed in " + timeoutMs + " ms");
            }
            final int head;
            synchronized (this)
            {
                head = ring.buffer().getInt(CqRingLayout.HEAD_OFFSET);
            }
            reached.target = head + 1;
            final int code = nic.await(waiter, CqRingLayout.TAIL_OFFSET, CqRingLayout.WAITERS_OFFSET, reached, left,
                DoorbellWait.SLEEP);
            if (DoorbellWaiter.NIC_DEAD == code)
            {
                throw new ViplException(ViplResult.ERROR_RESOURCE, nic.describeStopped());
            }
            if (DoorbellWaiter.CLOSED == code)
            {
                throw new ViplException(ViplResult.INVALID_STATE, "the NIC was closed during the wait");
            }
        }
    }

    public int entries()
    {
        return entries;
    }

    /** @return the CQ's index in the NIC's CQ table. */
    int index()
    {
        return cq;
    }

    ViplNic nic()
    {
        return nic;
    }

    void unmap()
    {
        ring.close();
    }


    void destroy()
    {
        nic.destroyCq(this);
    }
}
