package org.qnix.lib;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.agrona.DirectBuffer;

import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessName;
import org.qnix.host.DoorbellWait;
import org.qnix.host.MappingGuard;

/**
 * Point-to-point messages of one registration (thesis 3.6: {@code qx_send_context},
 * {@code qx_recv_context}, {@code qx_send}, {@code qx_send_short}, {@code qx_receive},
 * {@code qx_poll_for_send}, {@code qx_poll_for_receive}): fills Send and Receive Contexts with their
 * Context Regions, posts the commands into the Command Queue, and turns the doorbells the NIC rings into
 * completions or exceptions. {@link Qnix} delegates its message calls here; {@link Collectives} takes and
 * completes its Send Contexts through it.
 *
 * <p>Its state is the process's own side of the Send Contexts: the command last posted on each (so
 * that an error names what failed) and the contexts abandoned by a timed-out await (freed once the NIC
 * completes them). Taking contexts and posting are single-threaded, as {@code Qnix}'s class Javadoc
 * says; completions of different contexts may run on different threads, each touching only its own
 * context's slots.
 *
 * <p>Every entry point runs between {@link #enter()} and {@link #exit()}, so that {@link Qnix#close()}
 * never unmaps the VNI under it; the helpers for {@link Collectives} expect to be called inside. None
 * allocates on the data path.
 */
final class Messaging
{
    private final Qnix owner;
    private final ClusterParameters params;
    private final ProcessName name;
    private final MappingGuard guard;
    private final VirtualNetworkInterface vnic;
    /** The command last posted on each Send Context, so that an error can say what failed. */
    private final int[] sendCommands;
    /** Send Contexts of timed-out awaits, still held by their operation in the NIC. */
    private final boolean[] abandonedSendContexts;
    private int abandoned;
    /** The buffer each context names, and whether posted: a buffer closed in flight keeps its pages. */
    private final BuffersInFlight inFlight;
    /** Frees a closed buffer whose operations are done; made once, so that a take allocates nothing. */
    private final Consumer<QnixBuffer> freeClosed;

    /** @param owner whose buffers and Buffer Pool its contexts may name. */
    Messaging(final Qnix owner, final ClusterParameters params, final ProcessName name, final MappingGuard guard,
        final VirtualNetworkInterface vnic)
    {
        this.owner = owner;
        this.params = params;
        this.name = name;
        this.guard = guard;
        this.vnic = vnic;
        this.sendCommands = new int[params.contextsPerProcess()];
        this.abandonedSendContexts = new boolean[params.contextsPerProcess()];
        this.inFlight = new BuffersInFlight(vnic, params.contextsPerProcess());
        this.freeClosed = buffer ->
        {
            try
            {
                owner.freeBuffer(buffer);
            }
            catch (final RuntimeException ex)
            {
                // The driver is gone or refuses: de-registration frees the pages with the rest.
            }
        };
    }

    /** Enters the guard for a call that touches the VNI; the caller leaves it with {@link #exit()} in a finally. */
    void enter()
    {
        if (!guard.enter())
        {
            throw new QnixClosedException(name);
        }
    }

    void exit()
    {
        guard.exit();
    }

    // Contexts (qx_send_context, qx_recv_context)

    int sendContext(final ProcessName receiver, final int tag, final boolean doorbell, final QnixBuffer buffer,
        final int offset, final int length)
    {
        enter();
        try
        {
            checkPeer(receiver, false);
            return bufferSendContext(receiver, tag, doorbell, buffer, offset, length);
        }
        finally
        {
            exit();
        }
    }

    int sendContext(final ProcessName receiver, final int tag, final boolean doorbell, final BufferPool pool,
        final int firstPage, final int length)
    {
        enter();
        try
        {
            checkPeer(receiver, false);
            return poolSendContext(receiver, tag, doorbell, pool, firstPage, length);
        }
        finally
        {
            exit();
        }
    }

    int sendContextShort(final ProcessName receiver, final int tag, final boolean doorbell, final DirectBuffer data,
        final int offset, final int length)
    {
        enter();
        try
        {
            checkPeer(receiver, false);
            if (length < 0 || length > params.shortThreshold())
            {
                throw new IllegalArgumentException("a short message holds 0.." + params.shortThreshold() +
                    " bytes, not " + length);
            }
            if (null == data || offset < 0 || (long)offset + length > data.capacity())
            {
                throw new IllegalArgumentException("bytes [" + offset + ", " + ((long)offset + length) + ") are not " +
                    "inside " + (null == data ? "the data: it is null" : "the " + data.capacity() + "-byte data"));
            }
            final int context = takeSendContext();
            try
            {
                vnic.writeShortData(context, data, offset, length);
            }
            catch (final RuntimeException ex)
            {
                // The copy failed all the same (a view closed under it): the context goes back.
                vnic.releaseContext(context, true);
                throw ex;
            }
            vnic.writeContext(vnic.sendContextOffset(context), receiver.ai(), receiver.pi(), tag, doorbell, 1, length,
                ContextLayout.NO_BUFFER_POOL);
            return context;
        }
        finally
        {
            exit();
        }
    }

