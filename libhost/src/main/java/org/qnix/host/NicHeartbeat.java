package org.qnix.host;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.HostClock;
import org.qnix.abi.NicCoordinates;

/**
 * The NIC control program's state and heartbeat as a process sees them: read-only, like a status
 * register (DESIGN.md 5: a wait never outlives the firmware). Every wait of a user library looks here
 * now and then, so that a stopped NIC ends the wait instead of leaving it to its timeout.
 *
 * <pre>{@code
 * NicHeartbeat heartbeat = new NicHeartbeat(control.buffer(), 0, node);
 * if (!heartbeat.isRunning())
 * {
 *     throw new IllegalStateException(heartbeat.describeStopped());
 * }
 * }</pre>
 *
 * <p>Thread safe: it only reads.
 */
public final class NicHeartbeat
{
    private final ControlProgramSegment segment;
    private final NicCoordinates node;

    /**
     * @param control a mapping of the NIC's control-program area ({@code ControlProgramLayout}).
     * @param offset  where that area starts in {@code control}.
     * @param node    the NIC's node, for messages.
     */
    public NicHeartbeat(final UnsafeBuffer control, final int offset, final NicCoordinates node)
    {
        this.segment = new ControlProgramSegment().wrap(control, offset);
        this.node = node;
    }

    /** @return true if the control program runs its loop and beat within the heartbeat timeout. */
    public boolean isRunning()
    {
        // Writer: the NIC control program, every HEARTBEAT_INTERVAL_MS.
        return segment.isBeating(HostClock.millis());
    }

    /** @return why the NIC is taken for dead, naming its node; for an error message. */
    public String describeStopped()
    {
        final int state = segment.state();
        final long silence = segment.silenceMs(HostClock.millis());
        return "the NIC control program of node " + node + " is not running (" +
            (ControlProgramLayout.STATE_RUNNING != state ? "stopped" : "no heartbeat for " + silence + " ms") +
            "): nothing posted to it can complete";
    }

    public NicCoordinates node()
    {
        return node;
    }
}
