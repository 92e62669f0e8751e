package org.qnix.lib;

/**
 * The node's driver refused a request or could not be reached: no cluster, cluster down, a duplicate
 * name, no free Virtual Network Interface, and so on. {@link #code()} is a Doorbell error code or
 * {@code DriverProtocol.REFUSED}.
 */
public final class QnixDriverException extends QnixException
{
    private static final long serialVersionUID = 1L;

    private final int code;

    public QnixDriverException(final int code, final String message)
    {
        super(message);
        this.code = code;
    }

    public QnixDriverException(final String message, final Throwable cause)
    {
        super(message, cause);
        this.code = 0;
    }

    public int code()
    {
        return code;
    }
}
