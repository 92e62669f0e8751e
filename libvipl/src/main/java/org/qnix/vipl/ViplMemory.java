package org.qnix.vipl;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ViaAddressSpace;
import org.qnix.host.MappedViews;

/**
 * DMA memory of the node ({@link ViplNic#allocate}), mapped into this process only: what descriptors and
 * data live in once {@link ViplNic#registerMem registered}. Its bytes have VIA addresses
 * ({@link #address(long)}) that descriptors carry; the NIC turns them into host pages through the
 * registered region's translations.
 *
 * <pre>{@code
 * ViplMemory memory = nic.allocate(64 * 1024);
 * memory.buffer().putInt(0, 42);
 * MemoryRegion region = nic.registerMem(memory, 0, memory.length(), new MemoryAttributes(ptag, false, false));
 * long address = memory.address(0);        // what a data segment names
 * }</pre>
 *
 * <p>{@link #close()} frees it, and is refused ({@code INVALID_STATE}) while a region of it is registered.
 */
public final class ViplMemory implements AutoCloseable
{
    private final ViplNic nic;
    private final int allocation;
    private final int length;
    private final long[] pages;
    private final MappedViews views;
    private int registrations;
    private boolean closed;

    ViplMemory(final ViplNic nic, final int allocation, final int length, final long[] pages, final MappedViews views)
    {
        this.nic = nic;
        this.allocation = allocation;
        this.length = length;
        this.pages = pages;
        this.views = views;
    }

    /**
     * @return the bytes allocated.
     *
     * <pre>{@code
     * MemoryRegion region = nic.registerMem(memory, 0, memory.length(), attributes);
     * }</pre>
     */
    public int length()
    {
        return length;
    }

    /**
     * @return the VIA address of byte {@code offset}: what descriptors name.
     *
     * <pre>{@code
     * recv.fields().dataSegment(0, memory.address(4096), region.handle(), 4096);
     * }</pre>
     */
    public long address(final long offset)
    {
        return ViaAddressSpace.address(allocation, offset);
    }

    /**
     * @return the memory, to compose descriptors and data in place; unusable after {@link #close()}
     * (or the NIC's): a buffer taken before then shrinks to nothing, so using it throws
     * {@link IndexOutOfBoundsException} rather than touching memory that is gone; so do the
     * {@link Descriptor}s in it.
     *
     * <pre>{@code
     * memory.buffer().putStringWithoutLengthAscii(4096, "hello");
     * }</pre>
     */
    public UnsafeBuffer buffer()
    {
        if (closed)
        {
            throw new ViplException(org.qnix.abi.ViplResult.INVALID_STATE, "this memory was freed");
        }
        return views.buffer();
    }

    /**
     * @return a {@link Descriptor} at {@code offset}, which must be a multiple of
     * {@link org.qnix.abi.ViplDescriptor#ALIGNMENT} inside the memory (else {@code INVALID_PARAMETER}; the
     * NIC would complete a misaligned one with a format error).
     *
     * <pre>{@code
     * Descriptor send = memory.descriptor(0);
     * Descriptor recv = memory.descriptor(128);
     * }</pre>
     */
    public Descriptor descriptor(final int offset)
    {
        if (offset < 0 || 0 != offset % org.qnix.abi.ViplDescriptor.ALIGNMENT ||
            offset > length - org.qnix.abi.ViplDescriptor.CONTROL_SEGMENT_LENGTH)
        {
            throw new ViplException(org.qnix.abi.ViplResult.INVALID_PARAMETER, "no descriptor can start at offset " +
                offset + " of " + length + " bytes: 64-byte aligned, inside the memory");
        }
        return new Descriptor(this, offset, buffer());
    }

    int allocation()
    {
        return allocation;
    }

    long[] pages()
    {
        return pages;
    }

    boolean isClosed()
    {
        return closed;
    }

    void registered(final int delta)
    {
        registrations += delta;
    }

    int registrations()
    {
        return registrations;
    }

    /** Unmaps without freeing: {@link ViplNic#close()}, whose de-registration frees everything. */
    void unmap()
    {
        if (!closed)
        {
            closed = true;
            views.close();
        }
    }

    /**
     * Frees the memory; refused ({@code INVALID_STATE}) while it is registered. Idempotent once it succeeded.
     *
     * <pre>{@code
     * region.close();
     * memory.close();
     * }</pre>
     */
    public void close()
    {
        synchronized (nic)
        {
            if (!closed && !nic.isClosed())
            {
                nic.free(this);
            }
        }
    }
}
