package org.qnix.lib;

/**
 * No Send or Receive Context is free (thesis 3.3.2): all M are in flight for longer than the wait
 * allowed, or completed and never polled.
 */
public final class QnixNoContextException extends QnixException
{
    private static final long serialVersionUID = 1L;

    public QnixNoContextException(final String message)
    {
        super(message);
    }
}
