package org.qnix.vipl;

import java.util.concurrent.TimeUnit;

import org.qnix.abi.HostClock;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.ViplResult;
import org.qnix.host.DoorbellWait;
import org.qnix.host.MappingGuard;

/**
 * A Virtual Interface ({@code VipCreateVi}): a send queue and a receive queue, each reporting to its
 * completion queue if it has one, to be connected to exactly one remote VI. Created Idle.
 * {@link #close()} is {@code VipDestroyVi}: {@code INVALID_STATE} unless the VI is Idle.
 *
 * <p>Data ({@code VipPostSend}, {@code VipPostRecv}, {@code VipSendDone}/{@code Wait},
 * {@code VipRecvDone}/{@code Wait}): a {@link Descriptor} in registered memory is posted on a queue
 * and comes back, the same object with the NIC's status, from that queue's done or wait, in posting
 * order. Receives may be posted before the VI is connected. These calls do not take the
 * {@link ViplNic}'s monitor, so they run while another thread waits for a connection.
 *
 * <p>Once destroyed ({@link #close()}) a VI refuses every call with {@code INVALID_PARAMETER}, and a
 * wait on it in another thread ends so: the driver may give its index to the next VI created, which the
 * call would otherwise reach. On a closed NIC every call throws {@code INVALID_STATE}.
 *
 * <pre>{@code
 * Descriptor recv = memory.descriptor(0);
 * recv.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
 *     .dataSegment(0, memory.address(4096), region.handle(), 4096);
 * vi.postRecv(recv, region);
 * Descriptor got = vi.recvWait(5_000);            // got == recv; got.length() bytes arrived
 * if (got.hasError()) { ... ViplDescriptor.STATUS_LENGTH_ERROR ... }
 * }</pre>
 *
 * <pre>{@code
 * Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, ptag, false, false), cq, cq);
 * Vi.Query q = vi.query();            // IDLE, and the attributes it was created with
 * nic.connectRequest(vi, new ViplAddress(NicCoordinates.parse("1-0"), "echo".getBytes(US_ASCII)), 10_000);
 * vi.disconnect();
 * vi.close();
 * }</pre>
 */
public final class Vi extends DriverResource
{
    private final int vi;
    private final int number;
    private final ViAttributes attributes;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private RemoteVi remote;
    private long peerDeadline;
    private final ViWorkQueue sends;
    private final ViWorkQueue receives;
    /** The VI's two CQ entries, made once: {@link CompletionQueue#done()} allocates nothing. */
    private final CompletionQueue.Completion sendCompletion = new CompletionQueue.Completion(this, true);
    private final CompletionQueue.Completion receiveCompletion = new CompletionQueue.Completion(this, false);
    /** A notification waits in slices of this until its completion comes, or a close or a dead NIC ends it. */
    private static final long NOTIFY_WAIT_NS = TimeUnit.HOURS.toNanos(1);
    /** The queues' waits look at it: closed when the VI is destroyed or the NIC closed. Nothing is unmapped by it. */
    private final MappingGuard waits = new MappingGuard();

    /**
     * {@code VipSendNotify}/{@code VipRecvNotify}'s handler: called once, from a library thread, with
     * the descriptor it took off the queue.
     *
     * <pre>{@code
     * vi.recvNotify((v, d) -> arrived.offer(d));
     * }</pre>
     */
    @FunctionalInterface
    public interface NotifyHandler
    {
        /** @param descriptor the queue's oldest descriptor, completed and taken off the queue. */
        void completed(Vi vi, Descriptor descriptor);
    }

    /**
     * What {@code VipQueryVi} reports.
     *
     * @param remote the peer's attributes once connected, else null.
     */
    public record Query(ViState state, ViAttributes attributes, RemoteVi remote, boolean sendQueueEmpty,
        boolean receiveQueueEmpty)
    {
    }

    Vi(final ViplNic nic, final int vi, final int number, final ViAttributes attributes, final CompletionQueue sendCq,
        final CompletionQueue receiveCq)
    {
        super(nic);
        this.vi = vi;
        this.number = number;
        this.attributes = attributes;
        this.sendCq = sendCq;
        this.receiveCq = receiveCq;
        this.sends = new ViWorkQueue(nic, nic.structures(), ViaProcessStructuresLayout.sendCompletionOffset(number),
            "the send queue of VI " + vi, waits);
        this.receives = new ViWorkQueue(nic, nic.structures(),
            ViaProcessStructuresLayout.receiveCompletionOffset(number), "the receive queue of VI " + vi, waits);
    }

