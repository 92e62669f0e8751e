package org.qnix.abi;

/**
 * Message type ids of the records in an {@code rx.fifo} (the Agrona ring buffer's msgTypeId), DESIGN.md
 * 3.3. They must be positive for Agrona.
 */
public final class WireMessageType
{
    public static final int DATA_PACKET = 1;
    public static final int SYSTEM_MESSAGE = 2;
    public static final int VIA_PACKET = 3;

    private WireMessageType()
    {
    }
}
