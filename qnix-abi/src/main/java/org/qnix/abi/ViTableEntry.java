package org.qnix.abi;

import java.lang.invoke.VarHandle;

import org.agrona.concurrent.AtomicBuffer;

/**
 * One entry of the VI table in NIC internal memory ({@link ViaTablesLayout}). The driver writes the
 * first cache line when the VI is created, connected or disconnected, the State last with release;
 * the NIC owns the second line (its progress on the connection) and may move the State from Connected
 * to Error with a compare-and-set, the only word both write. The Generation, in the NIC's line since the
 * driver's is full, is the driver's too, written only by {@link #create} before the State, while the
 * NIC has no connection on the entry to write its words for: it tells the NIC that the entry holds
 * another VI than the one its posted work belongs to, when owner and connection id (0 while Idle) are
 * the same (a VI destroyed while Idle and made again for the same process). A VI's index in the table is its VI
 * number on the wire ({@link ViaPacketHeader#destinationVi}).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+ 0   driver's line
 *  |  State (FREE, IDLE, PENDING, CONNECTED, ERROR; release)       |
 *  +---------------------------------------------------------------+ 4
 *  |  Owner: Process Table index of the VIA process                |
 *  +---------------------------------------------------------------+ 8
 *  |  Ptag                                                         |
 *  +---------------------------------------------------------------+ 12
 *  |  Attributes (ATTRIBUTE_RDMA_WRITE, ATTRIBUTE_RDMA_READ)       |
 *  +---------------------------------------------------------------+ 16
 *  |  Reliability level (vipl.h values 1, 2, 4)                    |
 *  +---------------------------------------------------------------+ 20
 *  |  Max transfer size                                            |
 *  +---------------------------------------------------------------+ 24
 *  |  Send CQ (CQ table index, or NO_CQ)                           |
 *  +---------------------------------------------------------------+ 28
 *  |  Receive CQ (CQ table index, or NO_CQ)                        |
 *  +---------------------------------------------------------------+ 32
 *  |  Connection id (0 while not connected)                        |
 *  +---------------------------------------------------------------+ 36
 *  |  Peer NIC (packed coordinates)                                |
 *  +---------------------------------------------------------------+ 40
 *  |  Peer VI (index in the peer NIC's VI table)                   |
 *  +---------------------------------------------------------------+ 44
 *  |  Peer NIC PID                                                 |
 *  +---------------------------------------------------------------+ 48
 *  |  Send completion line (host address, 64 bits)                 |
 *  +---------------------------------------------------------------+ 56
 *  |  Receive completion line (host address, 64 bits)              |
 *  +---------------------------------------------------------------+ 64  NIC's line
 *  |  Next send sequence number                                    |
 *  +---------------------------------------------------------------+ 68
 *  |  Next receive sequence number expected                        |
 *  +---------------------------------------------------------------+ 72
 *  |  Messages dropped (Unreliable, no receive posted)             |
 *  +---------------------------------------------------------------+ 76
 *  |  Generation (the driver's: one more at each create)           |
 *  +---------------------------------------------------------------+
 *  |  Reserved to 128 bytes                                        |
 *  +---------------------------------------------------------------+ 128
 * </pre>
 *
 * <pre>{@code
 * ViTableEntry vi = new ViTableEntry().wrap(sdram, (int)via.viOffset(index));
 * if (ViTableEntry.STATE_CONNECTED == vi.state() && vi.ptag() == region.ptag()) { ... }
 * }</pre>
 */
public final class ViTableEntry
{
    public static final int STATE_OFFSET = 0;
    public static final int OWNER_OFFSET = STATE_OFFSET + Integer.BYTES;
    public static final int PTAG_OFFSET = OWNER_OFFSET + Integer.BYTES;
    public static final int ATTRIBUTES_OFFSET = PTAG_OFFSET + Integer.BYTES;
    public static final int RELIABILITY_OFFSET = ATTRIBUTES_OFFSET + Integer.BYTES;
    public static final int MAX_TRANSFER_OFFSET = RELIABILITY_OFFSET + Integer.BYTES;
    public static final int SEND_CQ_OFFSET = MAX_TRANSFER_OFFSET + Integer.BYTES;
    public static final int RECEIVE_CQ_OFFSET = SEND_CQ_OFFSET + Integer.BYTES;
    public static final int CONNECTION_ID_OFFSET = RECEIVE_CQ_OFFSET + Integer.BYTES;
    public static final int PEER_NIC_OFFSET = CONNECTION_ID_OFFSET + Integer.BYTES;
    public static final int PEER_VI_OFFSET = PEER_NIC_OFFSET + Integer.BYTES;
    public static final int PEER_NIC_PID_OFFSET = PEER_VI_OFFSET + Integer.BYTES;
    public static final int SEND_COMPLETION_OFFSET = PEER_NIC_PID_OFFSET + Integer.BYTES;
    public static final int RECEIVE_COMPLETION_OFFSET = SEND_COMPLETION_OFFSET + Long.BYTES;
    public static final int DRIVER_LINE_END = RECEIVE_COMPLETION_OFFSET + Long.BYTES;

