package org.qnix.abi;

import org.agrona.MutableDirectBuffer;

/**
 * The payload of a Permission_Request system message (thesis 3.5.1; layout in {@link SystemMessage}),
 * over a buffer at an offset, for the NIC that asks and the NIC that grants alike. Wrap it at the first
 * byte after the {@link PacketHeader}; it keeps no state but the buffer and offset, so one instance is
 * reused for every message (no allocation on the data path).
 *
 * <pre>{@code
 * PermissionRequestFlyweight request = new PermissionRequestFlyweight().wrap(packet, PacketHeader.LENGTH);
 * request.receiverPid(2).senderPid(1).tag(7).messageLength(100).firstPacketLength(100).packets(1)
 *     .operationId(42L).senderAi(5).senderPi(0).receiverIncarnation(3).retryMs(1);
 * int packets = request.packets();
 * }</pre>
 */
public final class PermissionRequestFlyweight
{
    private MutableDirectBuffer buffer;
    private int offset;

    public PermissionRequestFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int receiverPid()
    {
        return buffer.getInt(offset + SystemMessage.REQUEST_RECEIVER_PID_OFFSET);
    }

    public PermissionRequestFlyweight receiverPid(final int nicPid)
    {
        buffer.putInt(offset + SystemMessage.REQUEST_RECEIVER_PID_OFFSET, nicPid);
        return this;
    }

    public int senderPid()
    {
        return buffer.getInt(offset + SystemMessage.REQUEST_SENDER_PID_OFFSET);
    }

    public PermissionRequestFlyweight senderPid(final int nicPid)
    {
        buffer.putInt(offset + SystemMessage.REQUEST_SENDER_PID_OFFSET, nicPid);
        return this;
    }

    /** The Context Tag of the message. */
    public int tag()
    {
        return buffer.getInt(offset + SystemMessage.REQUEST_TAG_OFFSET);
    }

    public PermissionRequestFlyweight tag(final int tag)
    {
        buffer.putInt(offset + SystemMessage.REQUEST_TAG_OFFSET, tag);
        return this;
    }

    public int messageLength()
    {
        return buffer.getInt(offset + SystemMessage.REQUEST_MESSAGE_LENGTH_OFFSET);
    }

    public PermissionRequestFlyweight messageLength(final int length)
    {
        buffer.putInt(offset + SystemMessage.REQUEST_MESSAGE_LENGTH_OFFSET, length);
        return this;
    }

    public int firstPacketLength()
    {
        return buffer.getInt(offset + SystemMessage.REQUEST_FIRST_PACKET_LENGTH_OFFSET);
    }

    public PermissionRequestFlyweight firstPacketLength(final int length)
    {
        buffer.putInt(offset + SystemMessage.REQUEST_FIRST_PACKET_LENGTH_OFFSET, length);
        return this;
    }

    public int packets()
    {
        return buffer.getInt(offset + SystemMessage.REQUEST_PACKETS_OFFSET);
    }

    public PermissionRequestFlyweight packets(final int packets)
    {
        buffer.putInt(offset + SystemMessage.REQUEST_PACKETS_OFFSET, packets);
        return this;
    }

    /** The sender's operation id, which makes the request idempotent (DESIGN.md 8, item 2). */
    public long operationId()
    {
        return buffer.getLong(offset + SystemMessage.REQUEST_OPERATION_OFFSET);
    }

    public PermissionRequestFlyweight operationId(final long operationId)
    {
        buffer.putLong(offset + SystemMessage.REQUEST_OPERATION_OFFSET, operationId);
        return this;
    }

    public int senderAi()
    {
        return buffer.getInt(offset + SystemMessage.REQUEST_SENDER_AI_OFFSET);
    }

    public PermissionRequestFlyweight senderAi(final int ai)
    {
        buffer.putInt(offset + SystemMessage.REQUEST_SENDER_AI_OFFSET, ai);
        return this;
    }

    public int senderPi()
    {
        return buffer.getInt(offset + SystemMessage.REQUEST_SENDER_PI_OFFSET);
    }

    public PermissionRequestFlyweight senderPi(final int pi)
    {
        buffer.putInt(offset + SystemMessage.REQUEST_SENDER_PI_OFFSET, pi);
        return this;
    }

    /**
     * The incarnation of the receiver's Process Table entry that the sending NIC's Name Table named
     * (New_Process): a later process in the entry is not the receiver.
     */
    public int receiverIncarnation()
    {
        return buffer.getInt(offset + SystemMessage.REQUEST_RECEIVER_INCARNATION_OFFSET);
    }

    public PermissionRequestFlyweight receiverIncarnation(final int incarnation)
    {
        buffer.putInt(offset + SystemMessage.REQUEST_RECEIVER_INCARNATION_OFFSET, incarnation);
        return this;
    }

    /**
     * The sending NIC's promise: while it has no answer it asks again within this many milliseconds.
     * Read from the wire: the receiving NIC bounds it before it relies on it.
     */
    public int retryMs()
    {
        return buffer.getInt(offset + SystemMessage.REQUEST_RETRY_MS_OFFSET);
    }

    public PermissionRequestFlyweight retryMs(final int milliseconds)
    {
        buffer.putInt(offset + SystemMessage.REQUEST_RETRY_MS_OFFSET, milliseconds);
        return this;
    }

    /** Copies the whole request, every field, to {@code index} of {@code to}. */
    public void copyTo(final MutableDirectBuffer to, final int index)
    {
        to.putBytes(index, buffer, offset, SystemMessage.PERMISSION_REQUEST_LENGTH);
    }
}