    /**
     * {@code VipPostSend}: the NIC sends what {@code descriptor} describes, in posting order, once the
     * VI is connected. {@code region} is the registered region the descriptor itself lies in; its data
     * segments name their own regions. A descriptor the NIC finds bad completes with an error status
     * and moves nothing. Refused ({@code ERROR_RESOURCE}) while {@code MaxDescriptorsPerQueue}
     * ({@link NicAttributes#maxDescriptorsPerQueue()}) descriptors are posted and not taken back. Two
     * threads may post on one queue at once: the queue's order is the order the NIC completes in.
     *
     * <pre>{@code
     * send.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(100)
     *     .dataSegment(0, memory.address(4096), region.handle(), 100);
     * vi.postSend(send, region);
     * }</pre>
     */
    public void postSend(final Descriptor descriptor, final MemoryRegion region)
    {
        post(true, descriptor, region);
    }

    /**
     * {@code VipPostRecv}: the next message arriving on the VI goes into {@code descriptor}'s segments.
     * Refused ({@code ERROR_RESOURCE}) while {@code MaxDescriptorsPerQueue} descriptors are posted and
     * not taken back, as {@link #postSend} is.
     *
     * <pre>{@code
     * recv.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
     *     .dataSegment(0, memory.address(4096), region.handle(), 4096);
     * vi.postRecv(recv, region);
     * }</pre>
     */
    public void postRecv(final Descriptor descriptor, final MemoryRegion region)
    {
        post(false, descriptor, region);
    }

