package org.qnix.firmware;

import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * VIA_POST_SEND and VIA_POST_RECV (issue 14, "Posting is a Command Queue entry"): the VI checked to be
 * the posting process's, the descriptor read and checked ({@link ViaDescriptors}), then queued on its
 * work queue, or completed at once in the Error state (DESC_FLUSHED). A descriptor that fails a check
 * moves nothing and completes with its error after every older descriptor of its queue (a queue
 * completes in posting order): at the reliable levels a failed post on a Connected VI breaks the
 * connection, whose flush completes the older ones first; on a VI that stays in its state
 * (Unreliable, or not connected yet) it waits in its queue, already finished, for its turn. Every
 * completion reports the op the descriptor names.
 *
 * <pre>{@code
 * posts.post(slot, ProcessCommand.VIA_POST_SEND, vi, handle, offset);
 * }</pre>
 */
final class ViaPosts
{
    private final NicCounters counters;
    private final ViaEngine engine;
    private final ViaDescriptors descriptors;
    private final ViaCompletions completions;
    private final ViaDescriptorCopy postCheck = new ViaDescriptorCopy();

    ViaPosts(final FirmwareContext ctx, final ViaEngine engine)
    {
        this.counters = ctx.counters();
        this.engine = engine;
        this.descriptors = engine.descriptors();
        this.completions = engine.completions();
    }

    /**
     * A post from the Command Queue of the VIA process in {@code slot}: Context = the VI, Group = the
     * descriptor's memory handle, Size = its offset in that region.
     */
    void post(final ProcessSlot slot, final int command, final int vi, final int handle, final int offset)
    {
        final boolean send = ProcessCommand.VIA_POST_SEND == command;
        if (!send && ProcessCommand.VIA_POST_RECV != command || vi < 0 || vi >= engine.viEntries())
        {
            counters.commandsRejected.increment();
            return;
        }
        final ViTableEntry e = engine.entry(vi);
        final int state = e.state();
        if (ViTableEntry.STATE_FREE == state || e.owner() != slot.index)
        {
            // Not this process's VI: nothing of it may be touched, not even the descriptor.
            counters.commandsRejected.increment();
            return;
        }
        // The table entry may hold another VI than the one of the queued work (the driver destroys and
        // creates VIs without the NIC): nothing of the previous one's queues survives.
        final ViaViState s = engine.current(vi, e, slot.index);
        final ViaWorkQueue queue = send ? s.sends : s.receives;
        final int check = descriptors.read(e, handle, offset, send, postCheck);
        if (ViaDescriptors.UNREADABLE == check)
        {
            counters.commandsRejected.increment();
            completions.asyncEvent(slot.index, vi, -1, handle, offset, 0, ViaProcessStructuresLayout.RESOURCE_DESCRIPTOR,
                ViaProcessStructuresLayout.ERROR_POST_DESC);
            return;
        }
        // VIA: the completion reports the op the descriptor names, on either queue.
        final int op = ViaDescriptors.statusOp(postCheck.control, send);
        if (ViTableEntry.STATE_ERROR == state)
        {
            // Issue 14: the Error state flushes everything posted, now or later.
            completions.complete(e, s, send, handle, offset, 0, 0, op | ViplDescriptor.STATUS_DESC_FLUSHED_ERROR);
            return;
        }
        final boolean full = queue.isFull();
        final int error = 0 == check && full ? ViplDescriptor.STATUS_FORMAT_ERROR : check;
        if (0 != error)
        {
            // Nothing moves. At the reliable levels any error breaks the connection (issue 14), which
            // first completes what was posted before it: a queue completes in posting order. A full
            // queue has no room to hold it in its turn: it completes at once.
            final boolean breaks = ViaDescriptors.reliable(e) && ViTableEntry.STATE_CONNECTED == state;
            if (breaks || full)
            {
                if (breaks)
                {
                    engine.breakConnection(vi, ViaProcessStructuresLayout.ERROR_POST_DESC, true);
                }
                completions.complete(engine.entry(vi), s, send, handle, offset, 0, 0, op | error);
                return;
            }
            // The VI stays as it is: the descriptor waits behind the older ones of its queue.
            engine.postFailed(e, s, send, handle, offset, op, error);
        }
        else
        {
            queue.add(handle, offset, op);
        }
        if (send && ViTableEntry.STATE_CONNECTED == state && s.sends.hasUntransmitted())
        {
            engine.schedule(slot.index, s);
        }
    }
}
