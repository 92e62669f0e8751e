package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * A flyweight over one Driver Command Queue entry ({@link DriverCommandQueueLayout}): the driver
 * {@link #publish publishes} a command, fields first and the Command last with release semantics; the
 * NIC control program reads {@link #command()} with acquire semantics, then the fields, then
 * {@link #consume() consumes} the entry so the driver may reuse it.
 *
 * <pre>{@code
 * DriverCommandEntry entry = new DriverCommandEntry().wrap(sdram, (int)layout.driverCommandOffset(position));
 * entry.publish(DriverCommand.NEW_PROCESS, name, pid, index, group, size);
 * }</pre>
 */
public final class DriverCommandEntry
{
    private AtomicBuffer buffer;
    private int offset;

    public DriverCommandEntry wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** Writes every field, Generation 0, then the Command; the reader is the NIC control program. */
    public void publish(final int command, final ProcessName name, final int pid, final int index, final int group,
        final int size)
    {
        publish(command, name, pid, index, group, size, 0);
    }

    /**
     * Writes every field, then the Command; the reader is the NIC control program.
     *
     * @param generation the VI's or CQ's Generation for a VIA command
     *                   ({@link DriverCommandQueueLayout#GENERATION_OFFSET}), else 0.
     */
    public void publish(final int command, final ProcessName name, final int pid, final int index, final int group,
        final int size, final int generation)
    {
        buffer.putInt(offset + DriverCommandQueueLayout.NAME_AI_OFFSET, name.ai());
        buffer.putInt(offset + DriverCommandQueueLayout.NAME_PI_OFFSET, name.pi());
        buffer.putInt(offset + DriverCommandQueueLayout.PID_OFFSET, pid);
        buffer.putInt(offset + DriverCommandQueueLayout.INDEX_OFFSET, index);
        buffer.putInt(offset + DriverCommandQueueLayout.GROUP_OFFSET, group);
        buffer.putInt(offset + DriverCommandQueueLayout.SIZE_OFFSET, size);
        buffer.putInt(offset + DriverCommandQueueLayout.GENERATION_OFFSET, generation);
        // Reader: the NIC control program, which acts only once it sees a non-zero Command.
        buffer.putIntRelease(offset + DriverCommandQueueLayout.COMMAND_OFFSET, command);
    }

    /** @return the Command, {@link DriverCommand#NONE} while the entry is empty (acquire). */
    public int command()
    {
        // Writer: the driver, which publishes the Command last with release semantics.
        return buffer.getIntVolatile(offset + DriverCommandQueueLayout.COMMAND_OFFSET);
    }

    /** Marks the entry empty again; the reader is the driver, which may then reuse it. */
    public void consume()
    {
        buffer.putIntRelease(offset + DriverCommandQueueLayout.COMMAND_OFFSET, DriverCommand.NONE);
    }

    public ProcessName name()
    {
        return new ProcessName(
            buffer.getInt(offset + DriverCommandQueueLayout.NAME_AI_OFFSET),
            buffer.getInt(offset + DriverCommandQueueLayout.NAME_PI_OFFSET));
    }

    public int pid()
    {
        return buffer.getInt(offset + DriverCommandQueueLayout.PID_OFFSET);
    }

    public int index()
    {
        return buffer.getInt(offset + DriverCommandQueueLayout.INDEX_OFFSET);
    }

    public int group()
    {
        return buffer.getInt(offset + DriverCommandQueueLayout.GROUP_OFFSET);
    }

    public int size()
    {
        return buffer.getInt(offset + DriverCommandQueueLayout.SIZE_OFFSET);
    }

    public int generation()
    {
        return buffer.getInt(offset + DriverCommandQueueLayout.GENERATION_OFFSET);
    }
}