    private void post(final boolean send, final Descriptor descriptor, final MemoryRegion region)
    {
        if (nic.isClosed())
        {
            // Before the checks below: the NIC's close unmapped the memory too.
            throw dataPath.closedException();
        }
        if (null == descriptor || null == region || region.isClosed() || descriptor.memory().isClosed())
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "no descriptor, or its region was deregistered " +
                "or its memory freed");
        }
        final long offset = descriptor.address() - region.address();
        if (descriptor.memory() != region.memory() || offset < 0 ||
            offset > region.length() - ViplDescriptor.CONTROL_SEGMENT_LENGTH)
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "the descriptor at offset " + descriptor.offset() +
                " is not inside the registered region " + region.handle());
        }
        // The queue's order and the Command Queue's are the same: the NIC completes in the latter.
        (send ? sends : receives).post(descriptor, send, vi, region.handle(), (int)offset);
    }

    /**
     * {@code VipSendDone}: the oldest posted send if it completed (taken off the queue), else null
     * ({@code NOT_DONE}). Never blocks, allocates nothing.
     *
     * <pre>{@code
     * Descriptor d = vi.sendDone();
     * if (d != null && d.hasError()) { ... }
     * }</pre>
     *
     * @throws ViplNicDeadException once the NIC stopped, looked at every {@code EmptyPolls.PER_LOOK}
     *                              polls that found nothing: a loop of polls ends as {@link #sendWait} does.
     * @throws ViplException        {@code INVALID_STATE} once the NIC was closed, {@code INVALID_PARAMETER}
     *                              once the VI was destroyed: a loop of polls ends then too.
     */
    public Descriptor sendDone()
    {
        return sends.done();
    }

    /**
     * {@code VipRecvDone}: the oldest posted receive if it completed, else null ({@code NOT_DONE}).
     *
     * <pre>{@code
     * Descriptor d = vi.recvDone();
     * if (d != null) { int bytes = d.length(); }
     * }</pre>
     *
     * @throws ViplNicDeadException once the NIC stopped, as {@link #sendDone()}.
     */
    public Descriptor recvDone()
    {
        return receives.done();
    }

    /**
     * {@code VipSendWait}: the oldest posted send once it completes, sleeping on the queue's completion
     * counter until the NIC wakes this thread. {@code TIMEOUT} after {@code timeoutMs};
     * {@link ViplNicDeadException} if the NIC stopped; {@code INVALID_STATE} if the NIC was closed,
     * {@code INVALID_PARAMETER} if the VI was destroyed, before or during the wait.
     *
     * <pre>{@code
     * Descriptor done = vi.sendWait(5_000);     // the descriptor posted first
     * }</pre>
     */
    public Descriptor sendWait(final long timeoutMs)
    {
        return sendWait(timeoutMs, DoorbellWait.SLEEP);
    }

    /**
     * {@code VipSendWait} with a chosen way to wait (busy, yield, backoff, sleep), as libqnix's waits.
     *
     * <pre>{@code
     * Descriptor done = vi.sendWait(5_000, DoorbellWait.BUSY);
     * }</pre>
     */
    public Descriptor sendWait(final long timeoutMs, final DoorbellWait wait)
    {
        return sends.await(ViplException.checkedTimeoutNs(timeoutMs), wait);
    }

    /**
     * {@code VipRecvWait}: the oldest posted receive once it completes; as {@link #sendWait(long)}.
     *
     * <pre>{@code
     * Descriptor got = vi.recvWait(5_000);
     * }</pre>
     */
    public Descriptor recvWait(final long timeoutMs)
    {
        return recvWait(timeoutMs, DoorbellWait.SLEEP);
    }

    /**
     * {@code VipRecvWait} with a chosen way to wait, as {@link #sendWait(long, DoorbellWait)}.
     *
     * <pre>{@code
     * Descriptor got = vi.recvWait(5_000, DoorbellWait.BACKOFF);
     * }</pre>
     */
    public Descriptor recvWait(final long timeoutMs, final DoorbellWait wait)
    {
        return receives.await(ViplException.checkedTimeoutNs(timeoutMs), wait);
    }

    /**
     * {@code VipSendNotify}: returns at once; {@code handler} is called once, from a library thread, with
     * the next send to complete, taken off the queue (so not returned by {@link #sendDone()} too). Not
     * called if the NIC closes or stops first (the NIC's error handler hears of a stop). One
     * notification per queue at a time: another before the handler ran is {@code INVALID_STATE}.
     *
     * <pre>{@code
     * vi.postSend(send, region);
     * vi.sendNotify((v, d) -> System.out.println("sent " + d.length() + " bytes, status " + d.status()));
     * }</pre>
     */
    public void sendNotify(final NotifyHandler handler)
    {
        notifyOn(sends, handler);
    }

    /**
     * {@code VipRecvNotify}: as {@link #sendNotify}, for the next receive to complete.
     *
     * <pre>{@code
     * vi.postRecv(recv, region);
     * vi.recvNotify((v, d) -> arrived.offer(d));
     * }</pre>
     */
    public void recvNotify(final NotifyHandler handler)
    {
        notifyOn(receives, handler);
    }

    /**
     * @return the queue's next completion, however long it takes: a completion that came after a slice
     * had timed out would otherwise never reach its handler, with nothing said.
     */
    private static Descriptor awaitForNotify(final ViWorkQueue queue)
    {
        while (true)
        {
            try
            {
                return queue.await(NOTIFY_WAIT_NS, DoorbellWait.SLEEP);
            }
            catch (final ViplException ex)
            {
                if (ViplResult.TIMEOUT != ex.result())
                {
                    throw ex;
                }
            }
        }
    }

    private void notifyOn(final ViWorkQueue queue, final NotifyHandler handler)
    {
        if (null == handler)
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "no handler");
        }
        queue.claimNotify();
        try
        {
            dataPath.notifications().submit(() ->
            {
                final Descriptor descriptor;
                try
                {
                    descriptor = awaitForNotify(queue);
                }
                finally
                {
                    queue.notifyEnded();
                }
                try
                {
                    handler.completed(this, descriptor);
                }
                catch (final RuntimeException ex)
                {
                    System.err.println("VIPL: a notification handler of " + this + " threw " + ex);
                }
            });
        }
        catch (final RuntimeException ex)
        {
            queue.notifyEnded();
            throw ex;
        }
    }

    /**
     * {@code VipQueryVi}: the state the NIC's VI table holds (a driver request), so Error, which the NIC
     * or a peer's departure sets, shows; the remote end as the connection reported it.
     *
     * <pre>{@code
     * if (ViState.ERROR == vi.query().state()) { vi.disconnect(); }
     * }</pre>
     */
    public Query query()
    {
        synchronized (nic)
        {
            final ViState state = nic.queryVi(this);
            return new Query(state, attributes, ViState.IDLE == state ? null : remote, sends.isEmpty(),
                receives.isEmpty());
        }
    }

    /**
     * {@code VipConnectPeerDone}: does not block. @return SUCCESS once connected ({@link #query()} then
     * names the peer), NOT_DONE while the peer has not asked, or why the request failed (TIMEOUT,
     * INVALID_RELIABILITY_LEVEL, INVALID_MTU; INVALID_STATE with no request outstanding).
     * @throws ViplNicDeadException once the driver finds the NIC stopped: the request is withdrawn and
     * the VI Idle, as for {@link #connectPeerWait()}.
     *
     * <pre>{@code
     * while (ViplResult.NOT_DONE == vi.connectPeerDone()) { doOtherWork(); }
     * }</pre>
     */
    public ViplResult connectPeerDone()
    {
        synchronized (nic)
        {
            return nic.connectPeerOutcome(this, false, 0);
        }
    }

    /**
     * {@code VipConnectPeerWait}: blocks until the peer request is matched or its timeout passes.
     *
     * @return the peer's end.
     * @throws ViplException TIMEOUT, a mismatch, or INVALID_STATE with no request outstanding;
     * {@link ViplNicDeadException} as soon as the NIC stops meanwhile (the request withdrawn, the VI Idle).
     *
     * <pre>{@code
     * nic.connectPeerRequest(vi, local, remote, 10_000);
     * RemoteVi peer = vi.connectPeerWait();
     * }</pre>
     */
    public RemoteVi connectPeerWait()
    {
        synchronized (nic)
        {
            nic.connectPeerOutcome(this, true, peerDeadline - HostClock.millis());
            return remote;
        }
    }

    /**
     * {@code VipDisconnect}: Idle again (what is posted completes DESC_FLUSHED); a connected peer's VI
     * goes to Error (connection lost). The only way out of Error.
     *
     * <pre>{@code
     * vi.disconnect();
     * vi.close();
     * }</pre>
     */
    public void disconnect()
    {
        synchronized (nic)
        {
            nic.disconnect(this);
            remote = null;
        }
    }

    /**
     * @return the attributes the VI was created with.
     *
     * <pre>{@code
     * int largest = vi.attributes().maxTransferSize();
     * }</pre>
     */
    public ViAttributes attributes()
    {
        return attributes;
    }

    /**
     * @return the CQ the send queue reports to, or null.
     *
     * <pre>{@code
     * CompletionQueue cq = vi.sendCq();
     * }</pre>
     */
    public CompletionQueue sendCq()
    {
        return sendCq;
    }

    /**
     * @return the CQ the receive queue reports to, or null.
     *
     * <pre>{@code
     * CompletionQueue cq = vi.receiveCq();
     * }</pre>
     */
    public CompletionQueue receiveCq()
    {
        return receiveCq;
    }

    /**
     * @return the VI's index in its NIC's VI table: its number on the wire.
     *
     * <pre>{@code
     * System.out.println("VI " + vi.index());
     * }</pre>
     */
    public int index()
    {
        return vi;
    }

    /** @return its position among this process's VIs (where its completion counters are). */
    int number()
    {
        return number;
    }

    void peerRequested(final long deadline)
    {
        peerDeadline = deadline;
    }

    void connected(final RemoteVi peer)
    {
        remote = peer;
    }

    ViplNic nic()
    {
        return nic;
    }

    /** @return the CQ entry of this VI's send or receive queue: one object each, made with the VI. */
    CompletionQueue.Completion completion(final boolean sendQueue)
    {
        return sendQueue ? sendCompletion : receiveCompletion;
    }

    /** Ends the waits on the VI's queues (the NIC closes) and wakes the threads asleep in them to see it. */
    void endWaits()
    {
        if (waits.beginClose())
        {
            sends.wakeAll();
            receives.wakeAll();
        }
    }

    /**
     * @return the VI's index and level, for messages.
     *
     * <pre>{@code
     * System.out.println(vi);
     * }</pre>
     */
    public String toString()
    {
        return "VI " + vi + " (" + attributes.reliability() + ")";
    }


    /**
     * {@code VipDestroyVi}, under the NIC's monitor. Both queues' locks are held over the driver's
     * destroy: a post is checked and written to the Command Queue under its queue's lock, so none is
     * between the two when the driver frees the index for the next VI, and none comes after.
     */
    void destroy()
    {
        synchronized (sends)
        {
            synchronized (receives)
            {
                nic.destroyVi(this);
                sends.destroyed();
                receives.destroyed();
            }
        }
        // Nothing is unmapped (the completion lines are the NIC's): the waits need only be told.
        endWaits();
    }
}