    /** The NIC's words, a cache line after the driver's. */
    public static final int SEND_SEQUENCE_OFFSET = Sizes.CACHE_LINE;
    public static final int RECEIVE_SEQUENCE_OFFSET = SEND_SEQUENCE_OFFSET + Integer.BYTES;
    public static final int DROPPED_OFFSET = RECEIVE_SEQUENCE_OFFSET + Integer.BYTES;
    public static final int GENERATION_OFFSET = DROPPED_OFFSET + Integer.BYTES;
    public static final int LENGTH = 2 * Sizes.CACHE_LINE;

    public static final int STATE_FREE = 0;
    public static final int STATE_IDLE = 1;
    public static final int STATE_PENDING = 2;
    public static final int STATE_CONNECTED = 3;
    public static final int STATE_ERROR = 4;

    /** vipl.h VIP_SERVICE_* values, a bit each, so a set of supported levels is a mask. */
    public static final int UNRELIABLE = 1;
    public static final int RELIABLE_DELIVERY = 2;
    public static final int RELIABLE_RECEPTION = 4;
    public static final int RELIABILITY_LEVELS = UNRELIABLE | RELIABLE_DELIVERY | RELIABLE_RECEPTION;

    public static final int ATTRIBUTE_RDMA_WRITE = 0x1;
    public static final int ATTRIBUTE_RDMA_READ = 0x2;

    public static final int NO_CQ = -1;

    private AtomicBuffer buffer;
    private int offset;

    public ViTableEntry wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** @return the State (acquire). Writers: the driver, with release; the NIC, Connected to Error only. */
    public int state()
    {
        return buffer.getIntVolatile(offset + STATE_OFFSET);
    }

    /**
     * The NIC's second look, after it read words of the entry (a completion line, a CQ number) for the VI
     * whose State it read first as {@code state}: the driver may free the entry and make another VI in it
     * at any time, and a word of the newer VI must not be taken for the older one's.
     *
     * @return true if the State is still {@code state}; the caller then compares the Generation, which a
     * newer VI publishes before its State.
     */
    public boolean isStill(final int state)
    {
        // The words are read before this look: one the driver wrote for a newer VI implies, by its fence,
        // that the Free before it is seen here, or the newer VI's State and Generation.
        VarHandle.loadLoadFence();
        return buffer.getIntVolatile(offset + STATE_OFFSET) == state;
    }

    /** Driver side: the State after the entry's other fields; readers are the NIC and `cluster status`. */
    public void publishState(final int state)
    {
        buffer.putIntRelease(offset + STATE_OFFSET, state);
    }

    /** NIC side: Connected to Error, unless the driver changed the State meanwhile. */
    public boolean breakConnection()
    {
        return buffer.compareAndSetInt(offset + STATE_OFFSET, STATE_CONNECTED, STATE_ERROR);
    }

    /**
     * Driver side: a new VI, Idle, every field written before the State; the NIC's line is cleared too,
     * so nothing of the entry's previous VI survives, and the Generation is one more than the previous
     * VI's, so the NIC drops the previous VI's work even when the new one has its owner.
     */
    public void create(final int owner, final int ptag, final int attributes, final int reliability,
        final int maxTransfer, final int sendCq, final int receiveCq, final long sendCompletion,
        final long receiveCompletion)
    {
        final int generation = buffer.getInt(offset + GENERATION_OFFSET) + 1;
        // The entry was freed (State Free, with release) before: none of the new VI's words may be seen
        // before that, so that a NIC that reads one sees the State change when it looks again (isStill).
        VarHandle.storeStoreFence();
        buffer.setMemory(offset + Integer.BYTES, LENGTH - Integer.BYTES, (byte)0);
        buffer.putInt(offset + GENERATION_OFFSET, generation);
        buffer.putInt(offset + OWNER_OFFSET, owner);
        buffer.putInt(offset + PTAG_OFFSET, ptag);
        buffer.putInt(offset + ATTRIBUTES_OFFSET, attributes);
        buffer.putInt(offset + RELIABILITY_OFFSET, reliability);
        buffer.putInt(offset + MAX_TRANSFER_OFFSET, maxTransfer);
        buffer.putInt(offset + SEND_CQ_OFFSET, sendCq);
        buffer.putInt(offset + RECEIVE_CQ_OFFSET, receiveCq);
        buffer.putLong(offset + SEND_COMPLETION_OFFSET, sendCompletion);
        buffer.putLong(offset + RECEIVE_COMPLETION_OFFSET, receiveCompletion);
        publishState(STATE_IDLE);
    }

