package org.qnix.daemon;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;

import org.qnix.abi.ProcessStartTicks;

/**
 * Whether a process still lives: one the driver waits on behalf of (a wait for a dead one ends at once,
 * as nobody is left to read its reply), and whether a live pid is still the process recorded with it
 * (a cluster's daemon, a lock's holder), not a later one given that pid.
 *
 * <pre>{@code
 * if (!Processes.isAlive(osPid)) { giveUp(); }
 * if (!Processes.isSameProcess(daemon, props.daemonStartTicks(), props.daemonStartMs())) { stale(); }
 * }</pre>
 */
final class Processes
{
    /**
     * How far a wall-clock start may differ from the one recorded and still be the same process, where
     * the start in clock ticks is unknown (files written before it was recorded): the JDK derives the
     * start from the boot time, which moves when the clock is set.
     */
    static final long START_TIME_TOLERANCE_MS = 10_000;
    /** Without /proc (not Linux), ProcessStartTicks knows nothing, and ProcessHandle answers. */
    private static final boolean HAS_PROC = Files.isDirectory(Path.of("/proc"));

    private Processes()
    {
    }

    /**
     * @return true if a process with that pid exists and has not exited. A zombie has exited: {@link
     * ProcessHandle#isAlive} counts it alive until its parent reaps it, and an orphan's new parent (a
     * container's first process, say) may never do so.
     */
    static boolean isAlive(final long pid)
    {
        return HAS_PROC ? 0 != ProcessStartTicks.ofLiving(pid) :
            ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /**
     * Whether {@code process} is the one recorded with this start, not a later one given its pid. By the
     * start in clock ticks after boot where both are known ({@link ProcessStartTicks}: exact, and it does
     * not move when the clock is set, as after a virtual machine's resume); else by the wall-clock start,
     * within {@link #START_TIME_TOLERANCE_MS}; a process recorded with neither is taken to be the same.
     */
    static boolean isSameProcess(final ProcessHandle process, final long startTicks, final long startMs)
    {
        final long ticks = 0 == startTicks ? 0 : ProcessStartTicks.of(process.pid());
        if (0 != ticks)
        {
            return ticks == startTicks;
        }
        if (0 == startMs)
        {
            return true;
        }
        final Optional<Instant> started = process.info().startInstant();
        return started.isEmpty() || Math.abs(started.get().toEpochMilli() - startMs) <= START_TIME_TOLERANCE_MS;
    }
}
