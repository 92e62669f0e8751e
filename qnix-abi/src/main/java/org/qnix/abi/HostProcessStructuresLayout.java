package org.qnix.abi;

/**
 * The Host Process Structures (thesis 3.3.2, Figure 3): one host-memory page per registered process,
 * allocated and initialised by the driver at registration step 4 and mapped by the process. Addresses
 * in the NIC Memory Info are SDRAM addresses of the process's VNI. The structures span
 * {@link #pages whole pages}: one for the default M = 32 would not hold a cache line per doorbell.
 *
 * <p>Words two parties write sit on separate cache lines, so that the NIC ringing one doorbell or
 * moving the Command Queue Head does not take the line away from a process spinning on another
 * doorbell or posting a command: the Command Queue Tail and the hints are the process's line, the
 * Head the NIC's, and each doorbell (which both write, in turn, as the hand-off of one operation) a
 * line of its own. The driver writes the NIC Memory Info through {@link NicMemoryInfo}.
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
 *  VNI Status, one cache line per writer (128 bytes):
 *  |  Command Queue Tail (process)                                 |
 *  |  Send Context (process: most probably free)                   |
 *  |  Receive Context (process: most probably free)                |
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+ 128
 *  |  Command Queue Head (NIC, every 8 commands and when empty)    |
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+ 192
 *  Doorbell Array: M Send Doorbells, then M Receive Doorbells.
 *  Each doorbell (one cache line, 64 bytes):
 *  |  Value (Doorbell codes; the futex word)                       |
 *  |  Waiters (non-zero while the process sleeps on Value)         |
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+ 192 + 128M
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
    public static final int NEXT_SEND_CONTEXT_OFFSET = CQ_TAIL_OFFSET + Integer.BYTES;
    public static final int NEXT_RECEIVE_CONTEXT_OFFSET = NEXT_SEND_CONTEXT_OFFSET + Integer.BYTES;
    /** The NIC's word, a cache line after the process's. */
    public static final int CQ_HEAD_OFFSET = VNI_STATUS_OFFSET + Sizes.CACHE_LINE;
    public static final int VNI_STATUS_LENGTH = 2 * Sizes.CACHE_LINE;

    public static final int DOORBELL_ARRAY_OFFSET = VNI_STATUS_OFFSET + VNI_STATUS_LENGTH;
    public static final int DOORBELL_VALUE_OFFSET = 0;
    public static final int DOORBELL_WAITERS_OFFSET = DOORBELL_VALUE_OFFSET + Integer.BYTES;
    public static final int DOORBELL_LENGTH = Sizes.CACHE_LINE;

    /** The most pages the structures may span (ClusterParameters bounds M with it). */
    public static final int MAX_PAGES = 8;

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

    /** @return bytes used for M contexts each way. */
    public static int length(final int contexts)
    {
        return DOORBELL_ARRAY_OFFSET + 2 * contexts * DOORBELL_LENGTH;
    }

    /** @return the whole pages the structures span for M contexts each way: what the driver allocates. */
    public static int pages(final int contexts, final int pageSize)
    {
        return (length(contexts) + pageSize - 1) / pageSize;
    }
}
