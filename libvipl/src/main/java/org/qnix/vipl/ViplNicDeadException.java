package org.qnix.vipl;

import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplResult;

/**
 * The NIC's control program stopped (its firmware died or was stopped): nothing posted to it can
 * complete, so every wait on it ({@link Vi#sendWait}, {@link Vi#recvWait}, {@link CompletionQueue#await},
 * {@link ViplNic#connectWait}, {@link ViplNic#connectRequest}, {@link Vi#connectPeerWait}) ends with this
 * instead of its timeout (issue 14: "A stopped NIC ends
 * waits with a NIC-dead exception"). VIPL 1.0 has no code of its own for it: {@link #result()} is
 * {@code ERROR_RESOURCE}, and the NIC's error handler gets a {@code CATASTROPHIC} event of resource
 * NIC at the same time.
 *
 * <pre>{@code
 * try { vi.recvWait(10_000); }
 * catch (ViplNicDeadException ex) { System.err.println("NIC " + ex.node() + " is gone: " + ex.getMessage()); }
 * }</pre>
 */
public final class ViplNicDeadException extends ViplException
{
    private static final long serialVersionUID = 1L;

    private final transient NicCoordinates node;

    ViplNicDeadException(final NicCoordinates node, final String message)
    {
        super(ViplResult.ERROR_RESOURCE, message);
        this.node = node;
    }

    /** @return the node whose NIC stopped. */
    public NicCoordinates node()
    {
        return node;
    }
}
