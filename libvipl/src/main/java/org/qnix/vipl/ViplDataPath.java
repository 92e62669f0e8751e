package org.qnix.vipl;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ViplResult;
import org.qnix.host.CommandQueueWriter;
import org.qnix.host.DoorbellWait;
import org.qnix.host.DoorbellWaiter;
import org.qnix.host.MappingGuard;
import org.qnix.host.NicHeartbeat;
import org.qnix.host.ProcessMappings;

/**
 * The data path of an open {@link ViplNic}: its VIs' posts to the VNI's Command Queue (issue 14: as
 * QNIX commands are posted), the waits of its VIs, CQs and async-event reader on words the NIC writes,
 * and the notifications' threads; all of them inside one {@link MappingGuard}, which the NIC's close
 * ends before it unmaps anything they read. None of it takes the NIC's monitor, which a connection
 * wait may hold for its whole length.
 *
 * <pre>{@code
 * ViplDataPath path = nic.dataPath();
 * path.enterGuardOrThrow();
 * try { path.post(true, viIndex, handle, offset); } finally { path.exitGuard(); }
 * }</pre>
 */
final class ViplDataPath
{
    private final NicCoordinates node;
    private final String clusterName;
    private final long hotNs;
    private final NicHeartbeat heartbeat;
    /** Every wait runs inside it, so that a close ends the waits before it unmaps. */
    private final MappingGuard guard = new MappingGuard();
    /** VIA_POST_SEND and VIA_POST_RECV go here (issue 14); posts of several threads serialise on it. */
    private final CommandQueueWriter commands;
    /** VipSendNotify, VipRecvNotify, VipCQNotify: their waits, each on a thread of its own while it waits. */
    private ExecutorService notifications;
    private final Object notificationsLock = new Object();

    ViplDataPath(final NicCoordinates node, final String clusterName, final ClusterParameters params,
        final ProcessMappings mappings)
    {
        this.node = node;
        this.clusterName = clusterName;
        this.hotNs = TimeUnit.MICROSECONDS.toNanos(params.hotUs());
        this.heartbeat = new NicHeartbeat(mappings.control(), 0, node);
        this.commands =
            new CommandQueueWriter(params, mappings.vni(), mappings.hps(), mappings.wakeUp(), heartbeat, guard);
    }

    /** @return the NIC's heartbeat, which every wait looks at. */
    NicHeartbeat heartbeat()
    {
        return heartbeat;
    }

    /** @return the guard the data path runs in. */
    MappingGuard guard()
    {
        return guard;
    }

    /**
     * The close's first step: every later call refuses and every wait ends.
     *
     * @return true for the one call that began it.
     */
    boolean beginClose()
    {
        return guard.beginClose();
    }

    /**
     * The close's second step: waits until no call is inside, then ends the notifications' threads.
     *
     * @return true if none was left inside (false: one stayed past the wait, its thread stopped).
     */
    boolean quiesce()
    {
        final boolean quiescent = guard.awaitCloseQuiescence("vipl", "NIC " + node);
        synchronized (notificationsLock)
        {
            if (null != notifications)
            {
                notifications.shutdownNow();
            }
        }
        return quiescent;
    }

    /**
     * A VIA_POST_SEND or VIA_POST_RECV on the Command Queue, as QNIX commands are posted: the VI in Context,
     * the descriptor's memory handle in Group and its offset from the region's base in Size. Inside the
     * guard, which the work queue entered.
     *
     * @throws ViplException {@code INVALID_STATE} if the NIC is closed while the queue is full,
     *                       {@code ERROR_RESOURCE} if it stays full for {@link CommandQueueWriter#RESOURCE_WAIT_NS}.
     * @throws ViplNicDeadException if the NIC stops while the queue is full.
     */
    void post(final boolean send, final int vi, final int handle, final int offset)
    {
        final int command = send ? ProcessCommand.VIA_POST_SEND : ProcessCommand.VIA_POST_RECV;
        final int code;
        synchronized (commands)
        {
            code = commands.post(command, vi, handle, offset, CommandQueueWriter.RESOURCE_WAIT_NS);
        }
        switch (code)
        {
            case CommandQueueWriter.POSTED:
                return;

            case CommandQueueWriter.TIMED_OUT:
                throw new ViplException(ViplResult.ERROR_RESOURCE,
                    commands.describeFull(CommandQueueWriter.RESOURCE_WAIT_NS));

            case CommandQueueWriter.NIC_DEAD:
                throw nicDead();

            default:
                // The close waits for this post to leave the guard before it unmaps the queue.
                throw new ViplException(ViplResult.INVALID_STATE, "the NIC was closed while a post waited for " +
                    "room in the Command Queue");
        }
    }

