package org.qnix.abi;

/**
 * One entry of the NIC Process Table (thesis 3.3.3, Figure 4). Entry {@code i} statically owns VNI
 * {@code i}; its NIC PID on the wire is {@code i + 1} (DESIGN.md 8, item 7). The VNI Info pointers
 * are written when the cluster is created ("pre-initialised when the driver loads the NIC control
 * program"); the driver writes the rest at registration step 5 and clears the PID first at
 * de-registration step 1 (thesis 3.4), so a zero PID is never scheduled. Name, group and the
 * registration state are additions so that tools can show who is registered.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |  PID: OS pid of the owner, 0 = free (driver, release)          |
 *  +---------------------------------------------------------------+
 *  |  Registration State (NIC: 0 free, 1 registering, 2 registered, |
 *  |                      3 failed)                                 |
 *  +---------------------------------------------------------------+
 *  |  Name AI                                       (driver)        |
 *  +---------------------------------------------------------------+
 *  |  Name PI                                       (driver)        |
 *  +---------------------------------------------------------------+
 *  |  Group                                         (driver)        |
 *  +---------------------------------------------------------------+
 *  |  Group Size                                    (driver)        |
 *  +---------------------------------------------------------------+
 *  |  Doorbell Info: Send Doorbell Array address (host, 64 bits)    |
 *  +---------------------------------------------------------------+
 *  |  Doorbell Info: Receive Doorbell Array address (host, 64 bits) |
 *  +---------------------------------------------------------------+
 *  |  Process Command Queue Head address (host, 64 bits)            |
 *  +---------------------------------------------------------------+
 *  |  HPS page address (host, 64 bits)                              |
 *  +---------------------------------------------------------------+
 *  |  VNI Info: Command Queue (SDRAM, 64 bits)                      |
 *  |  VNI Info: Send Context List (SDRAM, 64 bits)                  |
 *  |  VNI Info: Receive Context List (SDRAM, 64 bits)               |
 *  |  VNI Info: Context Regions (SDRAM, 64 bits)                    |
 *  |  VNI Info: Buffer Pool (SDRAM, 64 bits)                        |
 *  +---------------------------------------------------------------+
 *  |  Kind (KIND_QNIX, KIND_VIA)                    (driver)        |
 *  +---------------------------------------------------------------+
 *  |  Reserved                                                      |
 *  +---------------------------------------------------------------+
 *  |  VIA Process Structures address (host, 64 bits; VIA only)      |
 *  +---------------------------------------------------------------+
 *  |  Reserved to 128 bytes                                         |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class ProcessTableLayout
{
    public static final int PID_OFFSET = 0;
    public static final int STATE_OFFSET = PID_OFFSET + Integer.BYTES;
    public static final int NAME_AI_OFFSET = STATE_OFFSET + Integer.BYTES;
    public static final int NAME_PI_OFFSET = NAME_AI_OFFSET + Integer.BYTES;
    public static final int GROUP_OFFSET = NAME_PI_OFFSET + Integer.BYTES;
    public static final int GROUP_SIZE_OFFSET = GROUP_OFFSET + Integer.BYTES;
    public static final int SEND_DOORBELLS_OFFSET = GROUP_SIZE_OFFSET + Integer.BYTES;
    public static final int RECEIVE_DOORBELLS_OFFSET = SEND_DOORBELLS_OFFSET + Long.BYTES;
    public static final int PROCESS_CQ_HEAD_OFFSET = RECEIVE_DOORBELLS_OFFSET + Long.BYTES;
    public static final int HPS_ADDRESS_OFFSET = PROCESS_CQ_HEAD_OFFSET + Long.BYTES;
    public static final int VNI_COMMAND_QUEUE_OFFSET = HPS_ADDRESS_OFFSET + Long.BYTES;
    public static final int VNI_SEND_CONTEXTS_OFFSET = VNI_COMMAND_QUEUE_OFFSET + Long.BYTES;
    public static final int VNI_RECEIVE_CONTEXTS_OFFSET = VNI_SEND_CONTEXTS_OFFSET + Long.BYTES;
    public static final int VNI_CONTEXT_REGIONS_OFFSET = VNI_RECEIVE_CONTEXTS_OFFSET + Long.BYTES;
    public static final int VNI_BUFFER_POOL_OFFSET = VNI_CONTEXT_REGIONS_OFFSET + Long.BYTES;
    /** Whose entry it is: a QNIX process (named, in groups) or a VIA process (issue 14). */
    public static final int KIND_OFFSET = VNI_BUFFER_POOL_OFFSET + Long.BYTES;
    public static final int VIA_STRUCTURES_OFFSET = KIND_OFFSET + 2 * Integer.BYTES;
    public static final int ENTRY_LENGTH = 128;

    public static final int KIND_QNIX = 0;
    public static final int KIND_VIA = 1;

    public static final int STATE_FREE = 0;
    public static final int STATE_REGISTERING = 1;
    public static final int STATE_REGISTERED = 2;
    public static final int STATE_FAILED = 3;

    private ProcessTableLayout()
    {
    }

    /** @return the NIC PID carried on the wire for a Process Table index. */
    public static int nicPid(final int index)
    {
        return index + 1;
    }

    /** @return the Process Table index of a wire NIC PID, or -1 for 0 (system message). */
    public static int index(final int nicPid)
    {
        return nicPid - 1;
    }

    public static String stateName(final int state)
    {
        switch (state)
        {
            case STATE_FREE: return "free";
            case STATE_REGISTERING: return "registering";
            case STATE_REGISTERED: return "registered";
            case STATE_FAILED: return "failed";
            default: return "state " + state;
        }
    }
}
