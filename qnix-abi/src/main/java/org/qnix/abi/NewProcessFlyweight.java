package org.qnix.abi;

import org.agrona.MutableDirectBuffer;

/**
 * The payload of a New_Process system message (thesis 3.5.1; {@link SystemMessage}), over a buffer
 * at an offset. New_Process_Ack and Delete_Process are its first three fields (the process name and
 * its NIC PID), New_Process_Ack with the incarnation it acknowledges after them
 * ({@link #ackIncarnation()}), so this flyweight reads and writes them too: their lengths are
 * {@link SystemMessage#NEW_PROCESS_ACK_LENGTH} and {@link SystemMessage#DELETE_PROCESS_LENGTH}.
 *
 * <pre>{@code
 * NewProcessFlyweight message = new NewProcessFlyweight().wrap(packet, PacketHeader.LENGTH);
 * message.ai(7).pi(0).nicPid(1).osPid(4242).group(7).groupSize(2).incarnation(1);
 * }</pre>
 */
public final class NewProcessFlyweight
{
    private MutableDirectBuffer buffer;
    private int offset;

    public NewProcessFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int ai()
    {
        return buffer.getInt(offset + SystemMessage.NAME_AI_OFFSET);
    }

    public NewProcessFlyweight ai(final int ai)
    {
        buffer.putInt(offset + SystemMessage.NAME_AI_OFFSET, ai);
        return this;
    }

    public int pi()
    {
        return buffer.getInt(offset + SystemMessage.NAME_PI_OFFSET);
    }

    public NewProcessFlyweight pi(final int pi)
    {
        buffer.putInt(offset + SystemMessage.NAME_PI_OFFSET, pi);
        return this;
    }

    /** Writes the process name: AI and PI. */
    public NewProcessFlyweight name(final ProcessName name)
    {
        return ai(name.ai()).pi(name.pi());
    }

    /** @return the process name (a new object: control plane only). */
    public ProcessName name()
    {
        return new ProcessName(ai(), pi());
    }

    /** The NIC PID of the process on its NIC (for New_Process_Ack: on the destination NIC). */
    public int nicPid()
    {
        return buffer.getInt(offset + SystemMessage.NAME_NIC_PID_OFFSET);
    }

    public NewProcessFlyweight nicPid(final int nicPid)
    {
        buffer.putInt(offset + SystemMessage.NAME_NIC_PID_OFFSET, nicPid);
        return this;
    }

    /** New_Process only. */
    public int osPid()
    {
        return buffer.getInt(offset + SystemMessage.NEW_PROCESS_OS_PID_OFFSET);
    }

    public NewProcessFlyweight osPid(final int osPid)
    {
        buffer.putInt(offset + SystemMessage.NEW_PROCESS_OS_PID_OFFSET, osPid);
        return this;
    }

    /** New_Process only. */
    public int group()
    {
        return buffer.getInt(offset + SystemMessage.NEW_PROCESS_GROUP_OFFSET);
    }

    public NewProcessFlyweight group(final int group)
    {
        buffer.putInt(offset + SystemMessage.NEW_PROCESS_GROUP_OFFSET, group);
        return this;
    }

    /** New_Process only. */
    public int groupSize()
    {
        return buffer.getInt(offset + SystemMessage.NEW_PROCESS_GROUP_SIZE_OFFSET);
    }

    public NewProcessFlyweight groupSize(final int size)
    {
        buffer.putInt(offset + SystemMessage.NEW_PROCESS_GROUP_SIZE_OFFSET, size);
        return this;
    }

    /**
     * New_Process only: how many processes the Process Table entry has held on its NIC, counting this
     * one; the receiver incarnation of every request sent to it ({@link PermissionRequestFlyweight}).
     */
    public int incarnation()
    {
        return buffer.getInt(offset + SystemMessage.NEW_PROCESS_INCARNATION_OFFSET);
    }

    public NewProcessFlyweight incarnation(final int incarnation)
    {
        buffer.putInt(offset + SystemMessage.NEW_PROCESS_INCARNATION_OFFSET, incarnation);
        return this;
    }

    /** New_Process_Ack only: the incarnation of the New_Process acknowledged. */
    public int ackIncarnation()
    {
        return buffer.getInt(offset + SystemMessage.NEW_PROCESS_ACK_INCARNATION_OFFSET);
    }

    public NewProcessFlyweight ackIncarnation(final int incarnation)
    {
        buffer.putInt(offset + SystemMessage.NEW_PROCESS_ACK_INCARNATION_OFFSET, incarnation);
        return this;
    }
}
