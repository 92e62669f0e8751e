package org.qnix.abi;

/**
 * The NIC Control Program segment (thesis 3.3.4, segment 4): who runs this NIC and whether it is
 * alive. The firmware writes it; the daemon and the tools read it to tell a live NIC from a dead one.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |  Firmware OS pid (64 bits)                                    |
 *  +---------------------------------------------------------------+
 *  |  Start time, host clock ms (64 bits)                          |
 *  +---------------------------------------------------------------+
 *  |  Heartbeat counter (64 bits)                                  |
 *  +---------------------------------------------------------------+
 *  |  Last heartbeat, host clock ms (64 bits, release)             |
 *  +---------------------------------------------------------------+
 *  |  State: 0 absent, 1 running, 2 stopped (release)              |
 *  +---------------------------------------------------------------+
 *  |  Firmware version (= layout version)                          |
 *  +---------------------------------------------------------------+
 *  |  Mode: 1 own JVM, 2 thread in the daemon                      |
 *  +---------------------------------------------------------------+
 *  |  JDWP debug port (0 = none)                                   |
 *  +---------------------------------------------------------------+
 *  |  Duty cycles completed (64 bits, volatile): the DMA epoch     |
 *  +---------------------------------------------------------------+
 *  |  Firmware process start, clock ticks after boot (64 bits)     |
 *  +---------------------------------------------------------------+
 *  |  Reserved to 128 bytes                                        |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>The duty cycle count is how the driver knows that no DMA still uses a page it took back
 * (DESIGN.md 8, item 10): the control program checks a page's Protection Table entry and copies its
 * bytes within one duty cycle, and stores the count (a volatile store, so it is ordered after the
 * cycle's checks) when the cycle ends. A driver that cleared a page's entry and then read count
 * {@code E} knows that every cycle from {@code E + 2} on sees the cleared entry; once the count is
 * past {@code E}, the one cycle that may have checked the page before it was cleared has finished,
 * and the page may go to another process.
 *
 * <p>Both times are {@link HostClock} ms (layout version 13; epoch ms before): the host's monotonic
 * clock, which every process reads alike, so that a step of the system clock neither makes a live NIC
 * look silent nor a dead one look alive.
 *
 * <p>Its one writer and its readers use it through {@link ControlProgramSegment}.
 *
 * <p>A firmware JVM killed with SIGKILL leaves its state RUNNING; only its heartbeat goes silent, as
 * at a debugger breakpoint. The pid and the process start ({@link ProcessStartTicks}, 0 if unknown) tell
 * the two apart: no process of that pid with that start means the control program's process is gone and
 * does no DMA any more.
 */
public final class ControlProgramLayout
{
    public static final int PID_OFFSET = 0;
    public static final int START_TIME_OFFSET = PID_OFFSET + Long.BYTES;
    public static final int HEARTBEAT_COUNTER_OFFSET = START_TIME_OFFSET + Long.BYTES;
    public static final int HEARTBEAT_TIME_OFFSET = HEARTBEAT_COUNTER_OFFSET + Long.BYTES;
    public static final int STATE_OFFSET = HEARTBEAT_TIME_OFFSET + Long.BYTES;
    public static final int VERSION_OFFSET = STATE_OFFSET + Integer.BYTES;
    public static final int MODE_OFFSET = VERSION_OFFSET + Integer.BYTES;
    public static final int DEBUG_PORT_OFFSET = MODE_OFFSET + Integer.BYTES;
    public static final int DUTY_CYCLES_OFFSET = DEBUG_PORT_OFFSET + Integer.BYTES;
    public static final int PROCESS_START_TICKS_OFFSET = DUTY_CYCLES_OFFSET + Long.BYTES;
    public static final int LENGTH = 128;

    public static final int STATE_ABSENT = 0;
    public static final int STATE_RUNNING = 1;
    public static final int STATE_STOPPED = 2;

    public static final int MODE_PROCESS = 1;
    public static final int MODE_THREAD = 2;

    /** The firmware refreshes its heartbeat at least this often. */
    public static final long HEARTBEAT_INTERVAL_MS = 100;
    /** A heartbeat older than this means the firmware is not running its loop. */
    public static final long HEARTBEAT_TIMEOUT_MS = 3000;

    private ControlProgramLayout()
    {
    }
}
