package org.qnix.abi;

import org.agrona.MutableDirectBuffer;

/**
 * The payload of a New_Group system message (thesis 3.5.1; {@link SystemMessage}), over a buffer at
 * an offset. New_Group_Ack is its Group field followed by the NIC PID of the member acknowledged
 * ({@link #ackNicPid()}) and that member's incarnation ({@link #ackIncarnation()}),
 * {@link SystemMessage#NEW_GROUP_ACK_LENGTH} bytes.
 *
 * <pre>{@code
 * NewGroupFlyweight message = new NewGroupFlyweight().wrap(packet, PacketHeader.LENGTH);
 * message.group(7).groupSize(2).memberAi(7).memberPi(0).memberNicPid(1).memberIncarnation(1);
 * }</pre>
 */
public final class NewGroupFlyweight
{
    private MutableDirectBuffer buffer;
    private int offset;

    public NewGroupFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int group()
    {
        return buffer.getInt(offset + SystemMessage.GROUP_OFFSET);
    }

    public NewGroupFlyweight group(final int group)
    {
        buffer.putInt(offset + SystemMessage.GROUP_OFFSET, group);
        return this;
    }

    /** New_Group only. */
    public int groupSize()
    {
        return buffer.getInt(offset + SystemMessage.GROUP_SIZE_OFFSET);
    }

    public NewGroupFlyweight groupSize(final int size)
    {
        buffer.putInt(offset + SystemMessage.GROUP_SIZE_OFFSET, size);
        return this;
    }

    /** New_Group only. */
    public int memberAi()
    {
        return buffer.getInt(offset + SystemMessage.GROUP_MEMBER_AI_OFFSET);
    }

    public NewGroupFlyweight memberAi(final int ai)
    {
        buffer.putInt(offset + SystemMessage.GROUP_MEMBER_AI_OFFSET, ai);
        return this;
    }

    /** New_Group only. */
    public int memberPi()
    {
        return buffer.getInt(offset + SystemMessage.GROUP_MEMBER_PI_OFFSET);
    }

    public NewGroupFlyweight memberPi(final int pi)
    {
        buffer.putInt(offset + SystemMessage.GROUP_MEMBER_PI_OFFSET, pi);
        return this;
    }

    /** New_Group only. */
    public int memberNicPid()
    {
        return buffer.getInt(offset + SystemMessage.GROUP_MEMBER_NIC_PID_OFFSET);
    }

    public NewGroupFlyweight memberNicPid(final int nicPid)
    {
        buffer.putInt(offset + SystemMessage.GROUP_MEMBER_NIC_PID_OFFSET, nicPid);
        return this;
    }

    /**
     * New_Group only: which process of the member's Process Table entry it is (New_Process's
     * incarnation), so that a NIC's record of the member, and its acknowledgement, name that process only.
     */
    public int memberIncarnation()
    {
        return buffer.getInt(offset + SystemMessage.GROUP_MEMBER_INCARNATION_OFFSET);
    }

    public NewGroupFlyweight memberIncarnation(final int incarnation)
    {
        buffer.putInt(offset + SystemMessage.GROUP_MEMBER_INCARNATION_OFFSET, incarnation);
        return this;
    }

    /** New_Group_Ack only: the NIC PID of the member being acknowledged, on the destination NIC. */
    public int ackNicPid()
    {
        return buffer.getInt(offset + SystemMessage.GROUP_ACK_NIC_PID_OFFSET);
    }

    public NewGroupFlyweight ackNicPid(final int nicPid)
    {
        buffer.putInt(offset + SystemMessage.GROUP_ACK_NIC_PID_OFFSET, nicPid);
        return this;
    }

    /** New_Group_Ack only: the incarnation of the member being acknowledged, as its New_Group carried it. */
    public int ackIncarnation()
    {
        return buffer.getInt(offset + SystemMessage.GROUP_ACK_INCARNATION_OFFSET);
    }

    public NewGroupFlyweight ackIncarnation(final int incarnation)
    {
        buffer.putInt(offset + SystemMessage.GROUP_ACK_INCARNATION_OFFSET, incarnation);
        return this;
    }
}
