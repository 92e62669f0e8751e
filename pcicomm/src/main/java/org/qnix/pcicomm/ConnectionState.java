package org.qnix.pcicomm;

/**
 * A connection's states: the four of seed 000 (5.1.1), and {@link #CLOSED}, the seed's "destroyed and
 * its resources freed", once CLOSING drained.
 */
public enum ConnectionState
{
    /** Waiting for a peer's {@code connect} on the node and cid ({@code pcic_listen}). */
    LISTENING,
    /** A connection request is on its way, or being accepted. */
    CONNECTING,
    /** Data flows both ways. */
    CONNECTED,
    /** {@code disconnect()} was called or the peer disconnected: the I/O in flight drains. */
    CLOSING,
    /** Nothing moves any more; the buffers already received can still be taken. */
    CLOSED
}
