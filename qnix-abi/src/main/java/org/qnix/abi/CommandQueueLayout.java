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
 */
public final class CommandQueueLayout
{
    public static final int COMMAND_OFFSET = 0;
    public static final int CONTEXT_OFFSET = COMMAND_OFFSET + Integer.BYTES;
    public static final int GROUP_OFFSET = CONTEXT_OFFSET + Integer.BYTES;
    public static final int SIZE_OFFSET = GROUP_OFFSET + Integer.BYTES;
    public static final int ENTRY_LENGTH = SIZE_OFFSET + Integer.BYTES;

    private CommandQueueLayout()
    {
    }

    public static int length(final ClusterParameters params)
    {
        return params.commandQueueEntries() * ENTRY_LENGTH;
    }
}
