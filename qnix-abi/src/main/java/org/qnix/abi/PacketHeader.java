package org.qnix.abi;

import org.agrona.MutableDirectBuffer;

/**
 * The 16-byte packet header of thesis 3.5 (TX step 3), little-endian, at the start of every record in
 * an {@code rx.fifo}. A system message has zero in both PID fields and its code in the Context Tag
 * (thesis 3.5.1). A flyweight: wrap a buffer at an offset, then read or write fields in place.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------------------------------+-------------------------------+
 *  |  Destination NIC Coordinates  |     Receiver Process PID      |
 *  +-------------------------------+-------------------------------+
 *  |     Source NIC Coordinates    |      Sender Process PID       |
 *  +-------------------------------+-------------------------------+
 *  |          Context Tag          |  Packet Length in Bytes ...   |
 *  +-------------------------------+-------------------------------+
 *  |  ... (32 bits, unaligned)     |        Packet Counter         |
 *  +-------------------------------+-------------------------------+
 * </pre>
 *
 * <pre>{@code
 * PacketHeader header = new PacketHeader().wrap(buffer, offset);
 * int tag = header.contextTag();
 * }</pre>
 */
public final class PacketHeader
{
    public static final int DESTINATION_OFFSET = 0;
    public static final int RECEIVER_PID_OFFSET = DESTINATION_OFFSET + Short.BYTES;
    public static final int SOURCE_OFFSET = RECEIVER_PID_OFFSET + Short.BYTES;
    public static final int SENDER_PID_OFFSET = SOURCE_OFFSET + Short.BYTES;
    public static final int CONTEXT_TAG_OFFSET = SENDER_PID_OFFSET + Short.BYTES;
    public static final int LENGTH_OFFSET = CONTEXT_TAG_OFFSET + Short.BYTES;
    public static final int COUNTER_OFFSET = LENGTH_OFFSET + Integer.BYTES;
    public static final int LENGTH = COUNTER_OFFSET + Short.BYTES;

    private MutableDirectBuffer buffer;
    private int offset;

    public PacketHeader wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int destination()
    {
        return buffer.getShort(offset + DESTINATION_OFFSET) & 0xFFFF;
    }

    public PacketHeader destination(final int packedCoordinates)
    {
        buffer.putShort(offset + DESTINATION_OFFSET, (short)packedCoordinates);
        return this;
    }

    public int receiverPid()
    {
        return buffer.getShort(offset + RECEIVER_PID_OFFSET) & 0xFFFF;
    }

    public PacketHeader receiverPid(final int nicPid)
    {
        buffer.putShort(offset + RECEIVER_PID_OFFSET, (short)nicPid);
        return this;
    }

    public int source()
    {
        return buffer.getShort(offset + SOURCE_OFFSET) & 0xFFFF;
    }

    public PacketHeader source(final int packedCoordinates)
    {
        buffer.putShort(offset + SOURCE_OFFSET, (short)packedCoordinates);
        return this;
    }

    public int senderPid()
    {
        return buffer.getShort(offset + SENDER_PID_OFFSET) & 0xFFFF;
    }

    public PacketHeader senderPid(final int nicPid)
    {
        buffer.putShort(offset + SENDER_PID_OFFSET, (short)nicPid);
        return this;
    }

    public int contextTag()
    {
        return buffer.getShort(offset + CONTEXT_TAG_OFFSET) & 0xFFFF;
    }

    public PacketHeader contextTag(final int tag)
    {
        buffer.putShort(offset + CONTEXT_TAG_OFFSET, (short)tag);
        return this;
    }

    public int packetLength()
    {
        return buffer.getInt(offset + LENGTH_OFFSET);
    }

    public PacketHeader packetLength(final int length)
    {
        buffer.putInt(offset + LENGTH_OFFSET, length);
        return this;
    }

    public int counter()
    {
        return buffer.getShort(offset + COUNTER_OFFSET) & 0xFFFF;
    }

    public PacketHeader counter(final int counter)
    {
        buffer.putShort(offset + COUNTER_OFFSET, (short)counter);
        return this;
    }

    /** @return true for a NIC-to-NIC system message (thesis 3.5.1). */
    public boolean isSystemMessage()
    {
        return 0 == receiverPid() && 0 == senderPid();
    }
}
