package org.qnix.pcicomm;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Which party of a connection takes its completions: a caller of a blocking call ({@code recv},
 * {@code sendRecycle}) polling within the cluster's hot window, or the connection's thread waiting on
 * the CQ. While a caller polls, the thread keeps off the CQ (issue 13): a message answered within the
 * window then costs no wake-up, where with the thread asleep on the CQ the NIC would wake it for each
 * completion, a second party on the CPU the programs share, and the caller would sleep on the monitor
 * until that thread woke it.
 *
 * <pre>{@code
 * // a caller:
 * final long hotUntil = hotPoll.start(System.nanoTime(), deadline);
 * do
 * {
 *     synchronized (connection) { if (null != (taken = tryRecv())) { return taken; } }
 * }
 * while (HotPoll.yieldUntil(hotUntil));
 * hotPoll.end();                                 // about to sleep on the monitor: the thread takes the CQ now
 * // the connection's thread, with nothing to do:
 * if (!hotPoll.awaitCallers()) { cq.poll(IDLE_WAIT_MS, DoorbellWait.SLEEP); }
 * }</pre>
 */
final class HotPoll
{
    /**
     * A caller's poll keeps the connection's thread off the CQ for at most this long from the poll's
     * start, whatever the hot window, and the thread looks again at this interval: what arrives once a
     * call returned (an export for a queued send, say) waits for the thread at most about twice this
     * long. Not shorter: each look is a timer wake-up on the CPU the programs share, and looking at the
     * end of each 300 us window instead raised a ping-pong's p99 from 39-41 to 58-68 us
     * (docs/performance/pcicomm-hot-poll.txt).
     */
    private static final long STAND_DOWN_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final long hotNs;
    private final long longestStandDownNs;
    private final Thread thread;
    /**
     * Until when ({@link System#nanoTime()}) the connection's thread stays off the CQ: the end of the
     * latest poll a caller started, at most {@link #STAND_DOWN_NS} after its start. Written by the
     * callers; reader: the connection's thread, in {@link #awaitCallers()}.
     */
    private volatile long callerPollsUntil;

    /**
     * @param hotUs              the cluster's hot window: how long a caller polls before it sleeps.
     * @param longestStandDownMs the longest {@link #awaitCallers()} keeps the thread away from its flags.
     * @param thread             the connection's thread, which {@link #end()} unparks; not started yet.
     */
    HotPoll(final long hotUs, final long longestStandDownMs, final Thread thread)
    {
        this.thread = thread;
        this.hotNs = TimeUnit.MICROSECONDS.toNanos(hotUs);
        this.longestStandDownNs = TimeUnit.MILLISECONDS.toNanos(longestStandDownMs);
        // nanoTime's origin is arbitrary: no poll under way is "until now", not "until 0".
        this.callerPollsUntil = System.nanoTime();
    }

    /**
     * A caller starts its poll: the connection's thread keeps off the CQ until its end.
     *
     * @return the end of the poll: the hot window from {@code start}, or the deadline if sooner.
     */
    long start(final long start, final long deadline)
    {
        final long hotUntil = start + Math.min(hotNs, Math.max(0, deadline - start));
        final long standDownUntil = Math.min(hotUntil, start + STAND_DOWN_NS);
        // Two callers racing here may leave the earlier end: the thread then takes the CQ a little early,
        // which costs a wake-up at most, never a completion.
        if (standDownUntil - callerPollsUntil > 0)
        {
            callerPollsUntil = standDownUntil;
        }
        return hotUntil;
    }

    /**
     * A poll found nothing and its caller is about to sleep on the monitor: the connection's thread
     * must take the CQ now, not at the end of its slice, or a completion in between would wake the
     * caller only then. The sleep costs a wake-up anyway; a poll that finds its answer costs none.
     */
    void end()
    {
        LockSupport.unpark(thread);
    }

    /**
     * The connection's thread, with nothing to do: while callers poll, it stays off the CQ and off the
     * monitor, which the callers take at each look. It looks again at the end of each slice, or when a
     * caller's poll ends ({@link #end()}), and returns once no poll is under way, or after the longest
     * stand-down, to look at its flags.
     *
     * @return false if no caller was polling: the CQ is the thread's to wait on.
     */
    boolean awaitCallers()
    {
        final long start = System.nanoTime();
        if (callerPollsUntil - start <= 0)
        {
            return false;
        }
        do
        {
            LockSupport.parkNanos(STAND_DOWN_NS);
        }
        while (callerPollsUntil - System.nanoTime() > 0 && System.nanoTime() - start < longestStandDownNs);
        return true;
    }

    /**
     * A caller's look between two looks under the monitor: off it, so that the connection's thread can
     * run.
     *
     * @return false once {@code hotUntil} passed; else yielded once.
     */
    static boolean yieldUntil(final long hotUntil) throws InterruptedException
    {
        if (System.nanoTime() - hotUntil >= 0)
        {
            return false;
        }
        Thread.yield();
        if (Thread.interrupted())
        {
            throw new InterruptedException("interrupted while polling the connection");
        }
        return true;
    }
}
