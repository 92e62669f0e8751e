package org.qnix.lib;

/** Any failure of a QNIX library call; subclasses say which kind. */
public class QnixException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public QnixException(final String message)
    {
        super(message);
    }

    public QnixException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
