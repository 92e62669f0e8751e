package org.qnix.vipl;

/**
 * A resource the driver holds for one {@link ViplNic} (a ptag, a memory region, a CQ, a VI): destroyed
 * through the driver at most once, under the NIC's monitor, and a no-op after the NIC's own close, when
 * the driver has released everything already.
 *
 * <pre>{@code
 * try (ProtectionTag ptag = nic.createPtag())
 * {
 *     // ...
 * }   // VipDestroyPtag, once
 * }</pre>
 */
abstract class DriverResource implements AutoCloseable
{
    final ViplNic nic;
    /** The NIC's posts, waits and guard: read once here, not on every call. */
    final ViplDataPath dataPath;
    private boolean closed;

    DriverResource(final ViplNic nic)
    {
        this.nic = nic;
        this.dataPath = nic.dataPath();
    }

    boolean isClosed()
    {
        return closed;
    }

    /** Asks the driver to destroy the resource; called under the NIC's monitor, before the NIC closed. */
    abstract void destroy();

    /**
     * {@code VipDeregisterMem}, {@code VipDestroyCQ}, {@code VipDestroyPtag} or {@code VipDestroyVi}.
     * Idempotent once it succeeded.
     */
    public void close()
    {
        synchronized (nic)
        {
            if (!closed)
            {
                if (!nic.isClosed())
                {
                    destroy();
                }
                closed = true;
            }
        }
    }
}