    /** Driver side: the connection the daemon matched, then the State (Connected). */
    public void connect(final int connectionId, final int peerNic, final int peerVi, final int peerNicPid)
    {
        buffer.putInt(offset + CONNECTION_ID_OFFSET, connectionId);
        buffer.putInt(offset + PEER_NIC_OFFSET, peerNic);
        buffer.putInt(offset + PEER_VI_OFFSET, peerVi);
        buffer.putInt(offset + PEER_NIC_PID_OFFSET, peerNicPid);
        buffer.putInt(offset + SEND_SEQUENCE_OFFSET, 0);
        buffer.putInt(offset + RECEIVE_SEQUENCE_OFFSET, 0);
        publishState(STATE_CONNECTED);
    }

    /** Driver side: {@code VipDisconnect}; the connection forgotten, the State Idle. */
    public void disconnect()
    {
        buffer.putInt(offset + CONNECTION_ID_OFFSET, 0);
        buffer.putInt(offset + PEER_NIC_OFFSET, 0);
        buffer.putInt(offset + PEER_VI_OFFSET, 0);
        buffer.putInt(offset + PEER_NIC_PID_OFFSET, 0);
        publishState(STATE_IDLE);
    }

    /**
     * @return which VI of the entry this is: one more at each {@link #create}. Writer: the driver,
     * before the State (release), so it is read after {@link #state()}.
     */
    public int generation()
    {
        return buffer.getInt(offset + GENERATION_OFFSET);
    }

    public int owner()
    {
        return buffer.getInt(offset + OWNER_OFFSET);
    }

    public int ptag()
    {
        return buffer.getInt(offset + PTAG_OFFSET);
    }

    public int attributes()
    {
        return buffer.getInt(offset + ATTRIBUTES_OFFSET);
    }

    public int reliability()
    {
        return buffer.getInt(offset + RELIABILITY_OFFSET);
    }

    public int maxTransfer()
    {
        return buffer.getInt(offset + MAX_TRANSFER_OFFSET);
    }

    public int sendCq()
    {
        return buffer.getInt(offset + SEND_CQ_OFFSET);
    }

    public int receiveCq()
    {
        return buffer.getInt(offset + RECEIVE_CQ_OFFSET);
    }

    public int connectionId()
    {
        return buffer.getInt(offset + CONNECTION_ID_OFFSET);
    }

    public int peerNic()
    {
        return buffer.getInt(offset + PEER_NIC_OFFSET);
    }

    public int peerVi()
    {
        return buffer.getInt(offset + PEER_VI_OFFSET);
    }

    public int peerNicPid()
    {
        return buffer.getInt(offset + PEER_NIC_PID_OFFSET);
    }

    public long sendCompletion()
    {
        return buffer.getLong(offset + SEND_COMPLETION_OFFSET);
    }

    public long receiveCompletion()
    {
        return buffer.getLong(offset + RECEIVE_COMPLETION_OFFSET);
    }

    public int sendSequence()
    {
        return buffer.getInt(offset + SEND_SEQUENCE_OFFSET);
    }

    public int receiveSequence()
    {
        return buffer.getInt(offset + RECEIVE_SEQUENCE_OFFSET);
    }

    /** NIC side: the sequence number the next message sent on the connection goes out under. */
    public void sendSequence(final int sequence)
    {
        buffer.putInt(offset + SEND_SEQUENCE_OFFSET, sequence);
    }

    /** NIC side: the sequence number of the next message expected on the connection. */
    public void receiveSequence(final int sequence)
    {
        buffer.putInt(offset + RECEIVE_SEQUENCE_OFFSET, sequence);
    }

    /** @return the messages dropped (acquire). Writer: the NIC, with release; readers: tools. */
    public int dropped()
    {
        return buffer.getIntVolatile(offset + DROPPED_OFFSET);
    }

    /** NIC side: one more message dropped (Unreliable, no receive posted). */
    public void countDropped()
    {
        buffer.putIntRelease(offset + DROPPED_OFFSET, buffer.getInt(offset + DROPPED_OFFSET) + 1);
    }

    public static String stateName(final int state)
    {
        switch (state)
        {
            case STATE_FREE: return "free";
            case STATE_IDLE: return "idle";
            case STATE_PENDING: return "connect pending";
            case STATE_CONNECTED: return "connected";
            case STATE_ERROR: return "error";
            default: return "state " + state;
        }
    }
}