    int recvContext(final ProcessName sender, final int tag, final boolean doorbell, final QnixBuffer buffer,
        final int offset, final int length)
    {
        enter();
        try
        {
            checkPeer(sender, true);
            checkRange(buffer, offset, length);
            final int context = takeReceiveContext();
            try
            {
                final int pages = vnic.writePageTable(vnic.receiveRegionOffset(context), buffer, offset, length);
                vnic.writeContext(vnic.receiveContextOffset(context), sender.ai(), sender.pi(), tag, doorbell, pages,
                    length, ContextLayout.NO_BUFFER_POOL);
                inFlight.names(context, false, buffer);
                return context;
            }
            catch (final RuntimeException ex)
            {
                vnic.releaseContext(context, false);
                throw ex;
            }
        }
        finally
        {
            exit();
        }
    }

    int recvContext(final ProcessName sender, final int tag, final boolean doorbell, final BufferPool pool,
        final int firstPage, final int length)
    {
        enter();
        try
        {
            checkPeer(sender, true);
            checkPool(pool, firstPage, length);
            final int context = takeReceiveContext();
            vnic.writeContext(vnic.receiveContextOffset(context), sender.ai(), sender.pi(), tag, doorbell,
                pages(length), length, firstPage);
            return context;
        }
        finally
        {
            exit();
        }
    }

    /** Inside the guard: a Send Context whose Context Region holds the page table of the buffer's bytes. */
    int bufferSendContext(final ProcessName receiver, final int tag, final boolean doorbell, final QnixBuffer buffer,
        final int offset, final int length)
    {
        checkRange(buffer, offset, length);
        final int context = takeSendContext();
        try
        {
            final int pages = vnic.writePageTable(vnic.sendRegionOffset(context), buffer, offset, length);
            vnic.writeContext(vnic.sendContextOffset(context), receiver.ai(), receiver.pi(), tag, doorbell, pages,
                length, ContextLayout.NO_BUFFER_POOL);
            inFlight.names(context, true, buffer);
            return context;
        }
        catch (final RuntimeException ex)
        {
            vnic.releaseContext(context, true);
            throw ex;
        }
    }

    /** Inside the guard: a Send Context for {@code length} bytes from page {@code firstPage} of the Buffer Pool. */
    int poolSendContext(final ProcessName receiver, final int tag, final boolean doorbell, final BufferPool pool,
        final int firstPage, final int length)
    {
        checkPool(pool, firstPage, length);
        final int context = takeSendContext();
        vnic.writeContext(vnic.sendContextOffset(context), receiver.ai(), receiver.pi(), tag, doorbell,
            pages(length), length, firstPage);
        return context;
    }

    /** Inside the guard: the most probably free Send Context (thesis 3.3.2), after freeing completed abandoned ones. */
    int takeSendContext()
    {
        reapAbandoned();
        inFlight.freeCompleted(freeClosed);
        final int context = vnic.takeSendContext();
        inFlight.taken(context, true);
        return context;
    }

    /** Inside the guard: the most probably free Receive Context, naming no buffer yet. */
    private int takeReceiveContext()
    {
        inFlight.freeCompleted(freeClosed);
        final int context = vnic.takeReceiveContext();
        inFlight.taken(context, false);
        return context;
    }

    /**
     * For {@link Qnix#freeBuffer}, the buffer's closed flag set: whether its BUFFER_FREE waits for an
     * operation posted on it ({@link BuffersInFlight}); the next take after it completes sends it.
     */
    boolean deferFreeWhileInFlight(final QnixBuffer buffer)
    {
        if (!guard.enter())
        {
            return false;
        }
        try
        {
            return inFlight.deferFree(buffer);
        }
        finally
        {
            exit();
        }
    }

    /** Inside the guard: a context whose await timed out; nobody else knows its index, so it is freed here later. */
    void abandon(final int context)
    {
        abandonedSendContexts[context] = true;
        abandoned++;
    }

    /** Frees the abandoned Send Contexts whose operation has completed since. */
    private void reapAbandoned()
    {
        if (0 == abandoned)
        {
            return;
        }
        for (int c = 0; c < abandonedSendContexts.length; c++)
        {
            if (abandonedSendContexts[c] && Doorbell.USED != vnic.peek(c, true))
            {
                vnic.free(c, true);
                abandonedSendContexts[c] = false;
                abandoned--;
            }
        }
    }

    // Posting (qx_send, qx_send_short, qx_receive and the collectives' commands)

