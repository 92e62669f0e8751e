package org.qnix.abi;

/**
 * The Host Process Structures (thesis 3.3.2, Figure 3): one host-memory page per registered process,
 * allocated and initialised by the driver at registration step 4 and mapped by the process. Addresses
 * in the NIC Memory Info are SDRAM addresses of the process's VNI.
 *
 * <pre>
 *  NIC Memory Info (64 bytes, driver):
 *  +---------------------------------------------------------------+ 0
 *  |  Command Queue address (SDRAM, 64 bits)                       |
 *  |  Send Context List address (SDRAM, 64 bits)                   |
 *  |  Receive Context List address (SDRAM, 64 bits)                |
 *  |  Context Regions address (SDRAM, 64 bits)                     |
 *  |  Buffer Pool address (SDRAM, 64 bits)                         |
 *  |  VNI length (64 bits)                                         |
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+ 64
 *  VNI Status (64 bytes):
 *  |  Command Queue Tail (process)                                 |
 *  |  Command Queue Head (NIC, every 8 commands and when empty)    |
 *  |  Send Context (process: most probably free)                   |
 *  |  Receive Context (process: most probably free)                |
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+ 128
 *  Doorbell Array: M Send Doorbells, then M Receive Doorbells.
 *  Each doorbell (8 bytes):
 *  |  Value (Doorbell codes; the futex word)                       |
 *  |  Waiters (non-zero while the process sleeps on Value)         |
 *  +---------------------------------------------------------------+ 128 + 16M
 * </pre>
 */
public final class HostProcessStructuresLayout
{
    public static final int COMMAND_QUEUE_ADDRESS_OFFSET = 0;
    public static final int SEND_CONTEXTS_ADDRESS_OFFSET = COMMAND_QUEUE_ADDRESS_OFFSET + Long.BYTES;
    public static final int RECEIVE_CONTEXTS_ADDRESS_OFFSET = SEND_CONTEXTS_ADDRESS_OFFSET + Long.BYTES;
    public static final int CONTEXT_REGIONS_ADDRESS_OFFSET = RECEIVE_CONTEXTS_ADDRESS_OFFSET + Long.BYTES;
    public static final int BUFFER_POOL_ADDRESS_OFFSET = CONTEXT_REGIONS_ADDRESS_OFFSET + Long.BYTES;
    public static final int VNI_LENGTH_OFFSET = BUFFER_POOL_ADDRESS_OFFSET + Long.BYTES;
    public static final int NIC_MEMORY_INFO_LENGTH = 64;

    public static final int VNI_STATUS_OFFSET = NIC_MEMORY_INFO_LENGTH;
    public static final int CQ_TAIL_OFFSET = VNI_STATUS_OFFSET;
    public static final int CQ_HEAD_OFFSET = CQ_TAIL_OFFSET + Integer.BYTES;
    public static final int NEXT_SEND_CONTEXT_OFFSET = CQ_HEAD_OFFSET + Integer.BYTES;
    public static final int NEXT_RECEIVE_CONTEXT_OFFSET = NEXT_SEND_CONTEXT_OFFSET + Integer.BYTES;
    public static final int VNI_STATUS_LENGTH = 64;

    public static final int DOORBELL_ARRAY_OFFSET = VNI_STATUS_OFFSET + VNI_STATUS_LENGTH;
    public static final int DOORBELL_VALUE_OFFSET = 0;
    public static final int DOORBELL_WAITERS_OFFSET = DOORBELL_VALUE_OFFSET + Integer.BYTES;
    public static final int DOORBELL_LENGTH = 8;

    private HostProcessStructuresLayout()
    {
    }

    public static int sendDoorbellOffset(final int context)
    {
        return DOORBELL_ARRAY_OFFSET + context * DOORBELL_LENGTH;
    }

    public static int receiveDoorbellOffset(final int contexts, final int context)
    {
        return DOORBELL_ARRAY_OFFSET + (contexts + context) * DOORBELL_LENGTH;
    }

    /** @return bytes used for M contexts each way; must fit one page. */
    public static int length(final int contexts)
    {
        return DOORBELL_ARRAY_OFFSET + 2 * contexts * DOORBELL_LENGTH;
    }
}
