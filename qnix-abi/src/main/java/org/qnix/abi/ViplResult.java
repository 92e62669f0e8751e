package org.qnix.abi;

/**
 * The VI Provider Library's return codes ({@code VIP_RESULT} of VIPL 1.0's {@code vipl.h}, in its
 * order, so {@link #code()} is the C value). libvipl returns them from its non-blocking calls and
 * carries them in its exception; the driver answers a refused VIA request with one
 * ({@link DriverProtocol#VIA_FAILED}).
 *
 * <pre>{@code
 * ViplResult result = ViplResult.of(code);   // from a VIA_FAILED reply
 * if (ViplResult.INVALID_PTAG == result) { ... }
 * }</pre>
 */
public enum ViplResult
{
    SUCCESS,
    NOT_DONE,
    INVALID_PARAMETER,
    ERROR_RESOURCE,
    TIMEOUT,
    REJECT,
    INVALID_RELIABILITY_LEVEL,
    INVALID_MTU,
    INVALID_QOS,
    INVALID_PTAG,
    INVALID_RDMAREAD,
    DESCRIPTOR_ERROR,
    INVALID_STATE,
    ERROR_NAMESERVICE,
    NO_MATCH;

    private static final ViplResult[] VALUES = values();

    /** @return the C value of {@code vipl.h}. */
    public int code()
    {
        return ordinal();
    }

    /** @return the result with a C value; an unknown value is {@link #INVALID_PARAMETER}'s business to report. */
    public static ViplResult of(final int code)
    {
        if (code < 0 || code >= VALUES.length)
        {
            throw new IllegalArgumentException("no VIPL result with code " + code);
        }
        return VALUES[code];
    }
}
