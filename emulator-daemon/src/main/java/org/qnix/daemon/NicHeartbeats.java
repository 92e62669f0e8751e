package org.qnix.daemon;

import java.util.List;

import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.HostClock;
import org.qnix.abi.NicCoordinates;
import org.qnix.firmware.NodeImage;

/**
 * The heartbeats of every NIC of the cluster, read from their NIC Control Program segments, for the
 * drivers to tell a dead NIC (issue 17, item 9): a registration needs every NIC's New_Process_Ack,
 * so one dead NIC means no registration can complete, and the driver says which instead of waiting
 * for the whole init timeout.
 *
 * <pre>{@code
 * String dead = heartbeats.deadNic(HostClock.millis());   // null while all run their loop
 * }</pre>
 */
final class NicHeartbeats
{
    private final List<NodeImage> images;

    NicHeartbeats(final List<NodeImage> images)
    {
        this.images = List.copyOf(images);
    }

    /** @return why the first NIC that does not run its loop is dead, or null if every NIC runs. */
    String deadNic(final long nowMs)
    {
        for (final NodeImage image : images)
        {
            final String dead = deadReason(image, nowMs);
            if (null != dead)
            {
                return dead;
            }
        }
        return null;
    }

    /** @return why the NIC of {@code node} is dead, or null if it runs its loop. */
    String deadNic(final NicCoordinates node, final long nowMs)
    {
        for (final NodeImage image : images)
        {
            if (image.node().equals(node))
            {
                return deadReason(image, nowMs);
            }
        }
        return null;
    }

    private static String deadReason(final NodeImage image, final long nowMs)
    {
        final ControlProgramSegment control = image.controlSegment();
        // Writer: the control program, every HEARTBEAT_INTERVAL_MS while it runs its loop.
        if (ControlProgramLayout.STATE_RUNNING != control.state())
        {
            return "the NIC control program of node " + image.node() + " is not running (stopped)";
        }
        final long silence = control.silenceMs(nowMs);
        if (silence > ControlProgramLayout.HEARTBEAT_TIMEOUT_MS)
        {
            if (FirmwareProcess.isGone(control))
            {
                return "the NIC control program of node " + image.node() + " is not running (its firmware process " +
                    control.pid() + " is gone)";
            }
            return "the NIC control program of node " + image.node() + " is not running (no heartbeat for " +
                silence + " ms; `qnix cluster status` shows its firmware)";
        }
        return null;
    }
}
