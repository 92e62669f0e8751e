package org.qnix.firmware;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Stays hot while busy, costs nothing when idle (issue 13): for {@code hotNs} after the last duty cycle
 * that did work it busy-spins, so a ping-pong or a barrier loop never finds the firmware asleep; after
 * that it parks, doubling the park from 1 us up to 1 ms, and once it has been idle for
 * {@link #DEEP_IDLE_NS} up to {@link #DEEP_PARK_NS}, so an idle cluster costs about nothing (each wake-up
 * runs every NIC's duty cycle once). The first message after a long idle waits at most one deep park.
 * Each park is counted in the NICs' {@code idle parks} counters, so a run shows where its time went.
 *
 * <p>A spin, not a yield: on two cores a conversation is the firmware in the middle and two programs
 * that yield while they wait, the shape of the relay baseline (A, a busy relay, B). Measured with
 * {@code qnix bench latency} between nodes 0-0 and 1-0, 0 to 1024 bytes one way p50: 13-20 us with
 * the window yielding, 7-8 us spinning (the relay: 5 us). Once the window has passed it parks, so the
 * spinning costs a core only while messages flow.
 */
public final class HotWindowIdleStrategy implements IdleStrategy
{
    static final long MIN_PARK_NS = TimeUnit.MICROSECONDS.toNanos(1);
    static final long MAX_PARK_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Idle this long, the firmware parks longer: nobody is talking. */
    static final long DEEP_IDLE_NS = TimeUnit.MILLISECONDS.toNanos(50);
    static final long DEEP_PARK_NS = TimeUnit.MILLISECONDS.toNanos(8);

    private final long hotNs;
    private final AtomicCounter[] parks;
    private long lastWorkNs = System.nanoTime();
    private long parkNs;

    /**
     * @param hotNs how long after the last work to keep spinning; 0 parks at once.
     * @param parks the counters to count each park in (one per NIC run by this strategy's thread).
     */
    public HotWindowIdleStrategy(final long hotNs, final AtomicCounter... parks)
    {
        if (hotNs < 0)
        {
            throw new IllegalArgumentException("hot window " + hotNs + " ns");
        }
        this.hotNs = hotNs;
        this.parks = parks.clone();
    }

    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            reset();
        }
        else
        {
            idle();
        }
    }

    public void idle()
    {
        final long idleNs = System.nanoTime() - lastWorkNs;
        if (idleNs < hotNs)
        {
            Thread.onSpinWait();
            return;
        }
        parkNs = 0 == parkNs ? MIN_PARK_NS : Math.min(2 * parkNs, idleNs < DEEP_IDLE_NS ? MAX_PARK_NS : DEEP_PARK_NS);
        for (final AtomicCounter counter : parks)
        {
            counter.increment();
        }
        LockSupport.parkNanos(parkNs);
    }

    public void reset()
    {
        lastWorkNs = System.nanoTime();
        parkNs = 0;
    }

    public String alias()
    {
        return "hot-window";
    }
}
