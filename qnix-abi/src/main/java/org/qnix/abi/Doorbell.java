package org.qnix.abi;

/**
 * Doorbell values (thesis 3.3.2; DESIGN.md 8, item 11), used by process doorbells and Driver
 * Doorbells alike: Free, Used, Done, and error completions from 16 up.
 */
public final class Doorbell
{
    public static final int FREE = 0;
    public static final int USED = 1;
    public static final int DONE = 2;

    /** The first error code; every value at or above it is a completion with an error. */
    public static final int ERROR_BASE = 16;
    public static final int TRUNCATED = 16;
    public static final int PROTECTION = 17;
    public static final int PEER_GONE = 18;
    public static final int BAD_CONTEXT = 19;
    public static final int NO_RESOURCES = 20;
    /** A driver command the firmware could not accept (bad code, index or field). */
    public static final int BAD_COMMAND = 21;
    /** The process was de-registered before the operation completed. */
    public static final int ABORTED = 22;
    /**
     * The sender's NIC ended the message part-way: a page of the sender's buffer was no longer locked
     * by the sender when the NIC came to read it (the sender's Send completed {@link #PROTECTION}).
     * The receive buffer holds a prefix of the message.
     */
    public static final int SEND_ABORTED = 23;

    private Doorbell()
    {
    }

    public static boolean isError(final int value)
    {
        return value >= ERROR_BASE;
    }

    public static boolean isComplete(final int value)
    {
        return DONE == value || isError(value);
    }

    public static String name(final int value)
    {
        switch (value)
        {
            case FREE: return "Free";
            case USED: return "Used";
            case DONE: return "Done";
            case TRUNCATED: return "Truncated";
            case PROTECTION: return "Protection";
            case PEER_GONE: return "PeerGone";
            case BAD_CONTEXT: return "BadContext";
            case NO_RESOURCES: return "NoResources";
            case BAD_COMMAND: return "BadCommand";
            case ABORTED: return "Aborted";
            case SEND_ABORTED: return "SendAborted";
            default: return "Doorbell(" + value + ")";
        }
    }
}
