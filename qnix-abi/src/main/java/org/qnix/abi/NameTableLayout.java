package org.qnix.abi;

/**
 * The Name Table (thesis 3.3.3, Figure 8) as published in NIC internal memory for other processes to
 * read. The firmware keeps its working copy on the heap and mirrors every change here inside a
 * sequence lock: it makes the Sequence odd, writes, then makes it even again (both with release). A
 * reader copies what it needs and retries if the Sequence was odd or changed meanwhile.
 *
 * <pre>
 *  Header (64 bytes):
 *  +---------------------------------------------------------------+
 *  |  Sequence (64 bits; odd while the firmware writes)            |
 *  +---------------------------------------------------------------+
 *  |  Entries in use                                               |
 *  +---------------------------------------------------------------+
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+
 *  T entries (32 bytes each):
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |  State (0 free, 1 used)                                       |
 *  +---------------------------------------------------------------+
 *  |  Name AI                                                      |
 *  +---------------------------------------------------------------+
 *  |  Name PI                                                      |
 *  +---------------------------------------------------------------+
 *  |  NIC coordinates of the process                               |
 *  +---------------------------------------------------------------+
 *  |  NIC PID (Process Table index + 1 on that NIC)                |
 *  +---------------------------------------------------------------+
 *  |  OS pid                                                       |
 *  +---------------------------------------------------------------+
 *  |  Reserved (64 bits)                                           |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class NameTableLayout
{
    public static final int SEQUENCE_OFFSET = 0;
    public static final int COUNT_OFFSET = SEQUENCE_OFFSET + Long.BYTES;
    public static final int HEADER_LENGTH = 64;

    public static final int STATE_OFFSET = 0;
    public static final int AI_OFFSET = STATE_OFFSET + Integer.BYTES;
    public static final int PI_OFFSET = AI_OFFSET + Integer.BYTES;
    public static final int NODE_OFFSET = PI_OFFSET + Integer.BYTES;
    public static final int NIC_PID_OFFSET = NODE_OFFSET + Integer.BYTES;
    public static final int OS_PID_OFFSET = NIC_PID_OFFSET + Integer.BYTES;
    public static final int ENTRY_LENGTH = 32;

    public static final int STATE_FREE = 0;
    public static final int STATE_USED = 1;

    private NameTableLayout()
    {
    }

    public static int entryOffset(final int index)
    {
        return HEADER_LENGTH + index * ENTRY_LENGTH;
    }

    public static long length(final ClusterParameters params)
    {
        return HEADER_LENGTH + (long)params.nameTableEntries() * ENTRY_LENGTH;
    }
}
