package org.qnix.host;

import org.qnix.abi.ViplResult;

/**
 * The driver refused a VIA request (issue 14; a {@code VIA_FAILED} reply) with the VIPL code the
 * library reports. libvipl turns it into its {@code ViplException}.
 */
public final class ViaDriverException extends DriverException
{
    private static final long serialVersionUID = 1L;

    private final ViplResult result;

    public ViaDriverException(final ViplResult result, final String message)
    {
        super(result.code(), message);
        this.result = result;
    }

    public ViplResult result()
    {
        return result;
    }
}
