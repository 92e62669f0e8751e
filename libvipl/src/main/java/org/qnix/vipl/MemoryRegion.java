package org.qnix.vipl;

/**
 * A registered memory region ({@code VipRegisterMem}): a range of {@link ViplMemory} that the NIC may
 * read and write for VIs of the same ptag, named by its {@link #handle() memory handle}. The memory is
 * locked while registered and cannot be freed; the same range may be registered again (another handle,
 * another lock). {@link #close()} is {@code VipDeregisterMem}.
 *
 * <pre>{@code
 * try (MemoryRegion region = nic.registerMem(memory, 0, 8192, new MemoryAttributes(ptag, true, false)))
 * {
 *     int handle = region.handle();                           // what descriptors carry
 *     region.setAttributes(new MemoryAttributes(ptag, false, false));
 * }
 * }</pre>
 */
public final class MemoryRegion extends DriverResource
{
    private final ViplMemory memory;
    private final long offset;
    private final long length;
    private final int handle;
    private MemoryAttributes attributes;

    MemoryRegion(final ViplNic nic, final ViplMemory memory, final long offset, final long length, final int handle,
        final MemoryAttributes attributes)
    {
        super(nic);
        this.memory = memory;
        this.offset = offset;
        this.length = length;
        this.handle = handle;
        this.attributes = attributes;
    }

    /**
     * @return the memory handle ({@code VIP_MEM_HANDLE}).
     *
     * <pre>{@code
     * send.fields().dataSegment(0, memory.address(4096), region.handle(), 100);
     * }</pre>
     */
    public int handle()
    {
        return handle;
    }

    /**
     * @return the VIA address of the region's first byte.
     *
     * <pre>{@code
     * long remote = region.address() + 1024;   // an RDMA target, told to the peer
     * }</pre>
     */
    public long address()
    {
        return memory.address(offset);
    }

    /**
     * @return the bytes registered.
     *
     * <pre>{@code
     * long end = region.address() + region.length();
     * }</pre>
     */
    public long length()
    {
        return length;
    }

    /**
     * @return the memory the region is a range of.
     *
     * <pre>{@code
     * UnsafeBuffer bytes = region.memory().buffer();
     * }</pre>
     */
    public ViplMemory memory()
    {
        return memory;
    }

    /**
     * {@code VipQueryMem}: the attributes it is registered with now.
     *
     * <pre>{@code
     * boolean writable = region.query().enableRdmaWrite();
     * }</pre>
     */
    public MemoryAttributes query()
    {
        synchronized (nic)
        {
            return attributes;
        }
    }

    /**
     * {@code VipSetMemAttributes}: another ptag or RDMA enables.
     *
     * <pre>{@code
     * region.setAttributes(new MemoryAttributes(ptag, true, false));   // RDMA writes into it allowed now
     * }</pre>
     */
    public void setAttributes(final MemoryAttributes attributes)
    {
        synchronized (nic)
        {
            nic.setMemAttributes(this, attributes);
            this.attributes = attributes;
        }
    }

    long offset()
    {
        return offset;
    }


    void destroy()
    {
        nic.deregisterMem(this);
    }
}
