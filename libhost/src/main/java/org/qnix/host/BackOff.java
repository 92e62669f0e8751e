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

    private BackOff()
    {
    }

    /** @return true once {@code looks} has reached the parks: time to look at slow things (a heartbeat). */
    public static boolean isParking(final int looks)
    {
        return looks < 0 || looks >= SPINS + YIELDS;
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
