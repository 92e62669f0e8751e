package org.qnix.vipl;

import org.qnix.host.MappedViews;

/**
 * A completion queue ({@code VipCreateCQ}): the work queues attached to it report each completed
 * descriptor here. Its ring is in host memory the driver allocated and this process maps.
 * {@link #close()} is {@code VipDestroyCQ}, refused ({@code ERROR_RESOURCE}) while a VI's queue is
 * attached.
 *
 * <pre>{@code
 * try (CompletionQueue cq = nic.createCq(256)) { Vi vi = nic.createVi(attributes, cq, cq); ... }
 * }</pre>
 */
public final class CompletionQueue implements AutoCloseable
{
    private final ViplNic nic;
    private final int cq;
    private final int entries;
    private final MappedViews ring;
    private boolean closed;

    CompletionQueue(final ViplNic nic, final int cq, final int entries, final MappedViews ring)
    {
        this.nic = nic;
        this.cq = cq;
        this.entries = entries;
        this.ring = ring;
    }

    public int entries()
    {
        return entries;
    }

    /** @return the CQ's index in the NIC's CQ table. */
    int index()
    {
        return cq;
    }

    ViplNic nic()
    {
        return nic;
    }

    void unmap()
    {
        ring.close();
    }

    boolean isClosed()
    {
        return closed;
    }

    /** {@code VipDestroyCQ}. Idempotent once it succeeded. */
    public void close()
    {
        synchronized (nic)
        {
            if (!closed)
            {
                if (!nic.isClosed())
                {
                    // After the NIC's close the driver released everything already.
                    nic.destroyCq(this);
                }
                closed = true;
            }
        }
    }
}
