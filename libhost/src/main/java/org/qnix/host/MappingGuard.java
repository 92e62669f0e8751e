package org.qnix.host;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Keeps a registration's mappings (its VNI slice of the NIC SDRAM, its Host Process Structures page)
 * in place while any call is inside them, so that a close from another thread never unmaps memory
 * under a running call: that would crash the JVM, not fail the call. Every call that touches the
 * mappings is bracketed by {@link #enter()} and {@link #exit()}; {@link #beginClose()} makes every
 * later {@code enter} fail, and {@link #awaitQuiescence} waits for the calls already inside to leave.
 * Waits inside a call look at {@link #isClosed()} and leave promptly, so quiescence comes within a
 * sleep slice.
 *
 * <pre>{@code
 * if (!guard.enter())
 * {
 *     throw new IllegalStateException("closed");
 * }
 * try
 * {
 *     return peek(context);             // may touch the mapped memory
 * }
 * finally
 * {
 *     guard.exit();
 * }
 *
 * // closing, from any thread:
 * if (guard.beginClose() && guard.awaitQuiescence(TimeUnit.SECONDS.toNanos(10)))
 * {
 *     vni.close();                       // no call can be inside it any more
 * }
 * }</pre>
 *
 * <p>The cost on a call is one atomic increment and one decrement plus one volatile read: no lock.
 * Thread safe.
 */
public final class MappingGuard
{
    /** Calls between enter and exit. */
    private final AtomicInteger inside = new AtomicInteger();
    /** Written once by beginClose; read by every enter and by waits inside a call. */
    private volatile boolean closed;

    /**
     * @return true if the caller may touch the mappings until its {@link #exit()}; false once closing
     * began (nothing to undo then).
     */
    public boolean enter()
    {
        // Dekker with beginClose/awaitQuiescence: count first, then look at the flag. Either the closer
        // sees this call counted, or this call sees the flag; both are sequentially consistent accesses.
        inside.getAndIncrement();
        if (closed)
        {
            inside.getAndDecrement();
            return false;
        }
        return true;
    }

    /** Ends what a successful {@link #enter()} began. */
    public void exit()
    {
        inside.getAndDecrement();
    }

    /** @return true once closing began: a wait inside a call should leave. */
    public boolean isClosed()
    {
        return closed;
    }

    /** @return true for the one caller that began closing; false if it had begun already. */
    public synchronized boolean beginClose()
    {
        if (closed)
        {
            return false;
        }
        closed = true;
        return true;
    }

    /**
     * Waits until no call is inside, after {@link #beginClose()}.
     *
     * @return true if none is (the mappings may go); false if calls were still inside after
     * {@code timeoutNs}, and the mappings must stay.
     */
    public boolean awaitQuiescence(final long timeoutNs)
    {
        final long deadline = System.nanoTime() + timeoutNs;
        int looks = 0;
        while (0 != inside.get())
        {
            if (System.nanoTime() - deadline > 0)
            {
                return false;
            }
            BackOff.idle(looks++);
        }
        return true;
    }

    /** @return the calls inside now; for tests and diagnostics. */
    public int callsInside()
    {
        return inside.get();
    }
}
