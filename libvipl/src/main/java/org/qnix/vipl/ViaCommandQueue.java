package org.qnix.vipl;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueEntry;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ViplResult;
import org.qnix.abi.VniLayout;
import org.qnix.host.MappingGuard;
import org.qnix.host.NicHeartbeat;

/**
 * The VIA process's Command Queue (issue 14: "Posting is a Command Queue entry"), the same queue and
 * protocol as libqnix's {@code VirtualNetworkInterface}: an entry's fields, the Command field last with
 * release (the NIC finds commands by it), the Tail advanced; the Head the NIC publishes says how much
 * room is left, and a full queue is waited for (bounded; ended by a stopped NIC, which would never
 * make room, with {@link ViplNicDeadException}, and by the NIC's close, which waits for the posts
 * inside its guard to leave before it unmaps the queue, with {@code INVALID_STATE}).
 * {@code VIA_POST_SEND}/{@code VIA_POST_RECV} carry the VI in Context, the descriptor's memory handle
 * in Group and its offset from the region's base in Size. Thread safe: posts of several threads are
 * serialised here.
 *
 * <pre>{@code
 * commands.post(ProcessCommand.VIA_POST_SEND, vi.index(), region.handle(), offset);
 * }</pre>
 */
final class ViaCommandQueue
{
    /** How long a full Command Queue is waited for, as libqnix does. */
    static final long RESOURCE_WAIT_NS = TimeUnit.SECONDS.toNanos(30);

    private final VniLayout layout;
    private final UnsafeBuffer vni;
    private final UnsafeBuffer hps;
    private final int entries;
    private final CommandQueueEntry entry = new CommandQueueEntry();
    private final NicWakeUp wakeUp;
    private final NicHeartbeat heartbeat;
    /** The NIC's guard, which every post is inside: its close ends a wait for room. */
    private final MappingGuard guard;
    private int commandTail;

    /** @param guard the guard the posts run inside; its close ends a post waiting for room. */
    ViaCommandQueue(final ClusterParameters params, final UnsafeBuffer vni, final UnsafeBuffer hps,
        final NicWakeUp wakeUp, final NicHeartbeat heartbeat, final MappingGuard guard)
    {
        this.wakeUp = wakeUp;
        this.heartbeat = heartbeat;
        this.guard = guard;
        this.layout = new VniLayout(params);
        this.vni = vni;
        this.hps = hps;
        this.entries = params.commandQueueEntries();
        this.commandTail = hps.getInt(HostProcessStructuresLayout.CQ_TAIL_OFFSET);
    }

    /**
     * Writes the entry once the queue has room. Inside the NIC's guard.
     *
     * @throws ViplException {@code INVALID_STATE} if the NIC is closed while the queue is full,
     *                       {@code ERROR_RESOURCE} if it stays full for {@link #RESOURCE_WAIT_NS}.
     */
    synchronized void post(final int command, final int vi, final int handle, final int offset)
    {
        waitForRoom();
        entry.wrap(vni, layout.commandOffset(commandTail)).publish(command, vi, handle, offset);
        commandTail = (commandTail + 1) % entries;
        // Reader: no one polls it: the NIC finds commands by their Command field (thesis 3.3.3).
        hps.putIntRelease(HostProcessStructuresLayout.CQ_TAIL_OFFSET, commandTail);
        // An idle NIC sleeps: the command just published wakes it.
        wakeUp.ring();
    }

    private void waitForRoom()
    {
        final long deadline = System.nanoTime() + RESOURCE_WAIT_NS;
        int idle = 0;
        while (freeEntries() < 1)
        {
            // The close waits for this post to leave the guard before it unmaps the queue: leave at once.
            if (guard.isClosed())
            {
                throw new ViplException(ViplResult.INVALID_STATE, "the NIC was closed while a post waited for " +
                    "room in the Command Queue");
            }
            if (System.nanoTime() > deadline)
            {
                throw new ViplException(ViplResult.ERROR_RESOURCE, "the Command Queue of " + entries +
                    " entries stayed full for " + TimeUnit.NANOSECONDS.toSeconds(RESOURCE_WAIT_NS) + " s");
            }
            if (++idle < 100)
            {
                Thread.yield();
            }
            else
            {
                if ((idle & 0x3FF) == 0 && !heartbeat.isRunning())
                {
                    throw new ViplNicDeadException(heartbeat.node(), heartbeat.describeStopped());
                }
                LockSupport.parkNanos(50_000);
            }
        }
    }

    private int freeEntries()
    {
        // Writer: the NIC, every eight commands and whenever it finds the queue empty.
        final int head = hps.getIntVolatile(HostProcessStructuresLayout.CQ_HEAD_OFFSET);
        return Math.floorMod(head - commandTail - 1, entries);
    }
}
