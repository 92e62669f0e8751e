package org.qnix.abi;

import static org.qnix.abi.ControlProgramLayout.DEBUG_PORT_OFFSET;
import static org.qnix.abi.ControlProgramLayout.DUTY_CYCLES_OFFSET;
import static org.qnix.abi.ControlProgramLayout.HEARTBEAT_COUNTER_OFFSET;
import static org.qnix.abi.ControlProgramLayout.HEARTBEAT_TIMEOUT_MS;
import static org.qnix.abi.ControlProgramLayout.HEARTBEAT_TIME_OFFSET;
import static org.qnix.abi.ControlProgramLayout.MODE_OFFSET;
import static org.qnix.abi.ControlProgramLayout.PID_OFFSET;
import static org.qnix.abi.ControlProgramLayout.PROCESS_START_TICKS_OFFSET;
import static org.qnix.abi.ControlProgramLayout.START_TIME_OFFSET;
import static org.qnix.abi.ControlProgramLayout.STATE_OFFSET;
import static org.qnix.abi.ControlProgramLayout.STATE_RUNNING;
import static org.qnix.abi.ControlProgramLayout.STATE_STOPPED;
import static org.qnix.abi.ControlProgramLayout.VERSION_OFFSET;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The NIC Control Program segment ({@link ControlProgramLayout}; thesis 3.3.4, segment 4) as its one
 * writer, the control program, and its readers (the driver, the tools, the user libraries) use it.
 * The control program writes who it is, then its first heartbeat, then State Running with release;
 * a reader that sees Running reads the rest. Every heartbeat writes the counter, then the time with
 * release. Its users wrap it once and only read through it from then on, so one instance may serve
 * several threads.
 *
 * <pre>{@code
 * // Control program, at its start and every HEARTBEAT_INTERVAL_MS.
 * ControlProgramSegment segment = new ControlProgramSegment().wrap(sdram, (int)layout.controlProgramOffset());
 * segment.identify(pid, nowMs, ProcessStartTicks.of(pid), ControlProgramLayout.MODE_PROCESS, 0);
 * segment.beat(1, nowMs);
 * segment.running();
 *
 * // Any reader.
 * if (!segment.isBeating(HostClock.millis())) { ... }
 * }</pre>
 */
public final class ControlProgramSegment
{
    private AtomicBuffer buffer;
    private int offset;

    /** @param offset the segment's first byte in {@code buffer} (its NIC SDRAM, or a mapping of it). */
    public ControlProgramSegment wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Control program: who runs the NIC, written once before {@link #running()} publishes it. The
     * version is the layout's ({@link FileDescriptorBlock#LAYOUT_VERSION}).
     *
     * @param processStartTicks the process's start ({@link ProcessStartTicks}; 0 if unknown), which the
     *                          driver compares to tell this process from a later one with the pid.
     */
    public void identify(final long pid, final long startTimeMs, final long processStartTicks, final int mode,
        final int debugPort)
    {
        buffer.putLong(offset + PID_OFFSET, pid);
        buffer.putLong(offset + START_TIME_OFFSET, startTimeMs);
        buffer.putLong(offset + PROCESS_START_TICKS_OFFSET, processStartTicks);
        buffer.putInt(offset + VERSION_OFFSET, FileDescriptorBlock.LAYOUT_VERSION);
        buffer.putInt(offset + MODE_OFFSET, mode);
        buffer.putInt(offset + DEBUG_PORT_OFFSET, debugPort);
    }

    /** Control program: heartbeat number {@code counter}, at {@code nowMs}; the time last, with release. */
    public void beat(final long counter, final long nowMs)
    {
        buffer.putLong(offset + HEARTBEAT_COUNTER_OFFSET, counter);
        // Readers: the daemon, `cluster status` and the user libraries checking that the NIC is alive.
        buffer.putLongRelease(offset + HEARTBEAT_TIME_OFFSET, nowMs);
    }

    /** Control program: its loop runs (release: after {@link #identify} and the first {@link #beat}). */
    public void running()
    {
        // Readers: the daemon waiting for this NIC at `cluster up`, and `cluster status`.
        buffer.putIntRelease(offset + STATE_OFFSET, STATE_RUNNING);
    }

    /** Control program: its loop has ended. */
    public void stopped()
    {
        // Readers: the daemon and `cluster status`: this NIC no longer runs its loop.
        buffer.putIntRelease(offset + STATE_OFFSET, STATE_STOPPED);
    }

    /**
     * Control program, at the end of each duty cycle: the DMA epoch ({@link ControlProgramLayout}). A
     * volatile store, so that the cycle's Protection Table loads come before it; the reader is the
     * driver holding back pages it took from a process.
     */
    public void dutyCycles(final long completed)
    {
        buffer.putLongVolatile(offset + DUTY_CYCLES_OFFSET, completed);
    }

    /** @return the duty cycles completed (acquire): the DMA epoch. */
    public long dutyCycles()
    {
        return buffer.getLongVolatile(offset + DUTY_CYCLES_OFFSET);
    }

    /** @return {@code STATE_ABSENT}, {@code STATE_RUNNING} or {@code STATE_STOPPED} (acquire). */
    public int state()
    {
        return buffer.getIntVolatile(offset + STATE_OFFSET);
    }

    /** @return the {@link HostClock} ms of the last heartbeat (acquire). */
    public long heartbeatTimeMs()
    {
        return buffer.getLongVolatile(offset + HEARTBEAT_TIME_OFFSET);
    }

    /** @return the ms since the last heartbeat at {@code nowMs}; 0 for a heartbeat ahead of it. */
    public long silenceMs(final long nowMs)
    {
        return Math.max(0, nowMs - heartbeatTimeMs());
    }

    /**
     * @return true if no heartbeat came for more than {@code HEARTBEAT_TIMEOUT_MS} at {@code nowMs}:
     * a control program that does not run its loop (stopped, killed, or at a breakpoint).
     */
    public boolean isSilent(final long nowMs)
    {
        return silenceMs(nowMs) > HEARTBEAT_TIMEOUT_MS;
    }

    /** @return true if the control program runs its loop and beat within {@code HEARTBEAT_TIMEOUT_MS}. */
    public boolean isBeating(final long nowMs)
    {
        return STATE_RUNNING == state() && !isSilent(nowMs);
    }

    /** @return the OS pid of the process running the control program (acquire). */
    public long pid()
    {
        return buffer.getLongVolatile(offset + PID_OFFSET);
    }

    /** @return that process's start in clock ticks after boot, 0 if unknown (acquire). */
    public long processStartTicks()
    {
        return buffer.getLongVolatile(offset + PROCESS_START_TICKS_OFFSET);
    }

    public long heartbeatCounter()
    {
        return buffer.getLong(offset + HEARTBEAT_COUNTER_OFFSET);
    }

    /** @return {@code MODE_PROCESS} or {@code MODE_THREAD}. */
    public int mode()
    {
        return buffer.getInt(offset + MODE_OFFSET);
    }

    /** @return the JDWP port a debugger attaches to, 0 for none. */
    public int debugPort()
    {
        return buffer.getInt(offset + DEBUG_PORT_OFFSET);
    }

    public int version()
    {
        return buffer.getInt(offset + VERSION_OFFSET);
    }
}
