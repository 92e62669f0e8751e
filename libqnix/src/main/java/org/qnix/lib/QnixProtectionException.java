package org.qnix.lib;

import org.qnix.abi.Doorbell;

/** The NIC refused a page address this process has not locked (DESIGN.md 8, item 10); no byte moved. */
public final class QnixProtectionException extends QnixCompletionException
{
    private static final long serialVersionUID = 1L;

    public QnixProtectionException(final String message)
    {
        super(Doorbell.PROTECTION, message);
    }
}
