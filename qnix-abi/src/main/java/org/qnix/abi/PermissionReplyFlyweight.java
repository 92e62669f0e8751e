package org.qnix.abi;

import org.agrona.MutableDirectBuffer;

/**
 * The payload of a Permission_Reply system message, and of Transfer_Abort, which has the same layout
 * (thesis 3.5.1; {@link SystemMessage}), over a buffer at an offset, for the NIC that writes it and
 * the NIC that reads it alike. Wrap it at the first byte after the {@link PacketHeader}.
 *
 * <pre>{@code
 * PermissionReplyFlyweight reply = new PermissionReplyFlyweight().wrap(packet, PacketHeader.LENGTH);
 * reply.receiverPid(2).senderPid(1).operationId(42L).status(Doorbell.DONE).handle(3);
 * }</pre>
 */
public final class PermissionReplyFlyweight
{
    private MutableDirectBuffer buffer;
    private int offset;

    public PermissionReplyFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int receiverPid()
    {
        return buffer.getInt(offset + SystemMessage.REPLY_RECEIVER_PID_OFFSET);
    }

    public PermissionReplyFlyweight receiverPid(final int nicPid)
    {
        buffer.putInt(offset + SystemMessage.REPLY_RECEIVER_PID_OFFSET, nicPid);
        return this;
    }

    public int senderPid()
    {
        return buffer.getInt(offset + SystemMessage.REPLY_SENDER_PID_OFFSET);
    }

    public PermissionReplyFlyweight senderPid(final int nicPid)
    {
        buffer.putInt(offset + SystemMessage.REPLY_SENDER_PID_OFFSET, nicPid);
        return this;
    }

    public long operationId()
    {
        return buffer.getLong(offset + SystemMessage.REPLY_OPERATION_OFFSET);
    }

    public PermissionReplyFlyweight operationId(final long operationId)
    {
        buffer.putLong(offset + SystemMessage.REPLY_OPERATION_OFFSET, operationId);
        return this;
    }

    /** {@link Doorbell#DONE} for a granted transfer, else the error doorbell code. */
    public int status()
    {
        return buffer.getInt(offset + SystemMessage.REPLY_STATUS_OFFSET);
    }

    public PermissionReplyFlyweight status(final int status)
    {
        buffer.putInt(offset + SystemMessage.REPLY_STATUS_OFFSET, status);
        return this;
    }

    /** The transfer handle the data packets carry in their Context Tag. */
    public int handle()
    {
        return buffer.getInt(offset + SystemMessage.REPLY_HANDLE_OFFSET);
    }

    public PermissionReplyFlyweight handle(final int handle)
    {
        buffer.putInt(offset + SystemMessage.REPLY_HANDLE_OFFSET, handle);
        return this;
    }
}
