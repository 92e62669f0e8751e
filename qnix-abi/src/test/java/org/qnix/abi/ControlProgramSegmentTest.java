package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The NIC Control Program segment flyweight writes where ControlProgramLayout says, and a NIC is taken
 * for alive only while it is Running and its heartbeat is within the timeout.
 */
class ControlProgramSegmentTest
{
    private static final int AT = 192;
    private static final long NOW = 1_800_000_000_000L;

    private final UnsafeBuffer sdram = new UnsafeBuffer(new byte[AT + 2 * ControlProgramLayout.LENGTH]);
    private final ControlProgramSegment segment = new ControlProgramSegment().wrap(sdram, AT);

    @Test
    void theControlProgramsWordsAreWhereTheLayoutSays()
    {
        segment.identify(4321, NOW - 5, 777, ControlProgramLayout.MODE_PROCESS, 5005);
        segment.beat(9, NOW);
        segment.dutyCycles(12345);
        segment.running();

        assertEquals(4321, sdram.getLong(AT + ControlProgramLayout.PID_OFFSET));
        assertEquals(NOW - 5, sdram.getLong(AT + ControlProgramLayout.START_TIME_OFFSET));
        assertEquals(777, sdram.getLong(AT + ControlProgramLayout.PROCESS_START_TICKS_OFFSET));
        assertEquals(FileDescriptorBlock.LAYOUT_VERSION, sdram.getInt(AT + ControlProgramLayout.VERSION_OFFSET));
        assertEquals(ControlProgramLayout.MODE_PROCESS, sdram.getInt(AT + ControlProgramLayout.MODE_OFFSET));
        assertEquals(5005, sdram.getInt(AT + ControlProgramLayout.DEBUG_PORT_OFFSET));
        assertEquals(9, sdram.getLong(AT + ControlProgramLayout.HEARTBEAT_COUNTER_OFFSET));
        assertEquals(NOW, sdram.getLong(AT + ControlProgramLayout.HEARTBEAT_TIME_OFFSET));
        assertEquals(12345, sdram.getLong(AT + ControlProgramLayout.DUTY_CYCLES_OFFSET));
        assertEquals(ControlProgramLayout.STATE_RUNNING, sdram.getInt(AT + ControlProgramLayout.STATE_OFFSET));
        assertEquals(0, sdram.getLong(AT - Long.BYTES), "nothing before the segment");
        assertEquals(0, sdram.getLong(AT + ControlProgramLayout.LENGTH), "nothing after it");

        assertEquals(4321, segment.pid());
        assertEquals(777, segment.processStartTicks());
        assertEquals(ControlProgramLayout.MODE_PROCESS, segment.mode());
        assertEquals(5005, segment.debugPort());
        assertEquals(9, segment.heartbeatCounter());
        assertEquals(12345, segment.dutyCycles());
        assertEquals(FileDescriptorBlock.LAYOUT_VERSION, segment.version());
    }

    @Test
    void aNicIsBeatingOnlyWhileRunningAndHeardWithinTheTimeout()
    {
        assertFalse(segment.isBeating(NOW), "never started: absent");
        segment.beat(1, NOW);
        assertFalse(segment.isBeating(NOW), "a heartbeat but not Running yet");
        segment.running();
        assertTrue(segment.isBeating(NOW));
        assertTrue(segment.isBeating(NOW + ControlProgramLayout.HEARTBEAT_TIMEOUT_MS));
        assertFalse(segment.isBeating(NOW + ControlProgramLayout.HEARTBEAT_TIMEOUT_MS + 1), "silent past the timeout");
        assertEquals(ControlProgramLayout.HEARTBEAT_TIMEOUT_MS + 1,
            segment.silenceMs(NOW + ControlProgramLayout.HEARTBEAT_TIMEOUT_MS + 1));
        assertEquals(0, segment.silenceMs(NOW - 10), "a clock behind the heartbeat: no silence");
        segment.stopped();
        assertEquals(ControlProgramLayout.STATE_STOPPED, segment.state());
        assertFalse(segment.isBeating(NOW));
    }
}
