package org.qnix.abi;

/**
 * The VIA Process Structures: host memory the driver allocates for a VIA process at its registration,
 * locked for the process's life and mapped by it (beside the Host Process Structures, whose Command
 * Queue Tail and Head the VIA posts use). They hold the words the NIC writes for the process and the
 * process waits on: a completion counter per work queue of each of its VIs, each with its futex
 * waiters word, and the asynchronous-error ring ({@code VipErrorCallback}). The VI table entry names
 * its two completion lines ({@link ViTableEntry#SEND_COMPLETION_OFFSET}); a process's VI number
 * {@code v} (0 .. {@link #MAX_VIS} - 1) is the position of its lines here.
 *
 * <p>As in the Host Process Structures, words two parties write are on separate cache lines; a
 * completion line's counter (NIC, release, after the descriptor's status) and waiters (process) are
 * the hand-off of one queue, like a doorbell's value and waiters.
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  Async events Tail (NIC, release)  |  Waiters (process)       |
 *  |  Async events overflowed (NIC)     |  Reserved to 64 bytes    |
 *  +---------------------------------------------------------------+ 64
 *  |  Async events Head (process)       |  Close requested (process)  |
 *  |  Reserved to 64 bytes                                           |
 *  +---------------------------------------------------------------+ 128
 *  Completion lines, two per VI number v (send at 2v, receive at 2v+1), 64 bytes each:
 *  |  Completed descriptors (NIC, release; the futex word)         |
 *  |  Waiters (process: non-zero while it sleeps on the counter)   |
 *  |  Reserved to 64 bytes                                         |
 *  +---------------------------------------------------------------+ 128 + 128 x MAX_VIS
 *  Async event ring, ASYNC_EVENTS entries of 32 bytes:
 *  |  VI  | CQ | descriptor handle | descriptor offset |           |
 *  |  op  | resource code | error code | Valid (NIC, release, last)|
 *  +---------------------------------------------------------------+ length()
 * </pre>
 *
 * <p>Close requested is non-zero once the process's {@code close()} wants the driver's connection waits
 * of the process (VipConnectWait, VipConnectRequest, VipConnectPeerWait) to end: the driver looks at it
 * while it waits, as it looks at the process's life, and ends them {@code INVALID_STATE}. The process
 * then de-registers over the same connection, after it has retired its mappings of the pages the
 * de-registration frees. It concerns the process's own waits only: any value a process writes there
 * ends nothing else.
 *
 * <p>An event's CQ is -1 unless it is about a CQ (its overflow); its descriptor handle, offset and op
 * (the completion status op bits, {@code ViplDescriptor.STATUS_OP_MASK}) are 0 unless it is about a
 * descriptor ({@code RESOURCE_DESCRIPTOR}). Both parties use the event ring through {@link
 * AsyncEventRing}.
 */
public final class ViaProcessStructuresLayout
{
    /** The most VIs one process holds. */
    public static final int MAX_VIS = 64;
    public static final int ASYNC_EVENTS = 64;

    public static final int ASYNC_TAIL_OFFSET = 0;
    public static final int ASYNC_WAITERS_OFFSET = ASYNC_TAIL_OFFSET + Integer.BYTES;
    public static final int ASYNC_OVERFLOWED_OFFSET = ASYNC_WAITERS_OFFSET + Integer.BYTES;
    public static final int ASYNC_HEAD_OFFSET = Sizes.CACHE_LINE;
    public static final int CLOSE_REQUESTED_OFFSET = ASYNC_HEAD_OFFSET + Integer.BYTES;

    public static final int COMPLETIONS_OFFSET = 2 * Sizes.CACHE_LINE;
    public static final int COMPLETION_COUNTER_OFFSET = 0;
    public static final int COMPLETION_WAITERS_OFFSET = COMPLETION_COUNTER_OFFSET + Integer.BYTES;
    public static final int COMPLETION_LENGTH = Sizes.CACHE_LINE;

    public static final int ASYNC_RING_OFFSET = COMPLETIONS_OFFSET + 2 * MAX_VIS * COMPLETION_LENGTH;
    public static final int EVENT_VI_OFFSET = 0;
    public static final int EVENT_CQ_OFFSET = EVENT_VI_OFFSET + Integer.BYTES;
    public static final int EVENT_DESCRIPTOR_HANDLE_OFFSET = EVENT_CQ_OFFSET + Integer.BYTES;
    public static final int EVENT_DESCRIPTOR_OFFSET_OFFSET = EVENT_DESCRIPTOR_HANDLE_OFFSET + Integer.BYTES;
    public static final int EVENT_OP_OFFSET = EVENT_DESCRIPTOR_OFFSET_OFFSET + Integer.BYTES;
    public static final int EVENT_RESOURCE_OFFSET = EVENT_OP_OFFSET + Integer.BYTES;
    public static final int EVENT_ERROR_OFFSET = EVENT_RESOURCE_OFFSET + Integer.BYTES;
    public static final int EVENT_VALID_OFFSET = EVENT_ERROR_OFFSET + Integer.BYTES;
    public static final int EVENT_LENGTH = EVENT_VALID_OFFSET + Integer.BYTES;

    public static final int LENGTH = ASYNC_RING_OFFSET + ASYNC_EVENTS * EVENT_LENGTH;

    // Resource codes (vipl.h VIP_RESOURCE_*) and error codes (VIP_ERROR_*) of an async event.
    public static final int RESOURCE_NIC = 0;
    public static final int RESOURCE_VI = 1;
    public static final int RESOURCE_CQ = 2;
    public static final int RESOURCE_DESCRIPTOR = 3;

    public static final int ERROR_POST_DESC = 0;
    public static final int ERROR_CONN_LOST = 1;
    public static final int ERROR_RECVQ_EMPTY = 2;
    public static final int ERROR_VI_OVERRUN = 3;
    public static final int ERROR_RDMAW_PROT = 4;
    public static final int ERROR_RDMAW_DATA = 5;
    public static final int ERROR_RDMAW_ABORT = 6;
    public static final int ERROR_RDMAR_PROT = 7;
    public static final int ERROR_COMP_PROT = 8;
    public static final int ERROR_RDMA_TRANSPORT = 9;
    public static final int ERROR_CATASTROPHIC = 10;

    private ViaProcessStructuresLayout()
    {
    }

    /** @return the offset of VI number {@code v}'s send completion line. */
    public static int sendCompletionOffset(final int v)
    {
        return COMPLETIONS_OFFSET + 2 * v * COMPLETION_LENGTH;
    }

    /** @return the offset of VI number {@code v}'s receive completion line. */
    public static int receiveCompletionOffset(final int v)
    {
        return sendCompletionOffset(v) + COMPLETION_LENGTH;
    }

    /**
     * @return whether {@code offset} from the structures' start is a completion line's, send or
     * receive, of any VI number: the lines {@link #sendCompletionOffset} and
     * {@link #receiveCompletionOffset} give.
     */
    public static boolean isCompletionOffset(final long offset)
    {
        return offset >= COMPLETIONS_OFFSET && offset < ASYNC_RING_OFFSET &&
            0 == (offset - COMPLETIONS_OFFSET) % COMPLETION_LENGTH;
    }

    public static int asyncEventOffset(final int n)
    {
        return ASYNC_RING_OFFSET + (n % ASYNC_EVENTS) * EVENT_LENGTH;
    }

    /** @return the whole pages the structures span: what the driver allocates. */
    public static int pages(final int pageSize)
    {
        return (LENGTH + pageSize - 1) / pageSize;
    }
}
