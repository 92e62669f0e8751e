package org.qnix.abi;

/**
 * The Driver Command Queue and the Driver Info (thesis 3.3.3, Figure 7), in NIC SDRAM. The driver
 * writes an entry's fields and then its Command with release semantics; the NIC control program
 * reads the Command with acquire semantics, executes it, and writes zero back. Completion is reported
 * in the Driver Doorbell of the same position (in host memory, {@link HostMemoryLayout}).
 *
 * <pre>
 *  Entry (32 bytes):
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |  Command (DriverCommand code; 0 = empty)                      |
 *  +---------------------------------------------------------------+
 *  |  Name AI                                                      |
 *  +---------------------------------------------------------------+
 *  |  Name PI                                                      |
 *  +---------------------------------------------------------------+
 *  |  PID (OS pid)                                                 |
 *  +---------------------------------------------------------------+
 *  |  Index (NIC Process Table position)                           |
 *  +---------------------------------------------------------------+
 *  |  Group                                                        |
 *  +---------------------------------------------------------------+
 *  |  Size (processes in the group)                                |
 *  +---------------------------------------------------------------+
 *  |  Generation (VIA: the VI's or the CQ's; else 0)               |
 *  +---------------------------------------------------------------+
 *
 *  Driver Info (64 bytes), after D entries:
 *  +---------------------------------------------------------------+
 *  |  NIC Driver Command Queue Head (NIC-private progress)         |
 *  +---------------------------------------------------------------+
 *  |  Reserved                                                     |
 *  +---------------------------------------------------------------+
 *  |  Driver Command Queue Head Pointer (host address, 64 bits)    |
 *  +---------------------------------------------------------------+
 *  |  Driver Doorbell Array Pointer (host address, 64 bits)        |
 *  +---------------------------------------------------------------+
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class DriverCommandQueueLayout
{
    public static final int COMMAND_OFFSET = 0;
    public static final int NAME_AI_OFFSET = COMMAND_OFFSET + Integer.BYTES;
    public static final int NAME_PI_OFFSET = NAME_AI_OFFSET + Integer.BYTES;
    public static final int PID_OFFSET = NAME_PI_OFFSET + Integer.BYTES;
    public static final int INDEX_OFFSET = PID_OFFSET + Integer.BYTES;
    public static final int GROUP_OFFSET = INDEX_OFFSET + Integer.BYTES;
    public static final int SIZE_OFFSET = GROUP_OFFSET + Integer.BYTES;
    /**
     * The Generation of the VI a Via_Connect, Via_Disconnect or Via_Connection_Lost is for
     * ({@link ViTableEntry#generation()}), or of the CQ of a Via_Resize_Cq
     * ({@link CqTableEntry#generation()}), read by the driver when it posts the command: the NIC refuses
     * the command if the entry holds another VI or CQ by the time it takes it (the driver may have given
     * up on a silent NIC, written the entry itself, and destroyed and made the VI again meanwhile).
     */
    public static final int GENERATION_OFFSET = SIZE_OFFSET + Integer.BYTES;
    public static final int ENTRY_LENGTH = GENERATION_OFFSET + Integer.BYTES;

    public static final int INFO_NIC_HEAD_OFFSET = 0;
    public static final int INFO_DRIVER_HEAD_POINTER_OFFSET = 8;
    public static final int INFO_DOORBELL_ARRAY_POINTER_OFFSET = INFO_DRIVER_HEAD_POINTER_OFFSET + Long.BYTES;
    public static final int INFO_LENGTH = 64;

    private DriverCommandQueueLayout()
    {
    }

    public static int length(final ClusterParameters params)
    {
        return params.driverCommandQueueEntries() * ENTRY_LENGTH + INFO_LENGTH;
    }
}
