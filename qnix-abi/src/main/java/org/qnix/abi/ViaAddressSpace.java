package org.qnix.abi;

/**
 * The virtual addresses VIA descriptors carry. A Java process has no addresses the NIC could use, so
 * a VIA process's DMA memory gets an address space of its own: the memory the driver allocated as
 * region {@code r} (a {@code BUFFER_ALLOCATE}, page aligned) lives at {@code r << 32}, and the byte
 * {@code o} of it at {@code (r << 32) + o}. Region ids are unique per daemon and positive, so no
 * address is 0 and two allocations never overlap. A registered memory region covers
 * {@code [base, base + length)} of one allocation; the NIC finds a byte's page as
 * {@code (address - (base rounded down to a page)) / pageSize} in the region's translations.
 *
 * <pre>{@code
 * long address = ViaAddressSpace.address(allocationId, 4096);
 * int allocation = ViaAddressSpace.allocation(address);   // allocationId
 * }</pre>
 */
public final class ViaAddressSpace
{
    /** Bytes of one allocation's window: more than any allocation can hold. */
    public static final long WINDOW = 1L << 32;

    private ViaAddressSpace()
    {
    }

    public static long address(final int allocationId, final long offset)
    {
        return ((long)allocationId << 32) + offset;
    }

    public static int allocation(final long address)
    {
        return (int)(address >>> 32);
    }

    public static long offset(final long address)
    {
        return address & (WINDOW - 1);
    }
}
