package org.qnix.abi;

/**
 * A Send Context or a Receive Context of a Virtual Network Interface (thesis 3.3.1, Figure 2). The
 * peer field holds the Receiver Process of a Send Context or the Sender Process of a Receive Context,
 * as an (AI, PI) name; {@link #ANY} in both halves is Any_Proc, {@link #ANY} as tag is Any_Tag. The
 * completion fields are written by the NIC before the doorbell (DESIGN.md 8, item 3).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                    Peer Process AI                            |
 *  +---------------------------------------------------------------+
 *  |                    Peer Process PI                            |
 *  +---------------------------------------------------------------+
 *  |                    Context Tag                                |
 *  +---------------------------------------------------------------+
 *  |                    Doorbell Flag                              |
 *  +---------------------------------------------------------------+
 *  |                    Size (pages)                               |
 *  +---------------------------------------------------------------+
 *  |                    Buffer Pool Index (-1 = Context Region)    |
 *  +---------------------------------------------------------------+
 *  |                    Len (bytes, 64 bits)                       |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |        Completion: actual source AI          (NIC writes)     |
 *  +---------------------------------------------------------------+
 *  |        Completion: actual source PI          (NIC writes)     |
 *  +---------------------------------------------------------------+
 *  |        Completion: actual tag                (NIC writes)     |
 *  +---------------------------------------------------------------+
 *  |        Reserved                                               |
 *  +---------------------------------------------------------------+
 *  |        Completion: message length, 64 bits   (NIC writes)     |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |        Reserved to 64 bytes                                   |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class ContextLayout
{
    /** Any_Proc (both halves of the name) and Any_Tag. */
    public static final int ANY = -1;
    /** Buffer Pool Index meaning "the page table is in the Context Region". */
    public static final int NO_BUFFER_POOL = -1;

    public static final int PEER_AI_OFFSET = 0;
    public static final int PEER_PI_OFFSET = PEER_AI_OFFSET + Integer.BYTES;
    public static final int TAG_OFFSET = PEER_PI_OFFSET + Integer.BYTES;
    public static final int DOORBELL_FLAG_OFFSET = TAG_OFFSET + Integer.BYTES;
    public static final int SIZE_OFFSET = DOORBELL_FLAG_OFFSET + Integer.BYTES;
    public static final int BUFFER_POOL_INDEX_OFFSET = SIZE_OFFSET + Integer.BYTES;
    public static final int LEN_OFFSET = BUFFER_POOL_INDEX_OFFSET + Integer.BYTES;
    public static final int SOURCE_AI_OFFSET = LEN_OFFSET + Long.BYTES;
    public static final int SOURCE_PI_OFFSET = SOURCE_AI_OFFSET + Integer.BYTES;
    public static final int SOURCE_TAG_OFFSET = SOURCE_PI_OFFSET + Integer.BYTES;
    public static final int COMPLETION_LENGTH_OFFSET = SOURCE_TAG_OFFSET + 2 * Integer.BYTES;
    public static final int CONTEXT_LENGTH = 64;

    private ContextLayout()
    {
    }

    public static int listLength(final ClusterParameters params)
    {
        return params.contextsPerProcess() * CONTEXT_LENGTH;
    }
}
