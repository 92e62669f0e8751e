package org.qnix.firmware;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * The idle strategies a control program can run with: {@code backoff} (the default: an idle cluster
 * costs almost no CPU on a 2-core machine), {@code yield}, or {@code busy} (busy-spin, for
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

    public static IdleStrategy parse(final String name)
    {
        switch (name)
        {
            case BACKOFF:
                return new BackoffIdleStrategy(64, 16, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1));
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
