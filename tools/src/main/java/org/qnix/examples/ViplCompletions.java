package org.qnix.examples;

import org.qnix.abi.HostClock;
import org.qnix.host.DoorbellWait;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.Vi;

/**
 * Taking a VI's completions when both its queues report to a CQ that only it uses, as the VIPL
 * examples and the VIPL benchmark rows do. A CQ entry only says that something completed: the
 * descriptor is taken from its queue ({@code VipSendDone}/{@code VipRecvDone}), and the entries are
 * drained before each look, so that the ring never fills ({@code Vi.sendWait}/{@code recvWait} would
 * leave them there, and a full CQ is an asynchronous error).
 *
 * <pre>{@code
 * Descriptor sent = ViplCompletions.expectDone(ViplCompletions.await(vi, cq, true, 10_000), "the hello sent");
 * }</pre>
 */
public final class ViplCompletions
{
    private ViplCompletions()
    {
    }

    /**
     * The oldest posted send ({@code send}) or receive of {@code vi} once it completed, sleeping on
     * {@code cq} (spin, then sleep).
     *
     * @throws org.qnix.vipl.ViplException TIMEOUT after {@code timeoutMs}.
     */
    public static Descriptor await(final Vi vi, final CompletionQueue cq, final boolean send, final long timeoutMs)
    {
        return await(vi, cq, send, timeoutMs, DoorbellWait.SLEEP);
    }

    /**
     * {@link #await(Vi, CompletionQueue, boolean, long)} sleeping on {@code cq} the way {@code wait} says
     * (busy, yield, backoff or sleep).
     */
    public static Descriptor await(final Vi vi, final CompletionQueue cq, final boolean send, final long timeoutMs,
        final DoorbellWait wait)
    {
        final long deadline = HostClock.millis() + timeoutMs;
        while (true)
        {
            while (null != cq.done())
            {
                // Wake-ups of completions looked at below or before.
            }
            final Descriptor d = send ? vi.sendDone() : vi.recvDone();
            if (null != d)
            {
                return d;
            }
            // A completion after the look above has its entry written after its status: this wait sees it.
            cq.await(Math.max(1, deadline - HostClock.millis()), wait);
        }
    }

    /** @return {@code d}. @throws IllegalStateException naming {@code what} unless {@code d} completed without error. */
    public static Descriptor expectDone(final Descriptor d, final String what)
    {
        if (null == d || !d.isDone() || d.hasError())
        {
            throw new IllegalStateException(what + (null == d ? ": not completed" :
                ": completed with status 0x" + Integer.toHexString(d.status())));
        }
        return d;
    }

    /**
     * {@link #expectDone(Descriptor, String)} for a loop's n-th descriptor, whose name is
     * {@code String.format(format, number)}, made only if it failed: nothing is built per message.
     */
    public static Descriptor expectDone(final Descriptor d, final String format, final long number)
    {
        if (null == d || !d.isDone() || d.hasError())
        {
            expectDone(d, String.format(format, number));
        }
        return d;
    }
}
