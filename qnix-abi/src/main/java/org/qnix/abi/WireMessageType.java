package org.qnix.abi;

/**
 * Record types of the records in an {@code rx.fifo} ({@link RxFifo}), DESIGN.md 3.3. They must be
 * positive: {@link RxFifoLayout#PADDING_TYPE} is negative.
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
