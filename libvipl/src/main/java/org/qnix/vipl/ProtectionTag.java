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
public final class ProtectionTag implements AutoCloseable
{
    private final ViplNic nic;
    private final int value;
    private boolean closed;

    ProtectionTag(final ViplNic nic, final int value)
    {
        this.nic = nic;
        this.value = value;
    }

    /** @return the tag as the NIC's tables hold it. */
    public int value()
    {
        return value;
    }

    ViplNic nic()
    {
        return nic;
    }

    /** {@code VipDestroyPtag}. Idempotent once it succeeded. */
    public void close()
    {
        synchronized (nic)
        {
            if (!closed)
            {
                if (!nic.isClosed())
                {
                    // After the NIC's close the driver released everything already.
                    nic.destroyPtag(this);
                }
                closed = true;
            }
        }
    }

    public String toString()
    {
        return "ptag " + value;
    }
}
