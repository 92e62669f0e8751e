package org.qnix.vipl;

/**
 * A protection tag ({@code VipCreatePtag}): VIs and memory regions with the same tag may work together;
 * the NIC checks it on every descriptor segment and RDMA packet. {@link #close()} is
 * {@code VipDestroyPtag}, refused with {@code ERROR_RESOURCE} while a VI or region uses the tag.
 *
 * <pre>{@code
 * try (ProtectionTag ptag = nic.createPtag()) { ... }
 * }</pre>
 */
public final class ProtectionTag extends DriverResource
{
    private final int value;

    ProtectionTag(final ViplNic nic, final int value)
    {
        super(nic);
        this.value = value;
    }

    /**
     * @return the tag as the NIC's tables hold it.
     *
     * <pre>{@code
     * System.out.println("registered under ptag " + ptag.value());
     * }</pre>
     */
    public int value()
    {
        return value;
    }

    ViplNic nic()
    {
        return nic;
    }

    void destroy()
    {
        nic.destroyPtag(this);
    }

    /**
     * @return {@code ptag N}, for messages.
     *
     * <pre>{@code
     * System.out.println(ptag);
     * }</pre>
     */
    public String toString()
    {
        return "ptag " + value;
    }
}
