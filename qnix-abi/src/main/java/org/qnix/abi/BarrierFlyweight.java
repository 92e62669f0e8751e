package org.qnix.abi;

import org.agrona.MutableDirectBuffer;

/**
 * The payload of a Barrier system message (thesis 3.5.1 plus the sequence number of DESIGN.md 8, item
 * 9; {@link SystemMessage}), over a buffer at an offset.
 *
 * <pre>{@code
 * BarrierFlyweight barrier = new BarrierFlyweight().wrap(packet, PacketHeader.LENGTH);
 * barrier.group(7).groupSize(2).sequence(0).memberAi(7).memberPi(1).memberNicPid(2);
 * }</pre>
 */
public final class BarrierFlyweight
{
    private MutableDirectBuffer buffer;
    private int offset;

    public BarrierFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int group()
    {
        return buffer.getInt(offset + SystemMessage.GROUP_OFFSET);
    }

    public BarrierFlyweight group(final int group)
    {
        buffer.putInt(offset + SystemMessage.GROUP_OFFSET, group);
        return this;
    }

    public int groupSize()
    {
        return buffer.getInt(offset + SystemMessage.GROUP_SIZE_OFFSET);
    }

    public BarrierFlyweight groupSize(final int size)
    {
        buffer.putInt(offset + SystemMessage.GROUP_SIZE_OFFSET, size);
        return this;
    }

    /** The k-th Barrier a member enters on a group has sequence k. */
    public int sequence()
    {
        return buffer.getInt(offset + SystemMessage.BARRIER_SEQUENCE_OFFSET);
    }

    public BarrierFlyweight sequence(final int sequence)
    {
        buffer.putInt(offset + SystemMessage.BARRIER_SEQUENCE_OFFSET, sequence);
        return this;
    }

    public int memberAi()
    {
        return buffer.getInt(offset + SystemMessage.BARRIER_MEMBER_AI_OFFSET);
    }

    public BarrierFlyweight memberAi(final int ai)
    {
        buffer.putInt(offset + SystemMessage.BARRIER_MEMBER_AI_OFFSET, ai);
        return this;
    }

    public int memberPi()
    {
        return buffer.getInt(offset + SystemMessage.BARRIER_MEMBER_PI_OFFSET);
    }

    public BarrierFlyweight memberPi(final int pi)
    {
        buffer.putInt(offset + SystemMessage.BARRIER_MEMBER_PI_OFFSET, pi);
        return this;
    }

    public int memberNicPid()
    {
        return buffer.getInt(offset + SystemMessage.BARRIER_MEMBER_NIC_PID_OFFSET);
    }

    public BarrierFlyweight memberNicPid(final int nicPid)
    {
        buffer.putInt(offset + SystemMessage.BARRIER_MEMBER_NIC_PID_OFFSET, nicPid);
        return this;
    }
}
