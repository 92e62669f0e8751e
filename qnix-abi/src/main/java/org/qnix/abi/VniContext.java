package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * A flyweight over one Send Context or Receive Context ({@link ContextLayout}, thesis 3.3.1, Figure 2).
 * The owner process {@link #fill fills} it before posting the command that names it (the command's
 * release publishes the fields); the NIC reads the fields after it took the command and, for a receive,
 * writes the {@link #complete completion fields} before the doorbell's release publishes them.
 *
 * <pre>{@code
 * VniContext context = new VniContext().wrap(vni, layout.sendContextOffset(c));
 * context.fill(receiver.ai(), receiver.pi(), tag, true, pages, length, ContextLayout.NO_BUFFER_POOL);
 * }</pre>
 */
public final class VniContext
{
    private AtomicBuffer buffer;
    private int offset;

    public VniContext wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Process side: every field the NIC reads. Plain stores: the reader is the NIC, after the acquire
     * of the Command Queue entry that names this context.
     *
     * @param pages           Descriptors in the Context Region (1 for a short message's data).
     * @param bufferPoolIndex the first Buffer Pool page, or {@link ContextLayout#NO_BUFFER_POOL}.
     */
    public void fill(final int peerAi, final int peerPi, final int tag, final boolean doorbellFlag, final int pages,
        final long length, final int bufferPoolIndex)
    {
        buffer.putInt(offset + ContextLayout.PEER_AI_OFFSET, peerAi);
        buffer.putInt(offset + ContextLayout.PEER_PI_OFFSET, peerPi);
        buffer.putInt(offset + ContextLayout.TAG_OFFSET, tag);
        buffer.putInt(offset + ContextLayout.DOORBELL_FLAG_OFFSET, doorbellFlag ? 1 : 0);
        buffer.putInt(offset + ContextLayout.SIZE_OFFSET, pages);
        buffer.putInt(offset + ContextLayout.BUFFER_POOL_INDEX_OFFSET, bufferPoolIndex);
        buffer.putLong(offset + ContextLayout.LEN_OFFSET, length);
    }

    public int peerAi()
    {
        return buffer.getInt(offset + ContextLayout.PEER_AI_OFFSET);
    }

    public int peerPi()
    {
        return buffer.getInt(offset + ContextLayout.PEER_PI_OFFSET);
    }

    public int tag()
    {
        return buffer.getInt(offset + ContextLayout.TAG_OFFSET);
    }

    public boolean doorbellFlag()
    {
        return 0 != buffer.getInt(offset + ContextLayout.DOORBELL_FLAG_OFFSET);
    }

    /** @return the Size field: Descriptors in the Context Region, as the process wrote it (untrusted). */
    public int pages()
    {
        return buffer.getInt(offset + ContextLayout.SIZE_OFFSET);
    }

    public int bufferPoolIndex()
    {
        return buffer.getInt(offset + ContextLayout.BUFFER_POOL_INDEX_OFFSET);
    }

    /** @return the Len field as the process wrote it (untrusted: may be negative or huge). */
    public long length()
    {
        return buffer.getLong(offset + ContextLayout.LEN_OFFSET);
    }

    /**
     * NIC side: a receive's completion fields. Plain stores: the reader is the owner process, after the
     * acquire of the receive doorbell the NIC rings next with release.
     */
    public void complete(final int sourceAi, final int sourcePi, final int sourceTag, final long messageLength)
    {
        buffer.putInt(offset + ContextLayout.SOURCE_AI_OFFSET, sourceAi);
        buffer.putInt(offset + ContextLayout.SOURCE_PI_OFFSET, sourcePi);
        buffer.putInt(offset + ContextLayout.SOURCE_TAG_OFFSET, sourceTag);
        buffer.putLong(offset + ContextLayout.COMPLETION_LENGTH_OFFSET, messageLength);
    }

    public int sourceAi()
    {
        return buffer.getInt(offset + ContextLayout.SOURCE_AI_OFFSET);
    }

    public int sourcePi()
    {
        return buffer.getInt(offset + ContextLayout.SOURCE_PI_OFFSET);
    }

    public int sourceTag()
    {
        return buffer.getInt(offset + ContextLayout.SOURCE_TAG_OFFSET);
    }

    public long completionLength()
    {
        return buffer.getLong(offset + ContextLayout.COMPLETION_LENGTH_OFFSET);
    }
}
