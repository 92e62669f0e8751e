package org.qnix.host;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The back-off of a process waiting for the NIC (a doorbell, room in a queue, a free context): spin,
 * then yield, then park briefly. Cheap on a small machine whose cores the NICs' control programs share
 * with the programs (PLATFORM.md). Stateless: the caller counts its looks.
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
    /** Looks after the spins that yield; every later look parks {@link #PARK_NS}. */
    public static final int YIELDS = 100;
    public static final long PARK_NS = TimeUnit.MICROSECONDS.toNanos(50);
    /** Of the parks, one in this many + 1 is a time to look at slow things. */
    private static final int SLOW_LOOK_MASK = 0xFF;

    private BackOff()
    {
    }

    /**
     * @return true at one park in 256 (13 ms or more): a time to look at slow things, such as the NIC's
     * heartbeat, which cost more than a look at what is waited for.
     */
    public static boolean isSlowLookDue(final int looks)
    {
        return (looks < 0 || looks >= SPINS + YIELDS) && (looks & SLOW_LOOK_MASK) == 0;
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
            LockSupport.parkNanos(PARK_NS);
        }
    }
}
