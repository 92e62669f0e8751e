package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.AsyncEventRing;
import org.qnix.abi.CqRing;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.CqTableEntry;
import org.qnix.abi.Futex;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessTableEntry;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * How a VIA descriptor completes (issue 14, "Completion"), in this order, each hand-off with its own
 * release: the descriptor's length, immediate data and status (the process polls the status); the
 * queue's completion counter in the VIA Process Structures, and a futex wake if its waiters word says
 * the process sleeps on it (as {@link Doorbells#ring} does for QNIX); then, if the queue is attached
 * to a CQ, the CQ ring entry (queue word last) and the ring's Tail, with a wake of its sleepers. Also
 * the asynchronous events of a VIA process ({@code VipErrorCallback}): an entry of the ring in its VIA
 * Process Structures, Valid last.
 *
 * <pre>{@code
 * completions.complete(entry, state, true, handle, offset, length, 0, ViplDescriptor.STATUS_OP_SEND);
 * completions.asyncEvent(vi.owner(), viIndex, ViaProcessStructuresLayout.RESOURCE_VI, ViaProcessStructuresLayout.ERROR_CONN_LOST);
 * }</pre>
 */
final class ViaCompletions
{
    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    /** Wrapped by {@link #alive}, and read on by the caller that asked. */
    private final ProcessTableEntry processEntry = new ProcessTableEntry();
    private final NicSdramLayout layout;
    private final ViaTablesLayout via;
    private final ViaDescriptors descriptors;
    private final ViaMemory memory;
    private final NicCounters counters;
    private final ViplDescriptor descriptor = new ViplDescriptor();
    private final CqTableEntry cq = new CqTableEntry();
    private final CqRing cqRing = new CqRing();
    private final AsyncEventRing eventRing = new AsyncEventRing();
    private final int processes;

    ViaCompletions(final FirmwareContext ctx, final ViaMemory memory, final ViaDescriptors descriptors)
    {
        this.sdram = ctx.sdram();
        this.host = ctx.hostMemory();
        this.layout = ctx.sdramLayout();
        this.via = layout.via();
        this.memory = memory;
        this.descriptors = descriptors;
        this.counters = ctx.counters();
        this.processes = ctx.parameters().maxProcessesPerNic();
    }

    /**
     * Completes the descriptor at {@code offset} of region {@code handle}, found again through the
     * tables (the region may have gone since the post: then only an asynchronous event tells). The VI
     * entry's words are read once, into locals, and only while the entry still holds the VI {@code s}
     * works for (its owner and connection): the driver may destroy a VI and make another in its entry
     * at any time, and the new VI's counter and CQ must not see the old one's completions (the new VI
     * may even have the same owner, and connection id 0 while Idle: its Generation is another).
     *
     * @param status the op bits and any error bits; DONE is added.
     */
    void complete(final ViTableEntry vi, final ViaViState s, final boolean sendQueue, final int handle,
        final int offset, final int length, final int immediateData, final int status)
    {
        final int owner = s.owner;
        // Writer: the driver, every field before the State (release): the State first, then the fields,
        // then the State again (isStill) and the words that say which VI it is.
        final int state = vi.state();
        final long line = sendQueue ? vi.sendCompletion() : vi.receiveCompletion();
        final int cqIndex = sendQueue ? vi.sendCq() : vi.receiveCq();
        if (ViTableEntry.STATE_FREE == state || !vi.isStill(state) || vi.owner() != owner ||
            vi.generation() != s.generation || vi.connectionId() != s.connectionId || !alive(owner) ||
            !isCompletionLine(line))
        {
            // Another VI, or the driver cleared the PID first: the process's pages are about to be taken back.
            counters.viaCompletionsLost.increment();
            return;
        }
        final long address = descriptors.controlSegmentAddress(owner, handle, offset);
        final long physical = ViaMemory.REFUSED == address ? ViaMemory.REFUSED :
            memory.translate(owner, ViaMemory.ANY_PTAG, handle, address, ViplDescriptor.CONTROL_SEGMENT_LENGTH);
        if (ViaMemory.REFUSED == physical)
        {
            counters.viaCompletionsLost.increment();
            asyncEvent(owner, s.vi, -1, handle, offset, status & ViplDescriptor.STATUS_OP_MASK,
                ViaProcessStructuresLayout.RESOURCE_DESCRIPTOR, ViaProcessStructuresLayout.ERROR_POST_DESC);
            return;
        }
        // Readers: the process polling the status (VipSendDone/VipRecvDone), then the counter's waiters.
        if (sendQueue)
        {
            descriptor.wrap(host, (int)physical).completeSend(length, status);
        }
        else
        {
            descriptor.wrap(host, (int)physical).complete(length, immediateData, status);
        }
        if (0 != (status & ViplDescriptor.STATUS_ERROR_MASK))
        {
            counters.errorCompletions.increment();
        }
        counters.viaDescriptorsCompleted.increment();
        count(line);
        if (ViTableEntry.NO_CQ != cqIndex && cqIndex >= 0 && cqIndex < via.cqEntries())
        {
            appendToCq(owner, s.vi, cqIndex, sendQueue ? CqRingLayout.QUEUE_SEND : CqRingLayout.QUEUE_RECEIVE);
        }
    }

    /**
     * @return true while the Process Table entry holds a live process: the driver clears the PID
     * before it takes anything of a dying process back, and frees its pages only after the NIC took
     * Delete_Via_Process, so while the PID is set the VIA Process Structures and CQ rings are its.
     */
    private boolean alive(final int owner)
    {
        // Writer: the driver (registration, then death: the PID cleared first).
        return owner >= 0 && owner < processes &&
            0 != processEntry.wrap(sdram, (int)layout.processEntryOffset(owner)).pid();
    }

    /**
     * @return whether {@code line}, a completion line the driver wrote into a VI entry, is one of the
     * completion lines of the VIA Process Structures of the process {@link #alive} just looked at: the
     * counter written there is never in another process's memory, whatever the entry held.
     */
    private boolean isCompletionLine(final long line)
    {
        // Writer: the driver, at registration, before the PID that alive() read with acquire.
        final long structures = processEntry.viaStructures();
        return structures > 0 && ViaProcessStructuresLayout.isCompletionOffset(line - structures);
    }

    /** The queue's completion counter, then a wake-up if the process sleeps on it. */
    private void count(final long line)
    {
        final int counter = (int)line + ViaProcessStructuresLayout.COMPLETION_COUNTER_OFFSET;
        // Reader: the process waiting on the counter (VipSendWait/VipRecvWait). A volatile write, as a
        // doorbell's: with the process's volatile write of Waiters before its last look, one of the
        // two always sees the other (no lost wake-up).
        host.putIntVolatile(counter, host.getInt(counter) + 1);
        if (0 != host.getIntVolatile((int)line + ViaProcessStructuresLayout.COMPLETION_WAITERS_OFFSET))
        {
            Futex.wakeAll(host.addressOffset() + counter);
            counters.doorbellWakeups.increment();
        }
    }

    private void appendToCq(final int owner, final int viIndex, final int cqIndex, final int queue)
    {
        // A CQ destroyed, or destroyed and made again meanwhile, is not written into (ringOf).
        final CqRing ring = cq.wrap(sdram, (int)via.cqOffset(cqIndex)).ringOf(owner, host, cqRing);
        if (null == ring)
        {
            return;
        }
        if (!ring.append(viIndex, queue))
        {
            // VIA 1.0: an overflowed CQ is broken; the process learns it from the async event.
            asyncEvent(owner, viIndex, cqIndex, 0, 0, 0, ViaProcessStructuresLayout.RESOURCE_CQ,
                ViaProcessStructuresLayout.ERROR_CATASTROPHIC);
            return;
        }
        if (ring.hasSleepers())
        {
            Futex.wakeAll(ring.tailAddress());
            counters.doorbellWakeups.increment();
        }
    }

    /**
     * An asynchronous event for the VIA process of Process Table entry {@code owner} ({@code
     * VipErrorCallback}): the ring entry, Valid last with release, then the Tail; an event that finds
     * the ring full sets Overflowed instead.
     */
    void asyncEvent(final int owner, final int viIndex, final int resource, final int error)
    {
        asyncEvent(owner, viIndex, -1, 0, 0, 0, resource, error);
    }

    /**
     * An asynchronous event that names the CQ ({@code cqIndex}, -1 for none) or the descriptor
     * ({@code handle}, {@code offset}, and {@code op}: the completion status op bits) it is about, so
     * that the process's handler is told which one ({@code VIP_ERROR_DESCRIPTOR}'s fields).
     */
    void asyncEvent(final int owner, final int viIndex, final int cqIndex, final int handle, final int offset,
        final int op, final int resource, final int error)
    {
        counters.viaAsyncEvents.increment();
        if (!alive(owner) || ProcessTableLayout.KIND_VIA != processEntry.kind())
        {
            return;
        }
        // The driver's, from this node's host memory: a value outside it is no process's structures.
        final long structures = processEntry.viaStructures();
        if (structures <= 0 || structures > host.capacity() - ViaProcessStructuresLayout.LENGTH)
        {
            return;
        }
        final AsyncEventRing ring = eventRing.wrap(host, (int)structures);
        if (ring.append(viIndex, cqIndex, handle, offset, op, resource, error) && ring.hasSleepers())
        {
            Futex.wakeAll(ring.tailAddress());
        }
    }
}
