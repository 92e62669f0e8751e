package org.qnix.lib;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.DirectBuffer;

import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessName;
import org.qnix.host.DoorbellWait;
import org.qnix.host.DriverException;
import org.qnix.host.DriverProxy;
import org.qnix.host.MappingGuard;

/**
 * Groups and collectives of one registration (thesis 3.6: {@code qx_join_group}, {@code qx_barrier},
 * {@code qx_broadcast}, {@code qx_broadcast_short}, {@code qx_multicast}, {@code qx_multicast_short}),
 * and the group's members as the node's NIC knows them. Each operation completes through the Send
 * Doorbell of the Send Context it names, so the contexts, the posting and the completions are
 * {@link Messaging}'s; what is this class's own is the command each collective posts, its arguments'
 * checks, and the await of a join or a barrier that takes, posts and abandons its context by itself.
 *
 * <p>Threads as {@link Qnix}'s class Javadoc says: posting single-threaded; {@link #groupMembers} is a
 * driver request, called with {@code Qnix}'s monitor held.
 */
final class Collectives
{
    private final ClusterParameters params;
    private final ProcessName name;
    private final MappingGuard guard;
    private final DriverProxy driver;
    private final VirtualNetworkInterface vnic;
    private final Messaging messaging;

    Collectives(final ClusterParameters params, final ProcessName name, final MappingGuard guard,
        final DriverProxy driver, final VirtualNetworkInterface vnic, final Messaging messaging)
    {
        this.params = params;
        this.name = name;
        this.guard = guard;
        this.driver = driver;
        this.vnic = vnic;
        this.messaging = messaging;
    }

    /** A driver request: the caller holds {@code Qnix}'s monitor, which serialises the driver socket. */
    List<GroupMember> groupMembers(final int group)
    {
        if (guard.isClosed())
        {
            throw new QnixClosedException(name);
        }
        final List<GroupMember> members = new ArrayList<>();
        try
        {
            driver.groupMembers(group, (member, where) -> members.add(new GroupMember(member, where)));
        }
        catch (final DriverException ex)
        {
            throw QnixDriverException.of(ex, guard, name);
        }
        return members;
    }

    // Join_Group and Barrier: a Send Context of which only the doorbell is used

    int groupContext()
    {
        messaging.enter();
        try
        {
            return takeGroupContext();
        }
        finally
        {
            messaging.exit();
        }
    }

    private int takeGroupContext()
    {
        final int context = messaging.takeSendContext();
        vnic.writeContext(vnic.sendContextOffset(context), name.ai(), name.pi(), 0, true, 0, 0,
            ContextLayout.NO_BUFFER_POOL);
        return context;
    }

    void joinGroup(final int sendContext, final int group, final int groupSize)
    {
        checkGroupSize(groupSize);
        messaging.post(ProcessCommand.JOIN_GROUP, sendContext, group, groupSize);
    }

    void barrier(final int sendContext, final int group, final int groupSize)
    {
        checkGroupSize(groupSize);
        messaging.post(ProcessCommand.BARRIER, sendContext, group, groupSize);
    }

    void awaitJoinGroup(final int group, final int groupSize, final long timeout, final TimeUnit unit)
    {
        checkGroupSize(groupSize);
        awaitGroupOperation(ProcessCommand.JOIN_GROUP, group, groupSize, timeout, unit);
    }

    void awaitBarrier(final int group, final int groupSize, final long timeout, final TimeUnit unit)
    {
        checkGroupSize(groupSize);
        awaitGroupOperation(ProcessCommand.BARRIER, group, groupSize, timeout, unit);
    }

    /**
     * Takes a context, posts, waits. A context whose wait timed out is abandoned: nobody else knows its
     * index, so {@link Messaging} frees it itself once the NIC completes it.
     */
    private void awaitGroupOperation(final int command, final int group, final int groupSize, final long timeout,
        final TimeUnit unit)
    {
        // Read before the post: a bad unit must not leave a posted context nobody waits for or abandons.
        final long timeoutNs = Messaging.timeoutNs(timeout, unit);
        messaging.enter();
        try
        {
            final int context = takeGroupContext();
            try
            {
                messaging.recordCommand(command, context);
                vnic.post(command, context, group, groupSize);
            }
            catch (final RuntimeException ex)
            {
                vnic.releaseContext(context, true);
                throw ex;
            }
            try
            {
                messaging.completeSend(context, vnic.await(context, true, timeoutNs, DoorbellWait.SLEEP));
            }
            catch (final QnixTimeoutException ex)
            {
                messaging.abandon(context);
                throw ex;
            }
        }
        finally
        {
            messaging.exit();
        }
    }

    private void checkGroupSize(final int groupSize)
    {
        if (groupSize < 1 || groupSize > params.nameTableEntries())
        {
            throw new IllegalArgumentException("group size " + groupSize + " is outside [1, " +
                params.nameTableEntries() + "], the processes a cluster can hold");
        }
    }

    // Broadcast and Multicast: a Send Context without a receiver

    int broadcastContext(final int tag, final boolean doorbell, final QnixBuffer buffer, final int offset,
        final int length)
    {
        messaging.enter();
        try
        {
            // The receiver field is not read for a broadcast or multicast: this process's own name fills it.
            return messaging.bufferSendContext(name, tag, doorbell, buffer, offset, length);
        }
        finally
        {
            messaging.exit();
        }
    }

    int broadcastContext(final int tag, final boolean doorbell, final BufferPool pool, final int firstPage,
        final int length)
    {
        messaging.enter();
        try
        {
            return messaging.poolSendContext(name, tag, doorbell, pool, firstPage, length);
        }
        finally
        {
            messaging.exit();
        }
    }

    int broadcastContextShort(final int tag, final boolean doorbell, final DirectBuffer data, final int offset,
        final int length)
    {
        return messaging.sendContextShort(name, tag, doorbell, data, offset, length);
    }

    void broadcast(final int command, final int sendContext, final int group)
    {
        messaging.post(command, sendContext, group, 0);
    }

    boolean tryBroadcast(final int command, final int sendContext, final int group)
    {
        return messaging.tryPost(command, sendContext, group, 0);
    }

    /** Multicast or Multicast_Short with its names; {@code tryOnly} returns false instead of waiting for room. */
    boolean multicast(final int command, final int context, final ProcessName[] receivers, final boolean tryOnly)
    {
        messaging.enter();
        try
        {
            messaging.checkPost(command, context);
            final int max = CommandQueueLayout.maxMulticastReceivers(params);
            if (null == receivers || receivers.length < 1 || receivers.length > max)
            {
                throw new IllegalArgumentException("a multicast names 1.." + max + " receivers, not " +
                    (null == receivers ? 0 : receivers.length));
            }
            for (final ProcessName receiver : receivers)
            {
                Messaging.checkPeer(receiver, false);
            }
            messaging.recordCommand(command, context);
            boolean posted = false;
            try
            {
                if (tryOnly)
                {
                    posted = vnic.tryPostMulticast(command, context, receivers);
                }
                else
                {
                    vnic.postMulticast(command, context, receivers);
                    posted = true;
                }
                return posted;
            }
            finally
            {
                if (!posted)
                {
                    // A full queue or a failure: the buffer is not in flight after all.
                    messaging.notPosted(command, context);
                }
            }
        }
        finally
        {
            messaging.exit();
        }
    }
}
