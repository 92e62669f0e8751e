package org.qnix.lib;

import org.qnix.abi.ProcessName;
import org.qnix.host.DriverException;
import org.qnix.host.MappingGuard;

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

    /**
     * The API's error for a driver request's: closed if the process closed meanwhile (its socket with it),
     * else this exception with the driver's code, or its cause if the socket failed.
     */
    static QnixException of(final DriverException ex, final MappingGuard guard, final ProcessName name)
    {
        if (guard.isClosed())
        {
            final QnixClosedException closed = new QnixClosedException(name);
            closed.initCause(ex);
            return closed;
        }
        return of(ex);
    }

    /** @return this exception with the driver's code, or with the cause if the socket failed (code 0). */
    static QnixDriverException of(final DriverException ex)
    {
        return 0 == ex.code() ?
            new QnixDriverException(ex.getMessage(), ex.getCause()) : new QnixDriverException(ex.code(), ex.getMessage());
    }
}
