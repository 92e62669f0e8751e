package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * A flyweight over one entry of a process Command Queue ({@link CommandQueueLayout}, thesis 3.3.1-3.3.2),
 * used by both sides of the hand-off: the owner process {@link #publish publishes} a command, fields
 * first and the Command last with release semantics; the NIC control program reads {@link #command()}
 * with acquire semantics, then the fields, then {@link #consume() consumes} the entry. A Multicast's
 * receiver names travel in the entries after its own, {@link CommandQueueLayout#NAMES_PER_ENTRY} per
 * entry, written with {@link #putName} before the Multicast entry is published.
 *
 * <pre>{@code
 * CommandQueueEntry entry = new CommandQueueEntry().wrap(vni, layout.commandOffset(tail));
 * entry.publish(ProcessCommand.SEND, context, 0, 0);        // process side
 *
 * int command = entry.wrap(sdram, address).command();        // NIC side
 * if (ProcessCommand.NONE != command) { int context = entry.context(); entry.consume(); }
 * }</pre>
 */
public final class CommandQueueEntry
{
    private AtomicBuffer buffer;
    private int offset;

    public CommandQueueEntry wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** Process side: writes Context, Group and Size, then the Command; the reader is the NIC (TX step 6). */
    public void publish(final int command, final int context, final int group, final int size)
    {
        buffer.putInt(offset + CommandQueueLayout.CONTEXT_OFFSET, context);
        buffer.putInt(offset + CommandQueueLayout.GROUP_OFFSET, group);
        buffer.putInt(offset + CommandQueueLayout.SIZE_OFFSET, size);
        // Reader: the NIC control program, which acts only once it sees a non-zero Command and reads the
        // fields (and a Multicast's name entries) after it.
        buffer.putIntRelease(offset + CommandQueueLayout.COMMAND_OFFSET, command);
    }

    /** Process side: name {@code n} (0 .. NAMES_PER_ENTRY - 1) of a Multicast's name entry; plain store. */
    public void putName(final int n, final int ai, final int pi)
    {
        final int name = offset + n * CommandQueueLayout.NAME_LENGTH;
        buffer.putInt(name, ai);
        buffer.putInt(name + Integer.BYTES, pi);
    }

    /** @return the Command, {@link ProcessCommand#NONE} while the entry is empty (acquire). */
    public int command()
    {
        // Writer: the owner process, which publishes the Command field last with release semantics;
        // the NIC, which writes NONE back when it consumes the entry.
        return buffer.getIntVolatile(offset + CommandQueueLayout.COMMAND_OFFSET);
    }

    /** @return true if the entry is empty (the NIC consumed it), so the process may write it. */
    public boolean isEmpty()
    {
        return ProcessCommand.NONE == command();
    }

    public int context()
    {
        return buffer.getInt(offset + CommandQueueLayout.CONTEXT_OFFSET);
    }

    public int group()
    {
        return buffer.getInt(offset + CommandQueueLayout.GROUP_OFFSET);
    }

    public int size()
    {
        return buffer.getInt(offset + CommandQueueLayout.SIZE_OFFSET);
    }

    /** @return the AI of name {@code n} of a Multicast's name entry. */
    public int nameAi(final int n)
    {
        return buffer.getInt(offset + n * CommandQueueLayout.NAME_LENGTH);
    }

    /** @return the PI of name {@code n} of a Multicast's name entry. */
    public int namePi(final int n)
    {
        return buffer.getInt(offset + n * CommandQueueLayout.NAME_LENGTH + Integer.BYTES);
    }

    /** NIC side: marks the entry empty again (thesis 3.3.3: a full slot is told from an empty one by it). */
    public void consume()
    {
        // Reader: the NIC itself, next time round the queue, and the process's Command Queue-full check.
        buffer.putIntRelease(offset + CommandQueueLayout.COMMAND_OFFSET, ProcessCommand.NONE);
    }
}
