package org.qnix.abi;

/** Driver Command Queue codes (thesis 3.3.3 and 3.5.3). Zero marks an empty entry. */
public final class DriverCommand
{
    public static final int NONE = 0;
    public static final int NEW_PROCESS = 1;
    public static final int DELETE_PROCESS = 2;
    /**
     * VIA (issue 14): the Process Table entry Index is a VIA process's (PID as New_Process's): the NIC
     * makes it active so that its Command Queue is scanned, and sets it registered at once. No
     * New_Process or New_Group is broadcast: a VIA process has no QNIX name, and its peers learn of
     * it only through connections the daemon makes.
     */
    public static final int NEW_VIA_PROCESS = 3;
    /** VIA: the VIA process of entry Index is gone; the NIC drops its work, and nothing is broadcast. */
    public static final int DELETE_VIA_PROCESS = 4;
    /**
     * VIA: the connection manager matched VI Index (a Connect Pending or Idle VI of the VIA process in
     * Process Table entry Size) with a peer: the NIC writes the connection into the VI entry and makes
     * it Connected. The fields are reused: PID = the connection id, Name AI = the peer NIC (packed
     * coordinates), Name PI = the peer VI, Group = the peer's NIC PID. Like Via_Disconnect and
     * Via_Connection_Lost it carries the VI's Generation, and the NIC refuses it (Bad Command) if the
     * entry holds another VI by then: a command the driver gave up on, when the NIC was silent, must
     * not reach a VI made again in the same entry ({@link DriverCommandQueueLayout#GENERATION_OFFSET}).
     */
    public static final int VIA_CONNECT = 5;
    /** VIA: VI Index of entry Size is disconnected: the NIC ends its work on it and makes it Idle. */
    public static final int VIA_DISCONNECT = 6;
    /**
     * VIA: the peer of VI Index (entry Size) went away: Connected becomes Error if the VI is still on
     * connection PID (a VI already reused for another connection is left alone).
     */
    public static final int VIA_CONNECTION_LOST = 7;
    /**
     * VIA ({@code VipResizeCQ}): CQ Index of the VIA process in entry Size moves to a new ring. The NIC
     * applies it between two of its appends, so no completion is lost: it copies the entries queued in
     * the old ring to the same sequence positions of the new one, gives the new ring the old one's Head,
     * Tail and Overflowed, and makes the CQ table entry name the new ring. Fields reused: PID = the new
     * ring's entries, Name AI = the new ring's host address, Name PI = the old ring's; the Generation is
     * the CQ table entry's (a command for a CQ destroyed and made again meanwhile is a Bad Command).
     * No Resources if the old ring holds more entries than the new one can.
     */
    public static final int VIA_RESIZE_CQ = 8;

    private DriverCommand()
    {
    }

    public static String name(final int code)
    {
        switch (code)
        {
            case NONE: return "None";
            case NEW_PROCESS: return "New_Process";
            case DELETE_PROCESS: return "Delete_Process";
            case NEW_VIA_PROCESS: return "New_Via_Process";
            case DELETE_VIA_PROCESS: return "Delete_Via_Process";
            case VIA_CONNECT: return "Via_Connect";
            case VIA_DISCONNECT: return "Via_Disconnect";
            case VIA_CONNECTION_LOST: return "Via_Connection_Lost";
            case VIA_RESIZE_CQ: return "Via_Resize_Cq";
            default: return "DriverCommand(" + code + ")";
        }
    }
}
