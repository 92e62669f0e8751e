package org.qnix.abi;

import org.agrona.concurrent.EpochClock;

/**
 * The one time base of a cluster: milliseconds of the host's monotonic clock, which every process of
 * the cluster reads alike. A NIC stamps its heartbeat with it ({@link ControlProgramSegment#beat}),
 * the driver, the libraries and the tools judge the heartbeat's silence with it, the control program
 * runs its protocol timers on it, and every wait computes its deadline on it.
 *
 * <p>Why not the wall clock ({@code System.currentTimeMillis()}), which the cluster used before: the
 * system clock steps. A step forward of more than {@link ControlProgramLayout#HEARTBEAT_TIMEOUT_MS}
 * (NTP correcting a drift, a VM or a laptop resumed) made every NIC look silent at once, so waits
 * all over the cluster ended with a NIC-dead error until the next beat; a step back made a NIC that
 * died afterwards look alive until the clock caught up again, and made every wait's deadline that
 * much later, so a wait that should end on a dead NIC or a timeout hung for that long instead.
 *
 * <p>HotSpot's {@link System#nanoTime()} reads Linux's {@code CLOCK_MONOTONIC}, which counts from
 * the same origin in every process of the host (of one time namespace, as a cluster's processes
 * are), so the readings of two processes compare, as the heartbeat needs (Java only promises that
 * within one JVM: {@code HostClockTest} checks it across JVMs). Its origin is arbitrary: a reading
 * is a time base, not a date; what is shown to a user as a date stays wall-clock.
 *
 * <pre>{@code
 * long deadline = HostClock.millis() + timeoutMs;
 * while (!done() && HostClock.millis() < deadline) { idle.idle(); }
 *
 * NicControlProgram nic = new NicControlProgram(new FirmwareContext()...clock(HostClock.INSTANCE));
 * }</pre>
 *
 * <p>It implements Agrona's {@link EpochClock} only for that interface's shape (a {@code time()} in
 * ms), so that the control program's cached clock and the stepped tests' manual clocks plug in; its
 * readings are not epoch milliseconds.
 */
public final class HostClock implements EpochClock
{
    /** The clock, for what takes an {@link EpochClock}. */
    public static final HostClock INSTANCE = new HostClock();

    private static final long NANOS_PER_MILLI = 1_000_000L;

    private HostClock()
    {
    }

    /** @return the host's monotonic clock in ms; comparable between the processes of the host. */
    public static long millis()
    {
        return System.nanoTime() / NANOS_PER_MILLI;
    }

    /** @return {@link #millis()}. */
    public long time()
    {
        return millis();
    }
}
