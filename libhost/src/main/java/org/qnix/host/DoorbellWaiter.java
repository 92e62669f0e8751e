package org.qnix.host;

import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Futex;

/**
 * Waits for a word the NIC writes to reach a value that completes the wait (thesis 3.3.2: the process
 * polls the doorbell of its context; the NIC writes it last), the way a {@link DoorbellWait} says:
 * busy, yield, back off, or sleep on the word (futex) until the NIC wakes the process, the emulated
 * interrupt. Backing off and sleeping both start hot: they yield for a window (the cluster's
 * {@code --hot-us}) before their first park or sleep. The word has a waiters word beside it that
 * counts the process's sleepers (each adds one before its last look and takes it back after), so
 * that the NIC makes the wake-up system call, which wakes them all, only when someone sleeps
 * (DESIGN.md 5).
 *
 * <p>It returns a code, never throws: the library above turns {@link #TIMED_OUT}, {@link #NIC_DEAD} and
 * {@link #CLOSED} into its own API's errors, and reads the completed word again itself (it stays complete
 * until the process frees it). Each wait looks at the NIC's heartbeat and at the registration's
 * {@link MappingGuard} now and then, so that neither a dead NIC nor a close from another thread leaves it
 * waiting: a futex sleep lasts at most {@link #SLEEP_SLICE_NS}.
 *
 * <pre>{@code
 * DoorbellWaiter waiter = new DoorbellWaiter(hps, heartbeat, guard);
 * int code = waiter.await(doorbell, waiters, Doorbell::isComplete, TimeUnit.SECONDS.toNanos(5), DoorbellWait.SLEEP);
 * if (DoorbellWaiter.COMPLETE == code)
 * {
 *     int value = hps.getIntVolatile(doorbell);
 * }
 * }</pre>
 *
 * <p>Thread safe: it keeps no state of a wait, so threads may wait on different words at once. The
 * caller must be inside {@link MappingGuard#enter()} for the whole wait. Allocation free.
 */
public final class DoorbellWaiter
{
    /** The word reached a completing value. */
    public static final int COMPLETE = 0;
    /** The timeout passed first. */
    public static final int TIMED_OUT = 1;
    /** The NIC's control program stopped: nothing will complete the word. */
    public static final int NIC_DEAD = 2;
    /** The registration began closing: the mappings are about to go. */
    public static final int CLOSED = 3;

    /**
     * Looks before a wait starts to yield: about 0.2 us, for a word that is nearly there. Not more: on two
     * cores the programs share the CPU the firmware does not have, so whatever completes the word (the
     * peer's turn, or the NIC's answer that a yield gives back as soon as it comes) a longer spin only
     * holds the CPU from the other programs. 64 looks (1.3 us of PAUSE here) against 8: one way p50 7.1
     * against 6.0 us, the 4-process barrier 38 against 33 us, QNIX 4 KiB streams 1.8 against 2.0 GB/s
     * (docs/performance/doorbell-spins.txt).
     */
    static final int SPINS = 8;
    /**
     * How long a backoff or sleep wait yields before it parks or sleeps, unless the cluster says
     * otherwise: a conversation (a ping-pong, a barrier loop) answers well within it, so it never pays
     * a wake-up; a wait for something slow costs this much CPU once, then nothing (issue 13).
     */
    public static final long DEFAULT_HOT_NS = TimeUnit.MICROSECONDS.toNanos(ClusterParameters.DEFAULT_HOT_US);
    /** A busy wait checks its deadline, the NIC and the guard once per this many + 1 looks. */
    static final int BUSY_CHECK_MASK = 0x3FF;
    /**
     * Longest single futex sleep. The NIC wakes a sleeper when its word completes, a close wakes it
     * ({@link #wakeAll}) and a timeout is the last slice's length, so the slice only bounds how late a
     * dead NIC is noticed, which its heartbeat timeout (3 s) makes late anyway. Each end of a slice
     * costs a wake-up: 10 ms slices made a process blocked in a receive take 0.007 cores (issue 13).
     */
    public static final long SLEEP_SLICE_NS = TimeUnit.MILLISECONDS.toNanos(250);

    private final UnsafeBuffer words;
    private final NicHeartbeat heartbeat;
    private final MappingGuard guard;
    private final long hotNs;

    /**
     * @param words     the mapping that holds the words waited on (a Host Process Structures page).
     * @param heartbeat the NIC that writes them.
     * @param guard     the registration's guard, whose close ends every wait.
     */
    public DoorbellWaiter(final UnsafeBuffer words, final NicHeartbeat heartbeat, final MappingGuard guard)
    {
        this(words, heartbeat, guard, DEFAULT_HOT_NS);
    }