    /** Posts a command, waiting (bounded) for room in the Command Queue. */
    void post(final int command, final int context, final int group, final int size)
    {
        postCommand(command, context, group, size, false);
    }

    /** Posts a command if the Command Queue has room now. @return false, having written nothing, if not. */
    boolean tryPost(final int command, final int context, final int group, final int size)
    {
        return postCommand(command, context, group, size, true);
    }

    private boolean postCommand(final int command, final int context, final int group, final int size,
        final boolean tryOnly)
    {
        enter();
        try
        {
            checkPost(command, context);
            recordCommand(command, context);
            boolean posted = false;
            try
            {
                if (tryOnly)
                {
                    posted = vnic.tryPost(command, context, group, size);
                }
                else
                {
                    vnic.post(command, context, group, size);
                    posted = true;
                }
                return posted;
            }
            finally
            {
                if (!posted)
                {
                    // A full queue or a failure: the buffer is not in flight after all.
                    notPosted(command, context);
                }
            }
        }
        finally
        {
            exit();
        }
    }

    /**
     * Inside the guard, just before a command is posted: refuses it if the buffer its context names was
     * closed since the context was made (the context goes back: its page table may name another buffer's
     * pages now), remembers a Send Context's command for the message of a failed completion, and counts
     * the buffer in use until the operation completes.
     */
    void recordCommand(final int command, final int context)
    {
        final boolean send = ProcessCommand.RECEIVE != command;
        final QnixBuffer buffer = inFlight.post(context, send);
        if (null != buffer)
        {
            vnic.releaseContext(context, send);
            throw new IllegalStateException((send ? "send" : "receive") + " context " + context + " names buffer " +
                "region " + buffer.regionId() + ", closed since the context was made: its pages may be another " +
                "buffer's now; make the context again on an open buffer");
        }
        if (send)
        {
            sendCommands[context] = command;
        }
    }

    /** Inside the guard: the command {@link #recordCommand} counted was not posted after all (queue full). */
    void notPosted(final int command, final int context)
    {
        inFlight.notPosted(context, ProcessCommand.RECEIVE != command);
    }

    // Completions (qx_poll_for_send, qx_poll_for_receive)

    boolean pollForSend(final int sendContext)
    {
        enter();
        try
        {
            checkHeld(sendContext, true);
            return completeSend(sendContext, vnic.poll(sendContext, true));
        }
        finally
        {
            exit();
        }
    }

    void awaitSend(final int sendContext, final DoorbellWait wait, final long timeout, final TimeUnit unit)
    {
        enter();
        try
        {
            checkHeld(sendContext, true);
            completeSend(sendContext, vnic.await(sendContext, true, timeoutNs(timeout, unit), wait));
        }
        finally
        {
            exit();
        }
    }

    boolean pollForReceive(final int receiveContext, final ReceiveStatus status)
    {
        enter();
        try
        {
            checkHeld(receiveContext, false);
            return completeReceive(receiveContext, vnic.poll(receiveContext, false), status);
        }
        finally
        {
            exit();
        }
    }

    void awaitReceive(final int receiveContext, final ReceiveStatus status, final DoorbellWait wait,
        final long timeout, final TimeUnit unit)
    {
        enter();
        try
        {
            checkHeld(receiveContext, false);
            completeReceive(receiveContext, vnic.await(receiveContext, false, timeoutNs(timeout, unit), wait), status);
        }
        finally
        {
            exit();
        }
    }

    /**
     * Inside the guard: a context the process does not hold has nothing to wait for. Before, a wait on
     * one (never taken, or its completion already taken) ran to its timeout.
     */
    private void checkHeld(final int context, final boolean send)
    {
        checkContext(context);
        if (Doorbell.FREE == vnic.doorbell(context, send))
        {
            throw new IllegalStateException((send ? "send" : "receive") + " context " + context + " is not held: " +
                "its completion was taken already, or it was never taken (or, for a send without a doorbell, the " +
                "NIC freed it)");
        }
    }

    /**
     * @return a wait's timeout in ns: 0 looks once, a long one waits up to that long (saturating).
     * @throws IllegalArgumentException for a negative one, which would otherwise wait for ever, and
     *                                  never see the NIC stop.
     */
    static long timeoutNs(final long timeout, final TimeUnit unit)
    {
        if (timeout < 0)
        {
            throw new IllegalArgumentException("a timeout of " + timeout + " " + unit + " is negative");
        }
        return Objects.requireNonNull(unit, "unit").toNanos(timeout);
    }

