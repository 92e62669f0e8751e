package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.ProcessStartTicks;

/**
 * A NIC's firmware process as the driver tells it from the control area: alive while the process of the
 * pid is the one that started when the control program says; gone once no process has the pid, or the
 * one that has it started at another moment (the pid reused); never gone when the area names no process.
 */
class FirmwareProcessTest
{
    private final AtomicBuffer control = new UnsafeBuffer(new byte[ControlProgramLayout.LENGTH]);
    private final ControlProgramSegment segment = new ControlProgramSegment().wrap(control, 0);
    private final long self = ProcessHandle.current().pid();

    private void started(final long pid, final long startTicks)
    {
        control.putLongVolatile(ControlProgramLayout.PID_OFFSET, pid);
        control.putLongVolatile(ControlProgramLayout.PROCESS_START_TICKS_OFFSET, startTicks);
    }

    @Test
    void theProcessThatWroteItsPidAndStartRunsIt()
    {
        final long ticks = ProcessStartTicks.of(self);
        assertNotEquals(0, ticks, "this JVM's start, from /proc/self/stat");
        started(self, ticks);
        assertFalse(FirmwareProcess.isGone(segment));
    }

    @Test
    void aControlAreaThatNamesNoProcessIsNeverTakenForGone()
    {
        started(0, 0);
        assertFalse(FirmwareProcess.isGone(segment), "a control program that never started");
        started(self + 1_000_000, 0);
        assertFalse(FirmwareProcess.isGone(segment), "a start it could not read: unknown, not gone");
    }

    @Test
    void aPidWithNoProcessOrAnotherProcessStartIsGone() throws Exception
    {
        final Process exited = new ProcessBuilder("true").start();
        final long ticks = ProcessStartTicks.of(exited.pid());
        exited.waitFor();
        started(exited.pid(), 0 == ticks ? 1 : ticks);
        assertTrue(FirmwareProcess.isGone(segment), "no process has the pid");

        started(self, ProcessStartTicks.of(self) - 1);
        assertTrue(FirmwareProcess.isGone(segment), "the pid now names a process that started later");
    }
}