    /**
     * @return a waiter on words of {@code words} (the VIA Process Structures, a CQ ring), ended by the
     * close of {@code ends}: a VI's or CQ's own guard, which this NIC's close closes too.
     */
    DoorbellWaiter waiter(final UnsafeBuffer words, final MappingGuard ends)
    {
        return new DoorbellWaiter(words, heartbeat, ends, hotNs);
    }

    /** One wait of {@code waiter}, inside the guard. @return a {@link DoorbellWaiter} code. */
    int await(final DoorbellWaiter waiter, final int value, final int waiters, final IntPredicate complete,
        final long timeoutNs, final DoorbellWait wait)
    {
        if (!guard.enter())
        {
            return DoorbellWaiter.CLOSED;
        }
        try
        {
            return waiter.await(value, waiters, complete, timeoutNs, wait);
        }
        finally
        {
            guard.exit();
        }
    }

    /**
     * For a run of {@code Done} polls that found nothing ({@link org.qnix.host.EmptyPolls}): looks at
     * the NIC, inside the guard (a close retires its control area).
     *
     * @throws ViplNicDeadException once it stopped, so that a loop of polls ends as a wait does.
     * @throws ViplException        {@code INVALID_STATE} once the NIC was closed.
     */
    void checkRunning()
    {
        final ViplException stopped = stoppedOrClosed();
        if (null != stopped)
        {
            throw stopped;
        }
    }

    /**
     * @return the exception a wait ends with when the NIC stopped. Only inside the guard: it reads the
     * control area, which a close retires; outside it, {@link #stoppedOrClosed()}.
     */
    ViplNicDeadException nicDead()
    {
        return new ViplNicDeadException(node, heartbeat.describeStopped());
    }

    /**
     * Looks at the heartbeat inside the guard, for a caller outside it.
     *
     * @return {@link #nicDead()} if the NIC stopped, {@link #closedException()} if it was closed, else null.
     */
    ViplException stoppedOrClosed()
    {
        if (!guard.enter())
        {
            return closedException();
        }
        try
        {
            return heartbeat.isRunning() ? null : nicDead();
        }
        finally
        {
            guard.exit();
        }
    }

    /** @return what a call on this NIC, or a wait or poll of its VIs and CQs, throws once it was closed. */
    ViplException closedException()
    {
        return new ViplException(ViplResult.INVALID_STATE, "NIC " + node + " of cluster '" + clusterName +
            "' was closed");
    }

    /**
     * Enters the guard the data path's calls run in: the close unmaps what they read only once none is
     * inside. Each successful call is paired with {@link #exitGuard()}.
     *
     * @throws ViplException {@code INVALID_STATE} once the NIC was closed.
     */
    void enterGuardOrThrow()
    {
        if (!guard.enter())
        {
            throw closedException();
        }
    }

    boolean enterGuard()
    {
        return guard.enter();
    }

    void exitGuard()
    {
        guard.exit();
    }

    /** @return the pool the notifications wait on: daemon threads, made as needed, ended by the close. */
    ExecutorService notifications()
    {
        // A lock of its own, not the NIC's monitor: a connection wait may hold that one.
        synchronized (notificationsLock)
        {
            if (guard.isClosed())
            {
                throw closedException();
            }
            if (null == notifications)
            {
                notifications = Executors.newCachedThreadPool(task ->
                {
                    final Thread thread = new Thread(task, "vipl-notify-" + node);
                    thread.setDaemon(true);
                    return thread;
                });
            }
            return notifications;
        }
    }
}
