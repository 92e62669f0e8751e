package org.qnix.vipl;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ViplDescriptor;

/**
 * A VIA descriptor ({@code VIP_DESCRIPTOR}) in this process's DMA memory, at a 64-byte aligned offset
 * of a {@link ViplMemory}: the handle {@link Vi#postSend}, {@link Vi#postRecv} and the completions
 * speak of. Its fields are those of {@code vipl.h}, through {@link #fields()} (the qnix-abi flyweight
 * the NIC reads too). Make one per descriptor and reuse it: it allocates nothing after construction.
 *
 * <pre>{@code
 * Descriptor send = memory.descriptor(0);
 * send.fields().control(ViplDescriptor.OP_SEND).segmentCount(1).length(100)
 *     .dataSegment(0, memory.address(4096), region.handle(), 100);
 * vi.postSend(send, region);
 * Descriptor done = vi.sendWait(1_000);   // the same object, its status written by the NIC
 * }</pre>
 */
public final class Descriptor
{
    private final ViplMemory memory;
    private final int offset;
    private final UnsafeBuffer buffer;
    private final ViplDescriptor fields = new ViplDescriptor();

    Descriptor(final ViplMemory memory, final int offset, final UnsafeBuffer buffer)
    {
        this.memory = memory;
        this.offset = offset;
        this.buffer = buffer;
        fields.wrap(buffer, offset);
    }

    /** @return the descriptor's fields, over the memory the NIC reads and completes. */
    public ViplDescriptor fields()
    {
        return fields;
    }

    public ViplMemory memory()
    {
        return memory;
    }

    /** @return where it is in its memory. */
    public int offset()
    {
        return offset;
    }

    /** @return its VIA address: what a next-descriptor field names. */
    public long address()
    {
        return memory.address(offset);
    }

    /** @return the status the NIC wrote at completion (acquire); 0 while posted. */
    public int status()
    {
        return fields.status();
    }

    public boolean isDone()
    {
        return fields.isDone();
    }

    public boolean hasError()
    {
        return fields.hasError();
    }

    /** @return the bytes a completed receive got (or a completed send carried). */
    public int length()
    {
        return fields.length();
    }

    /** @return a completed receive's immediate data, if its status has {@code STATUS_IMMEDIATE}. */
    public int immediateData()
    {
        return fields.immediateData();
    }

    /** The status cleared before a post, so that DONE means this post's completion. */
    void clearStatus()
    {
        // Reader: the NIC, which reads the descriptor only after the post's Command Queue entry (release).
        buffer.putIntRelease(offset + ViplDescriptor.STATUS_OFFSET, 0);
    }
}
