package org.qnix.firmware;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.qnix.abi.ClusterParameters;

/**
 * The idle strategies a control program can run with: {@code backoff} (the default: it stays hot,
 * spinning, for a window after its last work, then parks, so an idle cluster costs almost no CPU on a
 * 2-core machine; {@link HotWindowIdleStrategy}), {@code yield}, or {@code busy} (busy-spin, for
 * measurements on a machine with cores to spare).
 */
public final class IdleStrategies
{
    public static final String BACKOFF = "backoff";
    public static final String YIELD = "yield";
    public static final String BUSY = "busy";

    private IdleStrategies()
    {
    }

    /** {@link #parse(String, long, IdleNics)} with the default hot window and no counters. */
    public static IdleStrategy parse(final String name)
    {
        return parse(name, ClusterParameters.DEFAULT_HOT_US);
    }

    /**
     * @param hotUs with {@code backoff}: microseconds to stay hot after the last work (the cluster's
     *              {@link ClusterParameters#hotUs()}).
     * @throws IllegalArgumentException naming the strategies, or the hot window's range.
     */
    public static IdleStrategy parse(final String name, final long hotUs)
    {
        return parse(name, hotUs, IdleNics.parksOnly());
    }

    /**
     * @param hotUs with {@code backoff}: microseconds to stay hot after the last work (the cluster's
     *              {@link ClusterParameters#hotUs()}).
     * @param nics  with {@code backoff}: the NICs this strategy runs, to count its parks in and put to sleep.
     * @throws IllegalArgumentException naming the strategies, or the hot window's range.
     */
    public static IdleStrategy parse(final String name, final long hotUs, final IdleNics nics)
    {
        if (hotUs < 0 || hotUs > ClusterParameters.MAX_HOT_US)
        {
            throw new IllegalArgumentException("--hot-us " + hotUs + ": give 0 to " + ClusterParameters.MAX_HOT_US +
                " microseconds");
        }
        switch (name)
        {
            case BACKOFF:
                return new HotWindowIdleStrategy(TimeUnit.MICROSECONDS.toNanos(hotUs), nics);
            case YIELD:
                return YieldingIdleStrategy.INSTANCE;
            case BUSY:
                return BusySpinIdleStrategy.INSTANCE;
            default:
                throw new IllegalArgumentException(
                    "idle strategy '" + name + "': use " + BACKOFF + ", " + YIELD + " or " + BUSY);
        }
    }
}
