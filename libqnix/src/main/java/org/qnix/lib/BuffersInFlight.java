package org.qnix.lib;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.qnix.abi.Doorbell;

/**
 * Which {@link QnixBuffer} each Send and Receive Context's region names, and whether its operation was
 * posted: the NIC may move that buffer's bytes until the operation completes. A buffer closed meanwhile
 * keeps its pages until then ({@link #deferFree}, then {@link #freeCompleted} at a later take): freed at
 * once, they could become this process's next buffer, which the NIC's page check lets through (the
 * pages are the process's, locked), and the NIC would read or write that buffer as the old one. A
 * context made on a buffer closed since is not posted ({@link #post}).
 *
 * <p>Threads: takes and posts run on the posting thread (Qnix's class Javadoc); a buffer's close on any
 * thread. A post publishes "posted" before it looks at the buffer's closed flag, and a close sets the
 * flag before it looks at "posted", all volatile: so either the post sees the close and is refused, or
 * the close sees the post and keeps the pages. The buffer slots are plain, published by "posted".
 *
 * <pre>{@code
 * inFlight.taken(context, true);                   // a take: the slot names nothing yet
 * inFlight.names(context, true, buffer);           // its region holds the buffer's pages
 * QnixBuffer closed = inFlight.post(context, true); // non-null: closed since, do not post
 * }</pre>
 */
final class BuffersInFlight
{
    private static final VarHandle POSTED = MethodHandles.arrayElementVarHandle(boolean[].class);

    private final VirtualNetworkInterface vnic;
    private final QnixBuffer[] sendBuffers;
    private final QnixBuffer[] receiveBuffers;
    private final boolean[] sendPosted;
    private final boolean[] receivePosted;
    /** Buffers closed while in flight, their BUFFER_FREE waiting for the operation. Guarded by itself. */
    private final List<QnixBuffer> closed;
    /** Its size, for the take's look without the lock. */
    private volatile int closedCount;
    /** The posting thread's batch of buffers to free, so that a take allocates nothing. */
    private final QnixBuffer[] done;

    BuffersInFlight(final VirtualNetworkInterface vnic, final int contexts)
    {
        this.vnic = vnic;
        this.sendBuffers = new QnixBuffer[contexts];
        this.receiveBuffers = new QnixBuffer[contexts];
        this.sendPosted = new boolean[contexts];
        this.receivePosted = new boolean[contexts];
        // At most one in-flight operation per context can keep a closed buffer's pages.
        this.closed = new ArrayList<>(2 * contexts);
        this.done = new QnixBuffer[2 * contexts];
    }

    /** A context was taken: it names no buffer, and nothing is posted on it yet. */
    void taken(final int context, final boolean send)
    {
        (send ? sendBuffers : receiveBuffers)[context] = null;
        // Release is enough: only post's store and the close's load need the full fence (Dekker).
        POSTED.setRelease(send ? sendPosted : receivePosted, context, false);
    }

    /** The context's region holds pages of {@code buffer}. */
    void names(final int context, final boolean send, final QnixBuffer buffer)
    {
        (send ? sendBuffers : receiveBuffers)[context] = buffer;
    }

    /**
     * Just before the context's command is posted: counts its buffer in flight, unless it was closed
     * since the context was made.
     *
     * @return that closed buffer (the post must not go out), or null.
     */
    QnixBuffer post(final int context, final boolean send)
    {
        final QnixBuffer buffer = (send ? sendBuffers : receiveBuffers)[context];
        final boolean[] posted = send ? sendPosted : receivePosted;
        POSTED.setVolatile(posted, context, true);
        if (null != buffer && buffer.isClosed())
        {
            POSTED.setVolatile(posted, context, false);
            (send ? sendBuffers : receiveBuffers)[context] = null;
            return buffer;
        }
        return null;
    }

    /** The command {@link #post} counted did not go out after all (a full queue, a failure). */
    void notPosted(final int context, final boolean send)
    {
        POSTED.setRelease(send ? sendPosted : receivePosted, context, false);
    }

    /**
     * A buffer is being closed (its closed flag is set): if an operation posted on it has not completed,
     * keeps it for {@link #freeCompleted}.
     *
     * @return true if its BUFFER_FREE must wait.
     */
    boolean deferFree(final QnixBuffer buffer)
    {
        if (!isInFlight(buffer))
        {
            return false;
        }
        synchronized (closed)
        {
            closed.add(buffer);
            closedCount = closed.size();
        }
        return true;
    }

    /**
     * At a take, on the posting thread: hands {@code free} every closed buffer whose operations have all
     * completed, outside the list's lock (a close on another thread holds Qnix's monitor, then takes it).
     */
    void freeCompleted(final Consumer<QnixBuffer> free)
    {
        while (0 != closedCount)
        {
            int count = 0;
            synchronized (closed)
            {
                for (int i = closed.size() - 1; i >= 0 && count < done.length; i--)
                {
                    if (!isInFlight(closed.get(i)))
                    {
                        done[count++] = closed.remove(i);
                    }
                }
                closedCount = closed.size();
            }
            for (int i = 0; i < count; i++)
            {
                free.accept(done[i]);
                done[i] = null;
            }
            if (count < done.length)
            {
                return;
            }
        }
    }

    private boolean isInFlight(final QnixBuffer buffer)
    {
        for (int c = 0; c < sendBuffers.length; c++)
        {
            if ((boolean)POSTED.getVolatile(sendPosted, c) && sendBuffers[c] == buffer &&
                Doorbell.USED == vnic.doorbell(c, true) ||
                (boolean)POSTED.getVolatile(receivePosted, c) && receiveBuffers[c] == buffer &&
                Doorbell.USED == vnic.doorbell(c, false))
            {
                return true;
            }
        }
        return false;
    }
}
