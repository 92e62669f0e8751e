package org.qnix.vipl;

/** A VI's state (VIA 1.0; {@code VipQueryVi}): Idle -> Connect Pending -> Connected -> Error -> (disconnect) -> Idle. */
public enum ViState
{
    IDLE,
    CONNECT_PENDING,
    CONNECTED,
    ERROR
}
