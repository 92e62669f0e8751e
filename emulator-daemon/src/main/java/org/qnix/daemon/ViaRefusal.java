package org.qnix.daemon;

import org.qnix.abi.ViplResult;

/** A VIA request the driver refuses, with the VIPL code the library reports (issue 14). */
final class ViaRefusal extends Exception
{
    private static final long serialVersionUID = 1L;

    private final ViplResult result;

    ViaRefusal(final ViplResult result, final String message)
    {
        super(message, null, false, false);
        this.result = result;
    }

    ViplResult result()
    {
        return result;
    }
}
