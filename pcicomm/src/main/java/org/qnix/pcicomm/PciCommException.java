package org.qnix.pcicomm;

/**
 * A PCIComm call that could not be carried out, with the {@link Reason} (the seed's errno, 000 5.1.2).
 *
 * <pre>{@code
 * try { PciComm.connect("1-0", 7); }
 * catch (PciCommException ex) { if (PciCommException.Reason.NO_LISTENER == ex.reason()) { ... } }
 * }</pre>
 */
public class PciCommException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /** Why a call failed. */
    public enum Reason
    {
        /** Nobody listens on the node and cid ({@code ECONNREFUSED}). */
        NO_LISTENER,
        /** The cid is already listened on or connected on that node ({@code EADDRINUSE}). */
        CID_TAKEN,
        /** The peer disconnected: what it sent before is still received, nothing more moves. */
        PEER_DISCONNECTED,
        /** The connection broke: the peer died, or its NIC or ours reported an error ({@code ECONNRESET}). */
        CONNECTION_LOST,
        /** This end disconnected or closed the connection. */
        CLOSED,
        /** A wait ended before what it waited for happened. */
        TIMEOUT,
        /**
         * The VIPL refused a resource (NIC, memory, VI), the cluster is not there, or a connection
         * holds the most preposted buffers it may.
         */
        RESOURCE
    }

    private final Reason reason;

    public PciCommException(final Reason reason, final String message)
    {
        super(reason + ": " + message);
        this.reason = reason;
    }

    public PciCommException(final Reason reason, final String message, final Throwable cause)
    {
        super(reason + ": " + message, cause);
        this.reason = reason;
    }

    public Reason reason()
    {
        return reason;
    }
}
