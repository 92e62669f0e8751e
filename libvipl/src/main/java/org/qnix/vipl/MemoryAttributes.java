package org.qnix.vipl;

/**
 * A memory region's attributes ({@code VIP_MEM_ATTRIBUTES}): the ptag it is registered under and whether
 * remote VIs may RDMA-write into it or RDMA-read from it.
 *
 * <pre>{@code
 * MemoryRegion region = nic.registerMem(memory, 0, 4096, new MemoryAttributes(ptag, true, false));
 * }</pre>
 */
public record MemoryAttributes(ProtectionTag ptag, boolean enableRdmaWrite, boolean enableRdmaRead)
{
    public MemoryAttributes
    {
        if (null == ptag)
        {
            throw new ViplException(org.qnix.abi.ViplResult.INVALID_PTAG, "a memory region needs a protection tag");
        }
    }
}
