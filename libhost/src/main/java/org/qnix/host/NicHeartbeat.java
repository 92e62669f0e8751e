package org.qnix.host;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ControlProgramLayout;
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
 * <p>A non-blocking poll that found nothing calls {@link #lookDueAfterPoll()}, so that a loop of polls
 * ends on a stopped NIC too:
 *
 * <pre>{@code
 * if (!done && heartbeat.lookDueAfterPoll() && !heartbeat.isRunning())
 * {
 *     throw new IllegalStateException(heartbeat.describeStopped());
 * }
 * }</pre>
 *
 * <p>Thread safe: it reads shared memory only; the count of polls is racy by design (a lost increment
 * only puts the next look off by a poll).
 */
public final class NicHeartbeat
{
    /** Polls that found nothing between two looks at the heartbeat ({@link #lookDueAfterPoll()}). */
    public static final int POLLS_PER_LOOK = 1024;

    private final UnsafeBuffer control;
    private final int offset;
    private final NicCoordinates node;
    private int pollsSinceLook;

    /**
     * @param control a mapping of the NIC's control-program area ({@code ControlProgramLayout}).
     * @param offset  where that area starts in {@code control}.
     * @param node    the NIC's node, for messages.
     */
    public NicHeartbeat(final UnsafeBuffer control, final int offset, final NicCoordinates node)
    {
        this.control = control;
        this.offset = offset;
        this.node = node;
    }

    /** @return true if the control program runs its loop and beat within the heartbeat timeout. */
    public boolean isRunning()
    {
        // Writer: the NIC control program, every HEARTBEAT_INTERVAL_MS.
        final int state = control.getIntVolatile(offset + ControlProgramLayout.STATE_OFFSET);
        final long beat = control.getLongVolatile(offset + ControlProgramLayout.HEARTBEAT_TIME_OFFSET);
        return ControlProgramLayout.STATE_RUNNING == state &&
            System.currentTimeMillis() - beat <= ControlProgramLayout.HEARTBEAT_TIMEOUT_MS;
    }

    /**
     * For a non-blocking poll that found nothing: says when to look at the NIC, once every {@link
     * #POLLS_PER_LOOK} calls, so that a program polling in a loop learns of a stopped NIC (DESIGN.md 5:
     * a wait never outlives the firmware) for the cost of an increment per poll. It reads nothing
     * shared: the caller looks ({@link #isRunning()}) where the mapping is safe to read.
     *
     * @return true on every {@link #POLLS_PER_LOOK}-th call.
     */
    public boolean lookDueAfterPoll()
    {
        if (++pollsSinceLook < POLLS_PER_LOOK)
        {
            return false;
        }
        pollsSinceLook = 0;
        return true;
    }

    /** @return why the NIC is taken for dead, naming its node; for an error message. */
    public String describeStopped()
    {
        final int state = control.getIntVolatile(offset + ControlProgramLayout.STATE_OFFSET);
        final long silence = System.currentTimeMillis() -
            control.getLongVolatile(offset + ControlProgramLayout.HEARTBEAT_TIME_OFFSET);
        return "the NIC control program of node " + node + " is not running (" +
            (ControlProgramLayout.STATE_RUNNING != state ? "stopped" : "no heartbeat for " + silence + " ms") +
            "): nothing posted to it can complete";
    }

    public NicCoordinates node()
    {
        return node;
    }
}
