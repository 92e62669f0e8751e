package org.qnix.host;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The back-off of a process waiting for the NIC (a doorbell, room in a queue, a free context): spin,
 * then yield, then park briefly, the parks growing from {@link #PARK_NS} to {@link #MAX_PARK_NS} as the
 * wait goes on. Cheap on a small machine whose cores the NICs' control programs share with the programs
 * (PLATFORM.md). Stateless: the caller counts its looks.
 *
 * <p>The parks grow because such a wait can last: a {@code sendContext} whose 32 Send Contexts are all
 * in flight to a receiver that posts nothing waits up to 30 s, and at 50 us a park it took 0.15 cores
 * for all that time; 0.032 with parks growing to 0.8 ms, 0.0073 with these (15 s of the wait,
 * {@code /proc/<pid>/stat}). The first {@link #PARKS_PER_DOUBLING} parks stay at 50 us, so a wait that
 * ends within about 3 ms is looked at as often as before; from about 0.2 s on, a look comes every
 * 3.2 ms, at most a sixtieth of the wait so far.
 *
 * <pre>{@code
 * int looks = 0;
 * while (!ready())
 * {
 *     BackOff.idle(looks++);
 * }
 * }</pre>
 */
public final class BackOff
{
    /** Looks that only spin. */
    public static final int SPINS = 100;
    /** Looks after the spins that yield; every later look parks, {@link #PARK_NS} at first. */
    public static final int YIELDS = 100;
    public static final long PARK_NS = TimeUnit.MICROSECONDS.toNanos(50);
    /** The park doubles after this many parks at each length... */
    public static final int PARKS_PER_DOUBLING = 64;
    /** ...up to this: {@link #PARK_NS} doubled six times. */
    public static final long MAX_PARK_NS = PARK_NS << 6;
    private static final int MAX_DOUBLINGS = Long.numberOfTrailingZeros(MAX_PARK_NS / PARK_NS);
    private static final int PARKS_PER_DOUBLING_SHIFT = Integer.numberOfTrailingZeros(PARKS_PER_DOUBLING);
    /** Of the parks, one in this many + 1 is a time to look at slow things. */
    private static final int SLOW_LOOK_MASK = 0xFF;

    private BackOff()
    {
    }

    /**
     * @return true at one park in 256 (13 ms or more apart, 0.8 s once the parks are longest): a time to
     * look at slow things, such as the NIC's heartbeat, which cost more than a look at what is waited for.
     */
    public static boolean isSlowLookDue(final int looks)
    {
        return (looks < 0 || looks >= SPINS + YIELDS) && (looks & SLOW_LOOK_MASK) == 0;
    }

    /** @return how long look number {@code looks}, one of the parks, parks. */
    static long parkNs(final int looks)
    {
        // A count that wrapped (days of waiting) is negative: the longest park.
        final int doublings = looks < 0 ? MAX_DOUBLINGS :
            Math.min(MAX_DOUBLINGS, (looks - SPINS - YIELDS) >>> PARKS_PER_DOUBLING_SHIFT);
        return PARK_NS << doublings;
    }

    /** Idles once, the way look number {@code looks} of a wait should. */
    public static void idle(final int looks)
    {
        // A count that wrapped (days of waiting) is negative: it stays in the parks.
        if (looks >= 0 && looks < SPINS)
        {
            Thread.onSpinWait();
        }
        else if (looks >= 0 && looks < SPINS + YIELDS)
        {
            Thread.yield();
        }
        else
        {
            LockSupport.parkNanos(parkNs(looks));
        }
    }
}
