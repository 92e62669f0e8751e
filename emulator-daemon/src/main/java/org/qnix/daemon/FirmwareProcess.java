package org.qnix.daemon;

import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.HostClock;
import org.qnix.abi.ProcessStartTicks;

/**
 * Whether the process that runs a NIC's control program is gone, from the pid and the process start the
 * control program writes at its start ({@link ControlProgramLayout}): a firmware JVM killed with SIGKILL
 * leaves its state RUNNING, only its heartbeat says it is silent, as a firmware at a debugger breakpoint
 * is. A gone one does no DMA any more, so what the driver held back for it may go (issue 17, item 9:
 * held deletions), and {@code qnix cluster status} says "gone" rather than "stalled".
 *
 * <pre>{@code
 * ControlProgramSegment control = new ControlProgramSegment().wrap(sdram, (int)layout.controlProgramOffset());
 * if (FirmwareProcess.doesNoDma(control, HostClock.millis())) { quarantine.releaseCompleted(); }
 * }</pre>
 */
public final class FirmwareProcess
{
    private FirmwareProcess()
    {
    }

    /**
     * @return true if the NIC does no DMA any more: its control program does not run its loop (stopped,
     * never started), or it went silent and the process that ran it is gone (killed).
     */
    public static boolean doesNoDma(final ControlProgramSegment control, final long nowMs)
    {
        // Writer: the control program, STOPPED once its loop has ended; its heartbeat while it runs.
        if (ControlProgramLayout.STATE_RUNNING != control.state())
        {
            return true;
        }
        return control.isSilent(nowMs) && isGone(control);
    }

    /**
     * @return true if no process has the control program's pid, or the one that has it started at another
     * moment (the pid was reused); false while the control program's process lives, and whenever the
     * control area does not say which process that is (never started, or no /proc to read the start from).
     */
    public static boolean isGone(final ControlProgramSegment control)
    {
        // Writer of both: the control program, once, before it publishes RUNNING with release.
        final long pid = control.pid();
        final long startTicks = control.processStartTicks();
        if (pid <= 0 || 0 == startTicks)
        {
            return false;
        }
        // Clock ticks after boot: exact, and unmoved by a change of the wall clock.
        return ProcessStartTicks.of(pid) != startTicks;
    }
}
