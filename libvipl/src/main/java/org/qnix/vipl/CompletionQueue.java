package org.qnix.vipl;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.CqRing;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.ViplResult;
import org.qnix.host.DoorbellWait;
import org.qnix.host.DoorbellWaiter;
import org.qnix.host.EmptyPolls;
import org.qnix.host.MappedViews;
import org.qnix.host.MappingGuard;

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
 * from that queue ({@link Vi#sendDone()}, {@link Vi#recvDone()}), as in VIPL 1.0. A ring that found
 * no room for an entry is overflowed, broken for good as VIA 1.0 says: the NIC raises a
 * {@code CATASTROPHIC} async error of resource CQ ({@link ViplNic#onError}) and
 * {@link #isOverflowed()} turns true.
 *
 * <p>Thread safe: {@link #done()} is serialised; several threads may {@link #await} at once (the NIC
 * wakes them all, each takes its own entry). Taking entries allocates nothing. A {@link #close()} from
 * another thread ends the waits on the CQ ({@code INVALID_STATE}) and waits until they left before the
 * driver takes the ring back, as {@link ViplNic#close()} does for the NIC's memory.
 */
public final class CompletionQueue extends DriverResource
{
    /** Entries of a VI destroyed since its queue completed. */
    private static final Completion NO_VI_SEND = new Completion(null, true);
    private static final Completion NO_VI_RECEIVE = new Completion(null, false);
    /** A notification's wait: the waiter ends it early on a close or a dead NIC. */
    private static final long NOTIFY_WAIT_MS = TimeUnit.HOURS.toMillis(1);
    /** How long a destroy waits for the waits it ended to leave: they leave within a sleep slice. */
    private static final long QUIESCENCE_NS = TimeUnit.SECONDS.toNanos(10);

    private final int cq;
    /** The ring and its size: both change with {@link #resize}, under this object's monitor. */
    private int entries;
    private MappedViews ring;
    /** The ring's words, wrapped over {@link #ring}; a resize wraps it over the new one. */
    private final CqRing entriesView;
    /** Read by {@link #endWaits()} without the monitor. */
    private volatile DoorbellWaiter waiter;
    /** Rings of this CQ before a resize: a thread of this process may still be asleep on one. */
    private final List<MappedViews> formerRings = new ArrayList<>();
    private boolean unmapped;
    private boolean lost;
    /** Done polls of this CQ that found nothing: a loop of them looks at the NIC now and then. */
    private final EmptyPolls emptyPolls = new EmptyPolls();
    private boolean notifyPending;
    /**
     * Every wait on the ring runs inside it (and inside the NIC's): a destroy closes it, wakes the
     * sleepers, and gives the ring back only once none is inside. The NIC's close closes it too.
     */
    private final MappingGuard waits = new MappingGuard();

    /**
     * A CQ entry ({@code VipCQDone}): {@code vi}'s send queue or its receive queue completed a
     * descriptor. A VI has exactly two, made once ({@link Vi#completion(boolean)}), so taking entries
     * allocates nothing; {@code vi} is null if the VI was destroyed since.
     */
    public record Completion(Vi vi, boolean sendQueue)
    {
    }

    /**
     * {@code VipCQNotify}'s handler: called once, from a library thread, with the entry it took off the
     * CQ.
     *
     * <pre>{@code
     * cq.notify((queue, c) -> work.offer(c.sendQueue() ? c.vi().sendDone() : c.vi().recvDone()));
     * }</pre>
     */
    @FunctionalInterface
    public interface NotifyHandler
    {
        /** @param completion the entry, taken off {@code cq}. */
        void completed(CompletionQueue cq, Completion completion);
    }

    CompletionQueue(final ViplNic nic, final int cq, final int entries, final MappedViews ring)
    {
        super(nic);
        this.cq = cq;
        this.entries = entries;
        this.ring = ring;
        this.entriesView = new CqRing().wrap(ring.buffer(), 0, entries);
        this.waiter = dataPath.waiter(ring.buffer(), waits);
    }

    /**
     * {@code VipCQDone}: the oldest entry, taken off the ring, or null ({@code NOT_DONE}). Allocates
     * nothing.
     *
     * <pre>{@code
     * for (CompletionQueue.Completion c = cq.done(); c != null; c = cq.done()) { ... }
     * }</pre>
     *
     * @throws ViplNicDeadException once the NIC stopped, looked at every {@code EmptyPolls.PER_LOOK}
     *                              polls that found nothing: a loop of polls ends as {@link #await} does.
     */
    public synchronized Completion done()
    {
        ensureUsable();
        final int head = entriesView.head();
        // Writer: the NIC, the Queue word last with release.
        final int queue = entriesView.queue(head);
        if (CqRingLayout.QUEUE_EMPTY == queue)
        {
            if (emptyPolls.lookDue())
            {
                dataPath.checkRunning();
            }
            return null;
        }
        final int viIndex = entriesView.vi(head);
        entriesView.take(head);
        final boolean send = CqRingLayout.QUEUE_SEND == queue;
        final Vi vi = nic.viOfIndex(viIndex);
        return null != vi ? vi.completion(send) : send ? NO_VI_SEND : NO_VI_RECEIVE;
    }

    /**
     * {@code VipCQWait}: the oldest entry once there is one; {@code TIMEOUT} after {@code timeoutMs};
     * {@link ViplNicDeadException} if the NIC stops meanwhile.
     *
     * <pre>{@code
     * CompletionQueue.Completion c = cq.await(5_000);
     * }</pre>
     */
    public Completion await(final long timeoutMs)
    {
        return await(timeoutMs, DoorbellWait.SLEEP);
    }

    /**
     * {@code VipCQWait} with a chosen way to wait (busy, yield, backoff, sleep), as libqnix's waits.
     *
     * <pre>{@code
     * CompletionQueue.Completion c = cq.await(5_000, DoorbellWait.BACKOFF);
     * }</pre>
     */
    public Completion await(final long timeoutMs, final DoorbellWait wait)
    {
        final Completion done = poll(timeoutMs, wait);
        if (null == done)
        {
            throw new ViplException(ViplResult.TIMEOUT, "CQ " + cq + ": nothing completed in " + timeoutMs + " ms");
        }
        return done;
    }

    /**
     * {@link #await(long, DoorbellWait)} that answers a timeout with null instead of a {@code TIMEOUT}
     * exception, as {@code BlockingQueue.poll} does: for a loop that wakes now and then to look at
     * something else, and should not allocate an exception each time nothing came.
     *
     * <pre>{@code
     * while (running) { CompletionQueue.Completion c = cq.poll(1_000, DoorbellWait.SLEEP); if (null != c) { ... } }
     * }</pre>
     *
     * @return the oldest entry, or null if none came within {@code timeoutMs}.
     * @throws ViplNicDeadException if the NIC stops meanwhile; {@link ViplException} {@code INVALID_STATE} if
     *                              the NIC is closed or the CQ destroyed.
     */
    public Completion poll(final long timeoutMs, final DoorbellWait wait)
    {
        final long deadline = System.nanoTime() + ViplException.checkedTimeoutNs(timeoutMs);
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
                return null;
            }
            // Inside the NIC's guard (its close unmaps the ring and the control area the heartbeat is read
            // from) and the CQ's own (its destroy gives the ring back to the driver) until the sleep ended.
            dataPath.enterGuardOrThrow();
            try
            {
                if (!waits.enter())
                {
                    throw endedDuringWait();
                }
                try
                {
                    final int head;
                    final DoorbellWaiter ringWaiter;
                    synchronized (this)
                    {
                        head = entriesView.head();
                        ringWaiter = waiter;
                    }
                    // A resize meanwhile ends this wait on the former ring (see resize), and the loop goes on
                    // with the new one.
                    final int code = ringWaiter.await(CqRingLayout.TAIL_OFFSET, CqRingLayout.WAITERS_OFFSET,
                        CountReached.of(head + 1), left, wait);
                    if (DoorbellWaiter.NIC_DEAD == code)
                    {
                        // Still inside the NIC's guard: it reads the control area.
                        throw dataPath.nicDead();
                    }
                    if (DoorbellWaiter.CLOSED == code)
                    {
                        throw endedDuringWait();
                    }
                }
                finally
                {
                    waits.exit();
                }
            }
            finally
            {
                dataPath.exitGuard();
            }
        }
    }

    /** @return why a wait ended CLOSED: the NIC's close, or the CQ's destroy. */
    private ViplException endedDuringWait()
    {
        if (nic.isClosed())
        {
            return new ViplException(ViplResult.INVALID_STATE, "the NIC was closed during the wait on CQ " + cq);
        }
        return new ViplException(ViplResult.INVALID_STATE, "CQ " + cq + " was destroyed during the wait");
    }

    /**
     * {@code VipCQNotify}: returns at once; {@code handler} is called once, from a library thread, with
     * the next entry, taken off the CQ. Not called if the NIC closes or stops first (the NIC's error
     * handler hears of a stop). One notification per CQ at a time: another before the handler ran is
     * {@code INVALID_STATE}.
     *
     * <pre>{@code
     * cq.notify((queue, c) -> System.out.println("VI " + c.vi().index() + (c.sendQueue() ? " sent" : " received")));
     * }</pre>
     */
    public void notify(final NotifyHandler handler)
    {
        if (null == handler)
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "no handler");
        }
        synchronized (this)
        {
            ensureUsable();
            if (notifyPending)
            {
                throw new ViplException(ViplResult.INVALID_STATE, "CQ " + cq + " has a notification pending already");
            }
            notifyPending = true;
        }
        try
        {
            dataPath.notifications().submit(() ->
            {
                Completion completion = null;
                try
                {
                    // In slices: a completion that came after a slice had timed out would otherwise never
                    // reach its handler, with nothing said. A close or a dead NIC ends the wait.
                    while (null == completion)
                    {
                        completion = poll(NOTIFY_WAIT_MS, DoorbellWait.SLEEP);
                    }
                }
                finally
                {
                    synchronized (this)
                    {
                        notifyPending = false;
                    }
                }
                try
                {
                    handler.completed(this, completion);
                }
                catch (final RuntimeException ex)
                {
                    System.err.println("VIPL: a notification handler of " + this + " threw " + ex);
                }
            });
        }
        catch (final RuntimeException ex)
        {
            synchronized (this)
            {
                notifyPending = false;
            }
            throw ex;
        }
    }

    /**
     * {@code VipResizeCQ}: the CQ holds {@code newEntries} from now on (1 .. {@code MaxCQEntries}), larger
     * or smaller, with the completions it holds kept in order. The NIC moves them to a new ring between
     * two of its appends, so none is lost; {@link #done()} waits for the call, and threads in
     * {@link #await} go on on the new ring.
     *
     * <pre>{@code
     * if (cq.queued() > cq.entries() / 2) { cq.resize(2 * cq.entries()); }
     * }</pre>
     *
     * @throws ViplException {@code INVALID_PARAMETER} if the CQ holds more completions than
     *                       {@code newEntries} or it is out of range, and the CQ is as before;
     *                       {@code INVALID_STATE} (or {@link ViplNicDeadException}) if the NIC did not
     *                       take the resize, or the driver gave no answer (daemon dead, connection
     *                       lost): the CQ may no longer be the one this process reads, and every later
     *                       call on it fails but {@link #close()}; {@code ERROR_RESOURCE} if there was no
     *                       room for the new ring or the NIC refused it, and the CQ is as before.
     */
    public synchronized void resize(final int newEntries)
    {
        ensureUsable();
        final MappedViews newRing;
        try
        {
            newRing = nic.resizeCq(this, newEntries);
        }
        catch (final ViplException ex)
        {
            lost = ViplResult.INVALID_STATE == ex.result() || ex instanceof ViplNicDeadException;
            throw ex;
        }
        final MappedViews oldRing = ring;
        final DoorbellWaiter oldWaiter = waiter;
        formerRings.add(oldRing);
        ring = newRing;
        entries = newEntries;
        waiter = dataPath.waiter(newRing.buffer(), waits);
        // The NIC appends to the new ring only. A thread that read the old Head and is about to sleep on
        // the old Tail must not wait for an entry there: the old Tail is moved past every Head it may
        // have read (none is beyond the current one), then its sleepers are woken.
        entriesView.releaseWaitsAtHead();
        entriesView.wrap(newRing.buffer(), 0, newEntries);
        oldWaiter.wakeAll(CqRingLayout.TAIL_OFFSET);
    }

    /**
     * @return the CQ's capacity: as created, or as last {@link #resize resized}.
     *
     * <pre>{@code
     * Descriptor[] window = new Descriptor[cq.entries()];
     * }</pre>
     */
    public synchronized int entries()
    {
        return entries;
    }

    /**
     * @return entries the NIC appended and no {@link #done()} took yet.
     *
     * <pre>{@code
     * int backlog = cq.queued();
     * }</pre>
     */
    public synchronized int queued()
    {
        if (unmapped || waits.isClosed())
        {
            return 0;
        }
        // Writer: the NIC (Tail); this process (Head).
        return entriesView.queued();
    }

    /**
     * @return true once a completion found the ring full: entries were lost, and the NIC raised a
     * {@code CATASTROPHIC} async error of resource CQ.
     *
     * <pre>{@code
     * if (cq.isOverflowed()) { rebuild(); }
     * }</pre>
     */
    public synchronized boolean isOverflowed()
    {
        // Writer: the NIC, with release, when an entry found no room.
        return !unmapped && !waits.isClosed() && entriesView.isOverflowed();
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

    /**
     * Ends the waits on the CQ (its destroy, or the NIC's close) and wakes the threads asleep in them to
     * see it. Not under this object's monitor, which a resize holds over a driver call.
     */
    void endWaits()
    {
        if (waits.beginClose())
        {
            waiter.wakeAll(CqRingLayout.TAIL_OFFSET);
        }
    }

    /**
     * For the destroy, before the driver takes the ring back: ends the waits, waits until none is inside,
     * and lets a {@link #done()} under way finish; every later call refuses ({@code INVALID_STATE}).
     *
     * @throws ViplException {@code INVALID_STATE} if a wait is still inside after {@link #QUIESCENCE_NS}
     *                       (its thread stopped): the ring stays, and the destroy may be tried again.
     */
    void endWaitsAndAwaitThem()
    {
        endWaits();
        if (!waits.awaitQuiescence(QUIESCENCE_NS))
        {
            throw new ViplException(ViplResult.INVALID_STATE, "a wait on CQ " + cq + " did not end: the CQ stays " +
                "until it does; destroy it again");
        }
        synchronized (this)
        {
            // A done() or resize() that looked at the guard before it closed has finished: none will read the ring.
        }
    }

    synchronized void unmap()
    {
        if (!unmapped)
        {
            unmapped = true;
            ring.close();
            formerRings.forEach(MappedViews::close);
            formerRings.clear();
        }
    }

    private void ensureUsable()
    {
        // First: a CQ made while the NIC closed may have missed the close of its waits.
        if (nic.isClosed())
        {
            throw dataPath.closedException();
        }
        if (unmapped)
        {
            throw new ViplException(ViplResult.INVALID_STATE, "CQ " + cq + " was destroyed, or its NIC closed");
        }
        if (waits.isClosed())
        {
            throw new ViplException(ViplResult.INVALID_STATE, "CQ " + cq + " is being destroyed, or its destroy " +
                "failed: destroy it again");
        }
        if (lost)
        {
            throw new ViplException(ViplResult.INVALID_STATE, "CQ " + cq + ": its resize did not finish, so the " +
                "ring the NIC completes into is unknown: destroy it");
        }
    }

    void destroy()
    {
        synchronized (this)
        {
            if (notifyPending)
            {
                // Its thread sleeps on the ring: the ring stays until the notification ends.
                throw new ViplException(ViplResult.INVALID_STATE, "CQ " + cq + " has a notification pending");
            }
        }
        nic.destroyCq(this);
    }

    /**
     * @return the CQ's index and size, for messages.
     *
     * <pre>{@code
     * System.out.println(cq);
     * }</pre>
     */
    public synchronized String toString()
    {
        return "CQ " + cq + " of " + entries + " entries";
    }
}
