package org.qnix.firmware;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.status.AtomicCounter;
import org.qnix.abi.ControlProgramLayout;

/**
 * Stays hot while busy, costs nothing when idle (issue 13): for {@code hotNs} after the last duty cycle
 * that did work it stays runnable, yielding, so a ping-pong or a barrier loop never finds the firmware
 * asleep; after that it parks, doubling the park from 1 us up to 1 ms; once it has been idle for
 * {@link #DEEP_IDLE_NS} it sleeps until someone gives one of its NICs work ({@link IdleNics}, woken
 * through the node's {@code nic.wake}) or the next heartbeat is due, so an idle cluster costs about nothing and its first
 * message after a pause pays one futex wake-up, not a park. Where the NICs cannot sleep (no futex, or
 * several NICs on one thread without futex_waitv) it parks for up to {@link #DEEP_PARK_NS} instead.
 * Each park and each sleep is counted in the NICs' counters, so a run shows where its time went.
 *
 * <p>Inside the window it yields at once whenever a duty cycle finds nothing: on two cores a
 * conversation is the firmware in the middle and programs that yield while they wait, and a yield with
 * nobody else on the firmware's CPU returns at once, so it costs a message nothing, while a program
 * that shares that CPU gets it at the firmware's first idle look rather than after a spin or a time
 * slice. Measured with {@code qnix bench latency} between nodes 0-0 and 1-0 against spinning 10 us
 * before the first yield (the rule before; docs/performance/firmware-yield.txt, in turn, twice each):
 * one way at 0 bytes 5.9-6.5 us against 7.4-7.5 with the firmware on a CPU of its own (bandwidth the
 * same), 22-27 against 51-62 us with {@code --firmware threads}, 24-36 against 39-46 with
 * {@code processes}; a barrier of four with one member on the firmware's CPU took 23 us against 45-56.
 * Once the window has passed it parks, so the hot window costs a core only while messages flow.
 *
 * <p>Measured idle, a 2x2 cluster with four programs blocked in {@code waitForReceive}: the firmware
 * JVM took 0.009 cores with 8 ms parks (125 wake-ups a second, each running four duty cycles), which
 * sleeping until woken replaces with about ten heartbeats a second (docs/PERFORMANCE.md).
 */
public final class HotWindowIdleStrategy implements IdleStrategy
{
    static final long MIN_PARK_NS = TimeUnit.MICROSECONDS.toNanos(1);
    static final long MAX_PARK_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Idle this long, the firmware sleeps (or parks longer): nobody is talking. */
    static final long DEEP_IDLE_NS = TimeUnit.MILLISECONDS.toNanos(50);
    static final long DEEP_PARK_NS = TimeUnit.MILLISECONDS.toNanos(8);
    /** A sleep ends by this time at the latest, so that the heartbeat stays fresh. */
    static final long SLEEP_SLICE_NS = TimeUnit.MILLISECONDS.toNanos(ControlProgramLayout.HEARTBEAT_INTERVAL_MS);

    private final long hotNs;
    private final IdleNics nics;
    private final long sleepSliceNs;
    private long lastWorkNs = System.nanoTime();
    private long parkNs;

    /**
     * @param hotNs how long after the last work to keep yielding; 0 parks at once.
     * @param parks the counters to count each park in (one per NIC run by this strategy's thread); these
     *              NICs never sleep, they park.
     */
    public HotWindowIdleStrategy(final long hotNs, final AtomicCounter... parks)
    {
        this(hotNs, IdleNics.parksOnly(parks));
    }

    /**
     * @param hotNs how long after the last work to keep yielding; 0 parks at once.
     * @param nics  the NICs run by this strategy's thread.
     */
    public HotWindowIdleStrategy(final long hotNs, final IdleNics nics)
    {
        this(hotNs, nics, SLEEP_SLICE_NS);
    }

    /** @param sleepSliceNs the longest sleep: a test makes it long to show that only a wake-up ends it. */
    HotWindowIdleStrategy(final long hotNs, final IdleNics nics, final long sleepSliceNs)
    {
        if (hotNs < 0)
        {
            throw new IllegalArgumentException("hot window " + hotNs + " ns");
        }
        this.hotNs = hotNs;
        this.nics = nics;
        this.sleepSliceNs = sleepSliceNs;
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
            Thread.yield();
            return;
        }
        if (idleNs >= DEEP_IDLE_NS && nics.canSleep())
        {
            if (nics.isArmed())
            {
                nics.sleep(sleepSliceNs);
            }
            else
            {
                // Asleep is set now; the runner's next duty cycle is the last look for work before the sleep.
                nics.arm();
            }
            return;
        }
        parkNs = 0 == parkNs ? MIN_PARK_NS : Math.min(2 * parkNs, idleNs < DEEP_IDLE_NS ? MAX_PARK_NS : DEEP_PARK_NS);
        nics.countPark();
        LockSupport.parkNanos(parkNs);
    }

    public void reset()
    {
        lastWorkNs = System.nanoTime();
        parkNs = 0;
        nics.disarm();
    }

    public String alias()
    {
        return "hot-window";
    }
}
