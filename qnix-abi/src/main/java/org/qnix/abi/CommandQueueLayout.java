package org.qnix.abi;

/**
 * One entry of a process Command Queue in its Virtual Network Interface (thesis 3.3.1, Figure 2). The
 * owner process writes Context, Group and Size, then the Command with release semantics; the NIC
 * control program reads the Command with acquire semantics, acts, and writes zero back so that it can
 * tell a full slot from an empty one without reading the process's tail (thesis 3.3.3).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |        Command (ProcessCommand code; 0 = empty slot)          |
 *  +---------------------------------------------------------------+
 *  |                 Context (Send/Receive Context index)          |
 *  +---------------------------------------------------------------+
 *  |                 Group (group name, when used)                 |
 *  +---------------------------------------------------------------+
 *  |                 Size (processes involved, when used)          |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>The receivers of a Multicast follow its entry, two names per entry (DESIGN.md 8, item 8):
 *
 * <pre>
 *  +---------------------------------------------------------------+
 *  |                 First receiver AI                             |
 *  +---------------------------------------------------------------+
 *  |                 First receiver PI                             |
 *  +---------------------------------------------------------------+
 *  |                 Second receiver AI (unused after the last)    |
 *  +---------------------------------------------------------------+
 *  |                 Second receiver PI                            |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The process writes the name entries first and the Multicast entry last, so the release of its
 * Command field publishes them all; the NIC consumes them with the command and clears each one.
 */
public final class CommandQueueLayout
{
    public static final int COMMAND_OFFSET = 0;
    public static final int CONTEXT_OFFSET = COMMAND_OFFSET + Integer.BYTES;
    public static final int GROUP_OFFSET = CONTEXT_OFFSET + Integer.BYTES;
    public static final int SIZE_OFFSET = GROUP_OFFSET + Integer.BYTES;
    public static final int ENTRY_LENGTH = SIZE_OFFSET + Integer.BYTES;

    /** Bytes of one (AI, PI) name in a name entry. */
    public static final int NAME_LENGTH = 2 * Integer.BYTES;
    public static final int NAMES_PER_ENTRY = ENTRY_LENGTH / NAME_LENGTH;

    private CommandQueueLayout()
    {
    }

    /** @return the entries that carry {@code receivers} names after a Multicast entry. */
    public static int namesEntries(final int receivers)
    {
        return (receivers + NAMES_PER_ENTRY - 1) / NAMES_PER_ENTRY;
    }

    /**
     * @return the most receivers one Multicast can name: its entry and the name entries must fit in
     * the N - 1 entries a Command Queue can hold at once.
     */
    public static int maxMulticastReceivers(final ClusterParameters params)
    {
        return (params.commandQueueEntries() - 2) * NAMES_PER_ENTRY;
    }

    public static int length(final ClusterParameters params)
    {
        return params.commandQueueEntries() * ENTRY_LENGTH;
    }
}