    /**
     * Inside the guard: the Send Doorbell's value made a result. Frees the context unless still in use.
     *
     * @return false while the NIC still holds the context.
     */
    boolean completeSend(final int context, final int value)
    {
        if (Doorbell.USED == value)
        {
            return false;
        }
        vnic.free(context, true);
        if (Doorbell.isError(value))
        {
            final int command = sendCommands[context];
            if (ProcessCommand.JOIN_GROUP == command && Doorbell.NO_RESOURCES == value)
            {
                throw new QnixCompletionException(value, "Join_Group on context " + context + ": this process has " +
                    "joined " + ClusterParameters.MAX_JOINED_GROUPS_PER_PROCESS + " groups besides its application's, " +
                    "the most it may, or a NIC's Group Table (G=" + params.groupTableEntries() + " groups) is full");
            }
            throw QnixCompletionException.of(value,
                (0 == command ? "send" : ProcessCommand.name(command)) + " on context " + context);
        }
        return true;
    }

    private boolean completeReceive(final int context, final int value, final ReceiveStatus status)
    {
        if (Doorbell.USED == value)
        {
            return false;
        }
        // The NIC wrote the completion fields before the doorbell, which was read with acquire.
        vnic.readCompletion(context, status);
        status.status = value;
        // Only a truncated receive reports its capacity: read before the context is Free again.
        final long capacity = Doorbell.TRUNCATED == value ? vnic.receiveCapacity(context) : 0;
        vnic.free(context, false);
        if (Doorbell.TRUNCATED == value)
        {
            throw new QnixTruncatedException(status.source(), status.tag(), status.length(), capacity);
        }
        if (Doorbell.isError(value))
        {
            throw QnixCompletionException.of(value, "receive on context " + context);
        }
        return true;
    }

    // Argument checks, before anything is written

    void checkContext(final int context)
    {
        if (context < 0 || context >= params.contextsPerProcess())
        {
            throw new IllegalArgumentException("context " + context + " is not in 0.." +
                (params.contextsPerProcess() - 1));
        }
    }

    /**
     * Inside the guard, before any command is posted: the context exists and the process holds it, taken
     * and not completed since. One freed by a wait (or never taken) still holds its last fields in the
     * NIC, which would send or receive that message again.
     */
    void checkPost(final int command, final int context)
    {
        checkContext(context);
        final boolean send = ProcessCommand.RECEIVE != command;
        final int doorbell = vnic.doorbell(context, send);
        if (Doorbell.USED != doorbell)
        {
            throw new IllegalStateException((send ? "send" : "receive") + " context " + context +
                (Doorbell.FREE == doorbell ? " is not held: take one (" + (send ? "sendContext" : "recvContext") +
                ") for each operation" : " has a completed operation (" + Doorbell.name(doorbell) +
                ") not yet waited for"));
        }
    }

    static void checkPeer(final ProcessName peer, final boolean anyAllowed)
    {
        if (null == peer)
        {
            throw new IllegalArgumentException("a peer process name is required" + (anyAllowed ? " (or ANY_PROC)" : ""));
        }
        if (!anyAllowed && (ContextLayout.ANY == peer.ai() || ContextLayout.ANY == peer.pi()))
        {
            throw new IllegalArgumentException("a send needs a real receiver, not " + peer);
        }
    }

    private void checkRange(final QnixBuffer buffer, final int offset, final int length)
    {
        if (null != buffer && buffer.owner() != owner)
        {
            // Its pages are another registration's: the NIC would refuse them (Protection) only later.
            throw new IllegalArgumentException("the buffer was allocated by another Qnix instance");
        }
        if (offset < 0 || length < 0 || (long)offset + length > buffer.length())
        {
            throw new IllegalArgumentException("bytes [" + offset + ", " + ((long)offset + length) +
                ") are not inside the " + buffer.length() + "-byte buffer");
        }
        if (length > params.maxMessageBytes())
        {
            throw new IllegalArgumentException(length + " bytes exceed the largest message, " +
                params.maxMessageBytes() + " bytes (K-1 pages)");
        }
        if (!buffer.isLocked())
        {
            throw new IllegalStateException("the buffer must be locked (QnixBuffer.lock()) before the NIC may use it");
        }
    }

    private void checkPool(final BufferPool pool, final int firstPage, final int length)
    {
        if (null != pool && pool.owner() != owner)
        {
            // The NIC reads a Buffer Pool Index in this process's own pool, whatever pool object named it.
            throw new IllegalArgumentException("the Buffer Pool belongs to another Qnix instance");
        }
        if (null == pool || length < 0 || length > params.maxMessageBytes() || firstPage < 0 ||
            (long)firstPage + pages(length) > pool.pages())
        {
            throw new IllegalArgumentException(length + " bytes from page " + firstPage + " do not fit the pool of " +
                (null == pool ? 0 : pool.pages()) + " pages (or exceed " + params.maxMessageBytes() + " bytes)");
        }
    }

    private int pages(final int length)
    {
        return Math.max(1, (length + params.pageSize() - 1) / params.pageSize());
    }
}
