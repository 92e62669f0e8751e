package org.qnix.abi;

/**
 * The Group Table (thesis 3.3.3, Figure 8) as published in NIC internal memory, with the same
 * sequence lock as the {@link NameTableLayout}. The thesis' Size field is split into the expected
 * size and the member count (issue 4; DESIGN.md 8). The Process List is an array of member names.
 *
 * <pre>
 *  Header (64 bytes): Sequence (64 bits), entries in use, reserved.
 *  G entries, each:
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |  State (0 free, 1 used)                                       |
 *  +---------------------------------------------------------------+
 *  |  Name (group identifier)                                      |
 *  +---------------------------------------------------------------+
 *  |  Expected size                                                |
 *  +---------------------------------------------------------------+
 *  |  Member count                                                 |
 *  +---------------------------------------------------------------+
 *  |  Reserved to 32 bytes                                         |
 *  +---------------------------------------------------------------+
 *  |  Process List: T member names, (AI, PI) = 8 bytes each        |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class GroupTableLayout
{
    public static final int SEQUENCE_OFFSET = 0;
    public static final int COUNT_OFFSET = SEQUENCE_OFFSET + Long.BYTES;
    public static final int HEADER_LENGTH = 64;

    public static final int STATE_OFFSET = 0;
    public static final int NAME_OFFSET = STATE_OFFSET + Integer.BYTES;
    public static final int EXPECTED_SIZE_OFFSET = NAME_OFFSET + Integer.BYTES;
    public static final int MEMBER_COUNT_OFFSET = EXPECTED_SIZE_OFFSET + Integer.BYTES;
    public static final int MEMBERS_OFFSET = 32;
    public static final int MEMBER_LENGTH = 2 * Integer.BYTES;

    public static final int STATE_FREE = 0;
    public static final int STATE_USED = 1;

    private GroupTableLayout()
    {
    }

    /** @return bytes of one entry: the header plus room for every process the Name Table can hold. */
    public static long entryLength(final ClusterParameters params)
    {
        return MEMBERS_OFFSET + (long)params.nameTableEntries() * MEMBER_LENGTH;
    }

    public static long entryOffset(final ClusterParameters params, final int index)
    {
        return HEADER_LENGTH + index * entryLength(params);
    }

    public static long length(final ClusterParameters params)
    {
        return HEADER_LENGTH + params.groupTableEntries() * entryLength(params);
    }
}
