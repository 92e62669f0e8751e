package org.qnix.abi;

/**
 * The NIC Table (thesis 3.3.3): every NIC of the cluster, copied from the topology when the cluster is
 * created. Entry {@code i} is node index {@code i} (row by row).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |  Id (node index)                                              |
 *  +---------------------------------------------------------------+
 *  |  Coordinates (x high byte, y low byte)                        |
 *  +---------------------------------------------------------------+
 *  |  Reserved (64 bits)                                           |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class NicTableLayout
{
    public static final int ID_OFFSET = 0;
    public static final int COORDINATES_OFFSET = ID_OFFSET + Integer.BYTES;
    public static final int ENTRY_LENGTH = 16;

    private NicTableLayout()
    {
    }

    public static int length(final ClusterParameters params)
    {
        return params.nodeCount() * ENTRY_LENGTH;
    }
}
