package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.qnix.abi.ControlProgramLayout;

/**
 * A NIC's firmware process as the driver tells it from the control area: alive while a process of the
 * pid lives that started before the control program did; gone once no process has the pid, or the one
 * that has it started later (the pid reused).
 */
class FirmwareProcessTest
{
    private final AtomicBuffer control = new UnsafeBuffer(new byte[ControlProgramLayout.LENGTH]);

    private void started(final long pid, final long startedMs)
    {
        control.putLongVolatile(ControlProgramLayout.PID_OFFSET, pid);
        control.putLongVolatile(ControlProgramLayout.START_TIME_OFFSET, startedMs);
    }

    @Test
    void aLiveProcessThatStartedBeforeItsControlProgramRunsIt()
    {
        started(ProcessHandle.current().pid(), System.currentTimeMillis());
        assertFalse(FirmwareProcess.isGone(control, 0));
    }

    @Test
    void aControlAreaThatNamesNoProcessIsNotTakenForGone()
    {
        started(0, 0);
        assertFalse(FirmwareProcess.isGone(control, 0), "a control program that never started");
    }

    @Test
    void aPidWhoseProcessExitedOrStartedLaterIsGone() throws Exception
    {
        final Process exited = new ProcessBuilder("true").start();
        exited.waitFor();
        started(exited.pid(), System.currentTimeMillis());
        assertTrue(FirmwareProcess.isGone(control, 0), "no process has the pid");

        // This JVM started long after a control program of an hour ago: the pid was reused.
        started(ProcessHandle.current().pid(), System.currentTimeMillis() - 3_600_000);
        assertTrue(FirmwareProcess.isGone(control, 0));
    }
}
