package org.qnix.host;

/**
 * When a run of non-blocking polls that found nothing is due for a look at the NIC: once every
 * {@link #PER_LOOK} of them. A wait looks at the {@link NicHeartbeat} while it waits; a program that
 * polls in a loop never waits, and without this would poll a stopped NIC for ever (DESIGN.md 5: a
 * wait never outlives the firmware). The count costs an increment per poll and reads nothing shared.
 *
 * <pre>{@code
 * if (null == done && emptyPolls.lookDue() && !heartbeat.isRunning())
 * {
 *     throw new IllegalStateException(heartbeat.describeStopped());
 * }
 * }</pre>
 *
 * <p>One per polled queue, used under that queue's own exclusion (its monitor, or the one thread the
 * API allows), so that pollers of different queues write no word in common.
 */
public final class EmptyPolls
{
    /** Polls that found nothing between two looks at the NIC. */
    public static final int PER_LOOK = 1024;

    private int sinceLook;

    /** @return true on every {@link #PER_LOOK}-th call: look at the NIC now. */
    public boolean lookDue()
    {
        if (++sinceLook < PER_LOOK)
        {
            return false;
        }
        sinceLook = 0;
        return true;
    }
}
