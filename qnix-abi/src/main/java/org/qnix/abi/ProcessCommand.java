package org.qnix.abi;

/**
 * Process Command Queue codes (thesis 3.3.1 and 3.5.2). Zero marks an empty entry. A Multicast or
 * Multicast_Short entry is followed by the receivers' names, two per entry, in entries that carry no
 * command code of their own ({@link CommandQueueLayout#namesEntries}; DESIGN.md 8, item 8).
 */
public final class ProcessCommand
{
    public static final int NONE = 0;
    public static final int SEND = 1;
    public static final int SEND_SHORT = 2;
    public static final int BROADCAST = 3;
    public static final int BROADCAST_SHORT = 4;
    public static final int MULTICAST = 5;
    public static final int MULTICAST_SHORT = 6;
    public static final int JOIN_GROUP = 7;
    public static final int RECEIVE = 8;
    public static final int BARRIER = 9;
    /**
     * VIA (issue 14): post a descriptor to a VI's send queue. Context = the VI (its NIC VI table index),
     * Group = the descriptor's memory handle, Size = the descriptor's offset from that region's base.
     */
    public static final int VIA_POST_SEND = 10;
    /** VIA: post a descriptor to a VI's receive queue; the fields as {@link #VIA_POST_SEND}'s. */
    public static final int VIA_POST_RECV = 11;

    private ProcessCommand()
    {
    }

    public static String name(final int code)
    {
        switch (code)
        {
            case NONE: return "None";
            case SEND: return "Send";
            case SEND_SHORT: return "Send_Short";
            case BROADCAST: return "Broadcast";
            case BROADCAST_SHORT: return "Broadcast_Short";
            case MULTICAST: return "Multicast";
            case MULTICAST_SHORT: return "Multicast_Short";
            case JOIN_GROUP: return "Join_Group";
            case RECEIVE: return "Receive";
            case BARRIER: return "Barrier";
            case VIA_POST_SEND: return "VIA_Post_Send";
            case VIA_POST_RECV: return "VIA_Post_Recv";
            default: return "ProcessCommand(" + code + ")";
        }
    }
}