    /**
     * @param hotNs how long a backoff or sleep wait yields before it parks or sleeps (the cluster's
     *              {@code --hot-us}); 0 goes to them at once.
     */
    public DoorbellWaiter(final UnsafeBuffer words, final NicHeartbeat heartbeat, final MappingGuard guard,
        final long hotNs)
    {
        if (hotNs < 0)
        {
            throw new IllegalArgumentException("hot window " + hotNs + " ns");
        }
        this.words = words;
        this.heartbeat = heartbeat;
        this.guard = guard;
        this.hotNs = hotNs;
    }

    /**
     * Waits until {@code complete} accepts the word at {@code valueOffset}.
     *
     * @param valueOffset   the word the NIC writes, with release.
     * @param waitersOffset its waiters word: the number of this process's threads asleep on the word.
     * @param complete      which values end the wait; a non-capturing method reference costs nothing.
     * @param timeoutNs     how long to wait at most; a negative one is taken as 0 (the libraries refuse one first).
     * @param requested     how to wait; {@code SLEEP} backs off instead where there is no futex.
     * @return {@link #COMPLETE}, {@link #TIMED_OUT}, {@link #NIC_DEAD} or {@link #CLOSED}.
     */
    public int await(final int valueOffset, final int waitersOffset, final IntPredicate complete,
        final long timeoutNs, final DoorbellWait requested)
    {
        // Without futex there is nothing to sleep on: back off instead.
        final DoorbellWait wait =
            DoorbellWait.SLEEP == requested && !Futex.available() ? DoorbellWait.BACKOFF : requested;
        for (int i = 0; i < SPINS; i++)
        {
            if (complete.test(words.getIntVolatile(valueOffset)))
            {
                return COMPLETE;
            }
            Thread.onSpinWait();
        }
        final long start = System.nanoTime();
        // Negative, the deadline and the hot window's end would wrap, and neither would ever come.
        final long waitNs = Math.max(0, timeoutNs);
        final long deadline = start + waitNs;
        if (DoorbellWait.BACKOFF == wait || DoorbellWait.SLEEP == wait)
        {
            // Hot: yield (on two cores the NIC needs the time more than a spinner) for the window.
            final long hotUntil = start + Math.min(hotNs, waitNs);
            int looks = 0;
            while (true)
            {
                if (complete.test(words.getIntVolatile(valueOffset)))
                {
                    return COMPLETE;
                }
                if ((++looks & 0x3F) == 0 && guard.isClosed())
                {
                    return CLOSED;
                }
                if (System.nanoTime() - hotUntil >= 0)
                {
                    break;
                }
                Thread.yield();
            }
        }
        final boolean sleep = DoorbellWait.SLEEP == wait;
        // A backoff that already yielded through its hot window goes straight to its parks.
        int looks = DoorbellWait.BACKOFF == wait && hotNs > 0 ? BackOff.SPINS + BackOff.YIELDS : 0;
        try
        {
            if (sleep)
            {
                // Dekker with the NIC's write of the word: announce, then look again before sleeping.
                // A count, not a flag: with several threads of the process asleep on one word (two
                // waits on one CQ), the first to leave must not hide the others from the NIC. The
                // atomic add is a full fence, as the volatile write of a flag was.
                // Reader: the NIC, after it wrote the word, to decide on the wake-up system call.
                words.getAndAddInt(waitersOffset, 1);
            }
            while (true)
            {
                final int value = words.getIntVolatile(valueOffset);
                if (complete.test(value))
                {
                    return COMPLETE;
                }
                // A busy wait looks at the clock, the NIC and the guard only now and then, to stay a pure spin.
                if (DoorbellWait.BUSY != wait || (looks & BUSY_CHECK_MASK) == 0)
                {
                    if (guard.isClosed())
                    {
                        return CLOSED;
                    }
                    final long now = System.nanoTime();
                    if (now - deadline > 0)
                    {
                        return TIMED_OUT;
                    }
                    if (!heartbeat.isRunning())
                    {
                        return NIC_DEAD;
                    }
                    if (sleep)
                    {
                        Futex.await(words.addressOffset() + valueOffset, value,
                            Math.min(SLEEP_SLICE_NS, deadline - now));
                    }
                }
                switch (wait)
                {
                    case BUSY -> Thread.onSpinWait();
                    case YIELD -> Thread.yield();
                    case BACKOFF -> BackOff.idle(looks);
                    case SLEEP ->
                    {
                        // Slept above, until woken or the slice ended.
                    }
                }
                looks++;
            }
        }
        finally
        {
            if (sleep)
            {
                // Reader: the NIC; the others still asleep stay counted.
                words.getAndAddInt(waitersOffset, -1);
            }
        }
    }

    /**
     * Wakes every thread of this process sleeping on the word at {@code valueOffset}, so that it sees a
     * close at once rather than at the end of its slice.
     */
    public void wakeAll(final int valueOffset)
    {
        Futex.wakeAll(words.addressOffset() + valueOffset);
    }
}
