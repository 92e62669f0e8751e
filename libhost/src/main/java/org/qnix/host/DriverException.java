package org.qnix.host;

/**
 * The node's driver refused a request, answered out of protocol, or could not be reached. {@link #code()}
 * is the FAILED reply's code (a Doorbell error code, {@code DriverProtocol.REFUSED} or
 * {@code DriverProtocol.NIC_DEAD}), the type of an unexpected reply, or 0 when the connection was lost.
 * A user library turns it into its own API's error (libqnix: {@code QnixDriverException}).
 */
public class DriverException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final int code;

    public DriverException(final int code, final String message)
    {
        super(message);
        this.code = code;
    }

    public DriverException(final String message, final Throwable cause)
    {
        super(message, cause);
        this.code = 0;
    }

    public int code()
    {
        return code;
    }
}
