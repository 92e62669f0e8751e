package org.qnix.firmware;

import org.agrona.collections.IntArrayQueue;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaPacketHeader;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * The VIA role's work queues and the state it shares with {@link ViaReceiver} (issue 14): posts taken
 * from a VIA process's Command Queue, checked and queued on their VI ({@link ViaPosts}); the VI's turn in the first level
 * of {@link SendScheduler}'s round robin, where a VIA process is a peer of the QNIX processes and its
 * connected VIs with packets to send are the second level, one packet per step, each VI strictly in
 * order (a message of its own through {@link ViaSender}, or a response to its peer's RDMA read through
 * {@link ViaReadResponder}, never the two interleaved); the completion of each queue in posting order
 * (Unreliable and Reliable Delivery sends when the last packet is in the peer's FIFO, Reliable
 * Reception's on the peer's {@code OP_ACK}, RDMA reads when their response has been scattered, and on
 * either queue a descriptor that failed at its post once the older ones have completed); which VI of a
 * table entry the work belongs to (owner and Generation, {@link #current}); and the Error state:
 * Connected to Error by compare-and-set, every posted descriptor completed in posting order,
 * DESC_FLUSHED unless its own end was already known (and later posts at once), an asynchronous event,
 * and {@code OP_ERROR} to the peer.
 *
 * <pre>{@code
 * via.post(slot, ProcessCommand.VIA_POST_SEND, vi, handle, offset);   // from CommandQueueReader
 * int sent = via.sendStep(slot);                                        // from SendScheduler
 * }</pre>
 */
final class ViaEngine
{
    /** {@link #sendStep}: the process had nothing to send. */
    static final int NOTHING = 0;
    /** {@link #sendStep}: a packet went, or a send completed with an error. */
    static final int PACKET_SENT = 1;
    /** {@link #sendStep}: the peer's FIFO is full; nothing was done. */
    static final int FIFO_FULL = -1;

    private final AtomicBuffer sdram;
    private final ViaTablesLayout via;
    private final NicCounters counters;
    private final ViaMemory memory;
    private final ViaDescriptors descriptors;
    private final ViaCompletions completions;
    private final ViaPacketWriter packets;
    private final ViaSender sender;
    private final ViaReadResponder responder;
    private final ViaPosts posts;
    private final ViaViState[] states;
    private final IntArrayQueue[] ready;
    private final ViTableEntry entry = new ViTableEntry();

    ViaEngine(final FirmwareContext ctx)
    {
        this.sdram = ctx.sdram();
        this.via = ctx.sdramLayout().via();
        this.counters = ctx.counters();
        this.memory = new ViaMemory(ctx);
        this.descriptors = new ViaDescriptors(ctx, memory);
        this.completions = new ViaCompletions(ctx, memory, descriptors);
        this.packets = new ViaPacketWriter(ctx);
        this.sender = new ViaSender(ctx, this);
        this.responder = new ViaReadResponder(ctx, this);
        this.posts = new ViaPosts(ctx, this);
        this.states = new ViaViState[via.viEntries()];
        final int processes = ctx.parameters().maxProcessesPerNic();
        this.ready = new IntArrayQueue[processes];
        for (int p = 0; p < processes; p++)
        {
            ready[p] = new IntArrayQueue(ViaTablesLayout.MAX_VIS_PER_PROCESS, -1);
        }
    }

    ViaMemory memory()
    {
        return memory;
    }

    ViaDescriptors descriptors()
    {
        return descriptors;
    }

    ViaCompletions completions()
    {
        return completions;
    }

    ViaPacketWriter packets()
    {
        return packets;
    }

    ViaReadResponder responder()
    {
        return responder;
    }

    int viEntries()
    {
        return states.length;
    }

    /** @return the entry of {@code vi} through this engine's flyweight (valid until the next call). */
    ViTableEntry entry(final int vi)
    {
        return entry.wrap(sdram, (int)via.viOffset(vi));
    }

    /** @return the working state of table entry {@code vi}, made on first use (not on the data path). */
    ViaViState state(final int vi)
    {
        ViaViState s = states[vi];
        if (null == s)
        {
            s = new ViaViState(vi);
            states[vi] = s;
        }
        return s;
    }

    /**
     * A post from the Command Queue of the VIA process in {@code slot}: Context = the VI, Group = the
     * descriptor's memory handle, Size = its offset in that region ({@link ViaPosts}).
     */
    void post(final ProcessSlot slot, final int command, final int vi, final int handle, final int offset)
    {
        posts.post(slot, command, vi, handle, offset);
    }

    /**
     * @return the working state of the VI entry {@code e} (table entry {@code vi}) holds now, for
     * {@code owner}: if the state's work belongs to a previous VI of the entry (another owner, or an
     * older Generation: the driver destroys and creates VIs without the NIC), that work is dropped,
     * without completions, and the state starts again for this VI with empty queues.
     */
    ViaViState current(final int vi, final ViTableEntry e, final int owner)
    {
        final ViaViState s = state(vi);
        // Writer: the driver, the Generation before the State (release), which the caller read first.
        final int generation = e.generation();
        if (s.owner != owner || s.generation != generation)
        {
            forget(s);
            s.owner = owner;
            s.generation = generation;
            s.connectionId = e.connectionId();
        }
        return s;
    }

    /** {@code s} has a packet to send: into its process's list, if not there yet. */
    void schedule(final int owner, final ViaViState s)
    {
        if (!s.scheduled)
        {
            s.scheduled = true;
            ready[owner].addInt(s.vi);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // TX: one packet of the next VI of this process that has one
    // ---------------------------------------------------------------------------------------------

    /** @return {@link #NOTHING}, {@link #PACKET_SENT} or {@link #FIFO_FULL}. */
    int sendStep(final ProcessSlot slot)
    {
        final IntArrayQueue queue = ready[slot.index];
        for (int n = queue.size(); n > 0; n--)
        {
            final int vi = queue.pollInt();
            final ViaViState s = states[vi];
            final ViTableEntry e = entry(vi);
            final int state = e.state();
            final int owner = e.owner();
            if (ViTableEntry.STATE_CONNECTED != state || owner != slot.index || s.owner != owner ||
                s.generation != e.generation() || !s.hasPacketToSend())
            {
                s.scheduled = false;
                if (ViTableEntry.STATE_ERROR == state && owner == slot.index)
                {
                    flush(vi);
                }
                continue;
            }
            // A message in progress goes on; between messages the peer's reads are answered first.
            final boolean respond = !s.sendStarted && (s.responseStarted || !s.readRequests.isEmpty());
            final int sent = respond ? responder.responsePacket(slot, s, e) : sender.sendPacket(slot, s, e);
            if (FIFO_FULL == sent)
            {
                queue.addInt(vi);
                return FIFO_FULL;
            }
            if (NOTHING == sent)
            {
                // QFENCE: the VI waits for its reads; their end schedules it again.
                s.scheduled = false;
                continue;
            }
            // The second level of the round robin: this VI goes to the tail if it has more.
            if (s.hasPacketToSend() && ViTableEntry.STATE_CONNECTED == entry(vi).state())
            {
                queue.addInt(vi);
            }
            else
            {
                s.scheduled = false;
            }
            return PACKET_SENT;
        }
        return NOTHING;
    }

    // ---------------------------------------------------------------------------------------------
    // Completion of the send queue, in posting order
    // ---------------------------------------------------------------------------------------------

    /** Completes the finished send-queue descriptors at the head, oldest first, up to the first unfinished. */
    void completeSends(final ViTableEntry e, final ViaViState s)
    {
        completeFinished(e, s, s.sends, true, s.sends.transmit);
    }

    /**
     * Completes the finished receive-queue descriptors at the head, oldest first, up to the first
     * unfinished: those that failed at their post behind a receive that has now completed.
     */
    void completeReceives(final ViTableEntry e, final ViaViState s)
    {
        completeFinished(e, s, s.receives, false, s.receives.tail());
    }

    private void completeFinished(final ViTableEntry e, final ViaViState s, final ViaWorkQueue queue,
        final boolean send, final long end)
    {
        while (queue.head() < end && queue.isFinished(queue.head()))
        {
            final long head = queue.head();
            completions.complete(e, s, send, queue.handle(head), queue.offset(head), queue.finalLength(head), 0,
                queue.finalStatus(head));
            queue.removeHead();
        }
    }

    /**
     * A descriptor failed its checks at its post on a VI that stays in its state (Unreliable, or not
     * connected yet): it joins its queue already finished with {@code op | error}, as a send failing
     * at its start does, moves nothing, and completes once every older descriptor of the queue has
     * (VIA completes a queue in posting order): at once if none is left, else in its turn, or with the
     * rest in posting order if the queue is flushed.
     */
    void postFailed(final ViTableEntry e, final ViaViState s, final boolean send, final int handle, final int offset,
        final int op, final int error)
    {
        final ViaWorkQueue queue = send ? s.sends : s.receives;
        final long position = queue.tail();
        queue.add(handle, offset, op);
        queue.finish(position, op | error, 0);
        if (send)
        {
            passFailedSends(e, s);
        }
        else
        {
            completeReceives(e, s);
        }
    }

    /**
     * The transmit cursor passes the descriptors that failed at their post: nothing of them goes on
     * the wire, and each completes in its turn.
     *
     * @return true if it passed any.
     */
    boolean passFailedSends(final ViTableEntry e, final ViaViState s)
    {
        final ViaWorkQueue sends = s.sends;
        // The descriptor at the cursor is finished only if it failed at its post: a send in progress,
        // or one fenced behind reads, is not.
        if (!sends.hasUntransmitted() || !sends.isFinished(sends.transmit))
        {
            return false;
        }
        do
        {
            sends.transmit++;
        }
        while (sends.hasUntransmitted() && sends.isFinished(sends.transmit));
        completeSends(e, s);
        return true;
    }

    /** {@code OP_ACK}: the peer completed the receive of message {@code sequence}; that send finishes. */
    void onAck(final int vi, final int sequence)
    {
        final ViaViState s = states[vi];
        if (null != s)
        {
            final ViaWorkQueue sends = s.sends;
            // Reads are not acknowledged (their response is): the oldest unfinished send or write is.
            for (long p = sends.head(); p < sends.transmit; p++)
            {
                if (!sends.isRead(p) && !sends.isFinished(p))
                {
                    if (sends.sequence(p) != sequence)
                    {
                        break;
                    }
                    sends.finish(p, sends.op(p), sends.length(p));
                    completeSends(entry(vi), s);
                    return;
                }
            }
        }
        counters.viaPacketsStale.increment();
    }

    /** @return the position of the oldest RDMA read of {@code s} waiting for its response, or -1. */
    static long oldestReadInFlight(final ViaViState s)
    {
        final ViaWorkQueue sends = s.sends;
        for (long p = sends.head(); p < sends.transmit; p++)
        {
            if (sends.isRead(p) && !sends.isFinished(p))
            {
                return p;
            }
        }
        return -1;
    }

    /**
     * The response to the RDMA read at {@code position} ended: it finishes with {@code status}; a
     * descriptor fenced behind the reads may start once none is left in flight.
     */
    void readEnded(final ViaViState s, final long position, final int status, final int length)
    {
        s.sends.finish(position, status, length);
        if (s.readsInFlight > 0 && 0 == --s.readsInFlight && s.fenced)
        {
            s.fenced = false;
            schedule(s.owner, s);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The Error state, connection changes
    // ---------------------------------------------------------------------------------------------

    void breakConnection(final int vi, final int error, final boolean tellPeer)
    {
        breakConnection(vi, error, tellPeer, 0, 0);
    }

    /**
     * Connected to Error by compare-and-set (issue 14), then every posted descriptor completes in
     * posting order, an asynchronous event with {@code error}, and, if {@code tellPeer}, {@code
     * OP_ERROR} to the peer, naming the peer's message {@code peerSequence} and the status its
     * descriptor completes with ({@code peerStatus}, 0 for none). A VI the driver moved meanwhile
     * (disconnected) is left alone.
     */
    void breakConnection(final int vi, final int error, final boolean tellPeer, final int peerSequence,
        final int peerStatus)
    {
        final ViTableEntry e = entry(vi);
        if (!e.breakConnection())
        {
            if (ViTableEntry.STATE_ERROR == e.state())
            {
                flush(vi);
            }
            return;
        }
        if (tellPeer)
        {
            packets.sendControl(e, ViaPacketHeader.OP_ERROR, peerSequence, peerStatus);
        }
        flush(vi);
        completions.asyncEvent(entry(vi).owner(), vi, ViaProcessStructuresLayout.RESOURCE_VI, error);
    }

    /**
     * {@code OP_ERROR}: the peer broke the connection. If it names an RDMA read of this VI that its
     * NIC refused, that read completes with the peer's status; the rest is flushed.
     */
    void onPeerError(final int vi, final int sequence, final int status)
    {
        final ViaViState s = states[vi];
        final int error = status & ViplDescriptor.STATUS_ERROR_MASK;
        if (null != s && 0 != error)
        {
            final ViaWorkQueue sends = s.sends;
            for (long p = sends.head(); p < sends.transmit; p++)
            {
                if (sends.isRead(p) && !sends.isFinished(p) && sends.sequence(p) == sequence)
                {
                    sends.finish(p, ViplDescriptor.STATUS_OP_RDMA_READ | error, 0);
                    breakConnection(vi, ViaProcessStructuresLayout.ERROR_RDMAR_PROT, false);
                    return;
                }
            }
        }
        breakConnection(vi, ViaProcessStructuresLayout.ERROR_CONN_LOST, false);
    }

    /** Every descriptor posted on {@code vi} completes, oldest first; the progress is forgotten. */
    void flush(final int vi)
    {
        final ViaViState s = states[vi];
        if (null == s)
        {
            return;
        }
        final ViTableEntry e = entry(vi);
        flush(e, s, s.sends, true);
        flush(e, s, s.receives, false);
        s.reset();
    }

    /** The queue in posting order: a descriptor whose end is known with its own status, the others DESC_FLUSHED. */
    private void flush(final ViTableEntry e, final ViaViState s, final ViaWorkQueue queue, final boolean send)
    {
        for (long p = queue.head(); p < queue.tail(); p++)
        {
            completions.complete(e, s, send, queue.handle(p), queue.offset(p), queue.finalLength(p), 0,
                queue.finalStatus(p));
        }
        queue.clear();
    }

    /** Via_Connect was applied: a new connection starts with no message in progress; sends posted before go now. */
    void connected(final int vi)
    {
        final ViTableEntry e = entry(vi);
        final int owner = e.owner();
        final ViaViState s = current(vi, e, owner);
        s.connectionId = e.connectionId();
        s.reset();
        if (s.sends.hasUntransmitted())
        {
            schedule(owner, s);
        }
    }

    /** Via_Disconnect is about to be applied (VipDisconnect): what is posted completes DESC_FLUSHED. */
    void disconnecting(final int vi)
    {
        flush(vi);
        if (null != states[vi])
        {
            states[vi].connectionId = 0;
        }
    }

    /** Via_Connection_Lost moved {@code vi} to Error: flushed, and the process told. */
    void connectionLost(final int vi)
    {
        flush(vi);
        completions.asyncEvent(entry(vi).owner(), vi, ViaProcessStructuresLayout.RESOURCE_VI,
            ViaProcessStructuresLayout.ERROR_CONN_LOST);
    }

    /** The VIA process of entry {@code owner} is gone: its VIs' work is dropped without completions. */
    void processDeleted(final int owner)
    {
        for (final ViaViState s : states)
        {
            if (null != s && s.owner == owner)
            {
                forget(s);
                s.owner = -1;
            }
        }
        ready[owner].clear();
    }

    /** Nothing of the VI's work survives: its table entry holds another process's VI now, or none. */
    private void forget(final ViaViState s)
    {
        s.sends.clear();
        s.receives.clear();
        s.reset();
        unschedule(s);
        s.connectionId = 0;
    }

    /**
     * Takes {@code s} out of its process's list. Its entry would otherwise stay there while the flag says
     * it is not: the VI made again would be put in a second time and get two turns of every round, and
     * an entry left in a former owner's list would clear the flag of the VI's new owner. Rare (a VI made
     * again before its process's next TX turn reached it), so the list is walked.
     */
    private void unschedule(final ViaViState s)
    {
        if (s.scheduled && s.owner >= 0)
        {
            final IntArrayQueue queue = ready[s.owner];
            for (int n = queue.size(); n > 0; n--)
            {
                final int vi = queue.pollInt();
                if (vi != s.vi)
                {
                    queue.addInt(vi);
                }
            }
        }
        s.scheduled = false;
    }

    /** @return how many times {@code vi} is in the TX list of process {@code owner}: 0 or 1. For the stepped tests. */
    int timesScheduled(final int owner, final int vi)
    {
        int times = 0;
        for (final IntArrayQueue.IntIterator entries = ready[owner].iterator(); entries.hasNext(); )
        {
            times += entries.nextValue() == vi ? 1 : 0;
        }
        return times;
    }
}
