package org.qnix.vipl;

import org.qnix.abi.ViTableEntry;

/** VIA's reliability levels ({@code VIP_SERVICE_*}; VIA 1.0). */
public enum Reliability
{
    /** A message with no receive posted is dropped; the sender completes normally. */
    UNRELIABLE(ViTableEntry.UNRELIABLE),
    /** A send completes once its data is at the peer's NIC; any error breaks the connection. */
    RELIABLE_DELIVERY(ViTableEntry.RELIABLE_DELIVERY),
    /** A send completes once its data is in the receiver's memory; any error breaks the connection. */
    RELIABLE_RECEPTION(ViTableEntry.RELIABLE_RECEPTION);

    private final int code;

    Reliability(final int code)
    {
        this.code = code;
    }

    /** @return the level with a vipl.h value. */
    static Reliability of(final int code)
    {
        for (final Reliability level : values())
        {
            if (level.code == code)
            {
                return level;
            }
        }
        throw new IllegalArgumentException("no reliability level " + code);
    }

    /** @return the vipl.h value, as the NIC's VI table holds it. */
    public int code()
    {
        return code;
    }
}
