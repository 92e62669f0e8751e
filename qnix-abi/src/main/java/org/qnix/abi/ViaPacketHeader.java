package org.qnix.abi;

import org.agrona.MutableDirectBuffer;

/**
 * The VIA header every VIA packet carries after its 16-byte {@link PacketHeader}. VIA needs no
 * permission handshake (issue 14): a packet says which connection and message it belongs to and where
 * its bytes go, and the receiving NIC checks it against its own VI table. The {@link PacketHeader}'s
 * PIDs are the VIA processes' NIC PIDs and its Context Tag is 0; its Packet Length counts this header
 * and the payload.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+ 0
 *  |  Destination VI (index in the receiving NIC's VI table)       |
 *  +---------------------------------------------------------------+ 4
 *  |  Connection id (the receiver drops a packet of another one)   |
 *  +---------------------------------------------------------------+ 8
 *  |  Sequence number (message number on the connection, per       |
 *  |  direction, from 0)                                           |
 *  +-------------------------------+-------------------------------+ 12
 *  |  Op (OP_*)                    |  Flags (FIRST, LAST,          |
 *  |                               |  IMMEDIATE)                   |
 *  +-------------------------------+-------------------------------+ 16
 *  |  Immediate data                                               |
 *  +---------------------------------------------------------------+ 20
 *  |  Message length (bytes of the whole message)                  |
 *  +---------------------------------------------------------------+ 24
 *  |  Message offset (where this packet's payload starts in it)    |
 *  +---------------------------------------------------------------+ 28
 *  |  Remote memory handle (RDMA: the target region)               |
 *  +---------------------------------------------------------------+ 32
 *  |  Remote address (RDMA: the target's first byte, 64 bits)      |
 *  +---------------------------------------------------------------+ 40
 * </pre>
 *
 * <pre>{@code
 * ViaPacketHeader via = new ViaPacketHeader().wrap(buffer, offset + PacketHeader.LENGTH);
 * via.destinationVi(vi).connectionId(id).sequence(seq).op(ViaPacketHeader.OP_SEND).flags(FLAG_FIRST);
 * }</pre>
 */
public final class ViaPacketHeader
{
    public static final int DESTINATION_VI_OFFSET = 0;
    public static final int CONNECTION_ID_OFFSET = DESTINATION_VI_OFFSET + Integer.BYTES;
    public static final int SEQUENCE_OFFSET = CONNECTION_ID_OFFSET + Integer.BYTES;
    public static final int OP_OFFSET = SEQUENCE_OFFSET + Integer.BYTES;
    public static final int FLAGS_OFFSET = OP_OFFSET + Short.BYTES;
    public static final int IMMEDIATE_DATA_OFFSET = FLAGS_OFFSET + Short.BYTES;
    public static final int MESSAGE_LENGTH_OFFSET = IMMEDIATE_DATA_OFFSET + Integer.BYTES;
    public static final int MESSAGE_OFFSET_OFFSET = MESSAGE_LENGTH_OFFSET + Integer.BYTES;
    public static final int REMOTE_HANDLE_OFFSET = MESSAGE_OFFSET_OFFSET + Integer.BYTES;
    public static final int REMOTE_ADDRESS_OFFSET = REMOTE_HANDLE_OFFSET + Integer.BYTES;
    public static final int LENGTH = REMOTE_ADDRESS_OFFSET + Long.BYTES;

    /** Send/receive data: consumes the head receive descriptor at the first packet. */
    public static final int OP_SEND = 1;
    /** RDMA write data into the remote region; with IMMEDIATE it also consumes a receive descriptor. */
    public static final int OP_RDMA_WRITE = 2;
    /** RDMA read request: no payload; the length and remote region name what to read. */
    public static final int OP_RDMA_READ_REQUEST = 3;
    /** RDMA read response data, back to the requester's local segments. */
    public static final int OP_RDMA_READ_RESPONSE = 4;
    /** Reliable Reception: the receive of sequence number n completed (no payload). */
    public static final int OP_ACK = 5;
    /** The receiver broke the connection (reliable levels): the sender's VI goes to Error. */
    public static final int OP_ERROR = 6;

    public static final int FLAG_FIRST = 0x1;
    public static final int FLAG_LAST = 0x2;
    public static final int FLAG_IMMEDIATE = 0x4;

    private MutableDirectBuffer buffer;
    private int offset;

    public ViaPacketHeader wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int destinationVi()
    {
        return buffer.getInt(offset + DESTINATION_VI_OFFSET);
    }

    public ViaPacketHeader destinationVi(final int vi)
    {
        buffer.putInt(offset + DESTINATION_VI_OFFSET, vi);
        return this;
    }

    public int connectionId()
    {
        return buffer.getInt(offset + CONNECTION_ID_OFFSET);
    }

    public ViaPacketHeader connectionId(final int id)
    {
        buffer.putInt(offset + CONNECTION_ID_OFFSET, id);
        return this;
    }

    public int sequence()
    {
        return buffer.getInt(offset + SEQUENCE_OFFSET);
    }

    public ViaPacketHeader sequence(final int sequence)
    {
        buffer.putInt(offset + SEQUENCE_OFFSET, sequence);
        return this;
    }

    public int op()
    {
        return buffer.getShort(offset + OP_OFFSET) & 0xFFFF;
    }

    public ViaPacketHeader op(final int op)
    {
        buffer.putShort(offset + OP_OFFSET, (short)op);
        return this;
    }

    public int flags()
    {
        return buffer.getShort(offset + FLAGS_OFFSET) & 0xFFFF;
    }

    public ViaPacketHeader flags(final int flags)
    {
        buffer.putShort(offset + FLAGS_OFFSET, (short)flags);
        return this;
    }

    public int immediateData()
    {
        return buffer.getInt(offset + IMMEDIATE_DATA_OFFSET);
    }

    public ViaPacketHeader immediateData(final int data)
    {
        buffer.putInt(offset + IMMEDIATE_DATA_OFFSET, data);
        return this;
    }

    public int messageLength()
    {
        return buffer.getInt(offset + MESSAGE_LENGTH_OFFSET);
    }

    public ViaPacketHeader messageLength(final int length)
    {
        buffer.putInt(offset + MESSAGE_LENGTH_OFFSET, length);
        return this;
    }

    public int messageOffset()
    {
        return buffer.getInt(offset + MESSAGE_OFFSET_OFFSET);
    }

    public ViaPacketHeader messageOffset(final int messageOffset)
    {
        buffer.putInt(offset + MESSAGE_OFFSET_OFFSET, messageOffset);
        return this;
    }

    public int remoteHandle()
    {
        return buffer.getInt(offset + REMOTE_HANDLE_OFFSET);
    }

    public ViaPacketHeader remoteHandle(final int handle)
    {
        buffer.putInt(offset + REMOTE_HANDLE_OFFSET, handle);
        return this;
    }

    public long remoteAddress()
    {
        return buffer.getLong(offset + REMOTE_ADDRESS_OFFSET);
    }

    public ViaPacketHeader remoteAddress(final long address)
    {
        buffer.putLong(offset + REMOTE_ADDRESS_OFFSET, address);
        return this;
    }

    public static String opName(final int op)
    {
        switch (op)
        {
            case OP_SEND: return "Send";
            case OP_RDMA_WRITE: return "RDMA_Write";
            case OP_RDMA_READ_REQUEST: return "RDMA_Read_Request";
            case OP_RDMA_READ_RESPONSE: return "RDMA_Read_Response";
            case OP_ACK: return "Ack";
            case OP_ERROR: return "Error";
            default: return "ViaOp(" + op + ")";
        }
    }
}
