package org.qnix.host;

import java.util.concurrent.TimeUnit;
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
 * if (guard.beginClose() && guard.awaitCloseQuiescence("qnix", "process (7,0)"))
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
    /**
     * How long a library's close waits for the calls inside to leave before it retires the mappings
     * under them (libqnix and the VIPL alike): far longer than any wait inside a call takes to see the
     * flag, so only a call stuck elsewhere (a debugger, a handler that never returns) outlasts it.
     */
    public static final long CLOSE_QUIESCENCE_NS = TimeUnit.SECONDS.toNanos(10);

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

    /**
     * The wait of a library's close: {@link #awaitQuiescence} for {@link #CLOSE_QUIESCENCE_NS}. If calls
     * are still inside after it, says so on standard error, since the close goes on and retires the
     * mappings under them (they read zeros from then on, {@link RetiredMemory}).
     *
     * @param library the message's prefix, e.g. {@code "qnix"} or {@code "vipl"}.
     * @param owner   whose mappings, e.g. a process name or a NIC.
     * @return true if no call is inside.
     */
    public boolean awaitCloseQuiescence(final String library, final String owner)
    {
        if (awaitQuiescence(CLOSE_QUIESCENCE_NS))
        {
            return true;
        }
        System.err.println(library + ": " + callsInside() + " call(s) of " + owner + " still inside " +
            TimeUnit.NANOSECONDS.toSeconds(CLOSE_QUIESCENCE_NS) + " s after close(): its mappings were retired " +
            "under them");
        return false;
    }

    /** @return the calls inside now; for tests and diagnostics. */
    public int callsInside()
    {
        return inside.get();
    }
}
