package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The Close requested word of a VIA process's VIA Process Structures ({@link ViaProcessStructuresLayout}):
 * the process's {@code close()} writes it, with release, to ask the driver to end the process's
 * connection waits; the driver reads it, with acquire, in each of those waits. It concerns only the
 * process's own waits, so any value the process writes is its own business.
 *
 * <pre>{@code
 * // Process (VipCloseNic), over its mapping of the structures
 * new ViaCloseRequest().wrap(structures.buffer(), 0).request();
 * // Driver: wrapped once over host memory, then looked at in each connection wait of that process
 * ViaCloseRequest closeRequest = new ViaCloseRequest().wrap(host, (int)structuresAddress);
 * if (closeRequest.isRequested()) { ... }
 * }</pre>
 */
public final class ViaCloseRequest
{
    private AtomicBuffer buffer;
    private int offset;

    /** @param offset the VIA Process Structures' first byte in {@code buffer}. */
    public ViaCloseRequest wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** Process side: asks for the end of its connection waits. */
    public void request()
    {
        // Reader: the driver, in each connection wait of this process (ViaRequests.alive).
        buffer.putIntRelease(offset + ViaProcessStructuresLayout.CLOSE_REQUESTED_OFFSET, 1);
    }

    /** Driver side: @return true once the process asked (acquire). */
    public boolean isRequested()
    {
        return 0 != buffer.getIntVolatile(offset + ViaProcessStructuresLayout.CLOSE_REQUESTED_OFFSET);
    }
}
