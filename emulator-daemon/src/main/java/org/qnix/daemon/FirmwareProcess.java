package org.qnix.daemon;

import java.time.Instant;
import java.util.Optional;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ControlProgramLayout;

/**
 * Whether the process that runs a NIC's control program is gone, from the pid and start time the
 * control program writes at its start ({@link ControlProgramLayout}): a firmware JVM killed with
 * SIGKILL leaves its state RUNNING, only its heartbeat says it is silent, as a firmware at a debugger
 * breakpoint is. A gone one does no DMA any more, so what the driver held back for it may go (issue 17,
 * item 9: held deletions), and {@code qnix cluster status} says "gone" rather than "stalled".
 *
 * <pre>{@code
 * if (FirmwareProcess.isGone(sdram, controlArea)) { releaseHeldDeletions(); }
 * }</pre>
 */
public final class FirmwareProcess
{
    /**
     * How much later than the control program its pid's process may seem to have started and still be
     * its process: the JDK derives a start time from the boot time, which the kernel gives in whole
     * seconds and which drifts with the wall clock. A pid reused this soon would have to wrap the pid space.
     */
    static final long START_TIME_SLACK_MS = 10_000;

    private FirmwareProcess()
    {
    }

    /**
     * @return true if no process has the control program's pid, or the one that has it started after the
     * control program did (the pid was reused); false while it lives, or if the control area names none.
     */
    public static boolean isGone(final AtomicBuffer sdram, final int controlArea)
    {
        // Writer of both: the control program, once, before it publishes RUNNING with release.
        final long pid = sdram.getLongVolatile(controlArea + ControlProgramLayout.PID_OFFSET);
        final long startedMs = sdram.getLongVolatile(controlArea + ControlProgramLayout.START_TIME_OFFSET);
        if (pid <= 0)
        {
            return false;
        }
        final Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isEmpty() || !handle.get().isAlive())
        {
            return true;
        }
        // The control program started inside its process, so its process cannot have started after it.
        final Optional<Instant> processStart = handle.get().info().startInstant();
        return processStart.isPresent() && processStart.get().toEpochMilli() > startedMs + START_TIME_SLACK_MS;
    }
}
