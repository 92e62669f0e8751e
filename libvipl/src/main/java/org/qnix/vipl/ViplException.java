package org.qnix.vipl;

import java.util.concurrent.TimeUnit;

import org.qnix.abi.DriverProtocol;
import org.qnix.abi.ViplResult;
import org.qnix.host.DriverException;
import org.qnix.host.ViaDriverException;

/**
 * A VIPL call that could not be carried out, with the {@code VIP_RESULT} code VIPL 1.0 gives for it
 * ({@link #result()}). The message says why, in the driver's words where the driver refused.
 *
 * <pre>{@code
 * try { ptag.close(); }
 * catch (ViplException ex) { if (ViplResult.ERROR_RESOURCE == ex.result()) { ... still in use ... } }
 * }</pre>
 */
public class ViplException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final ViplResult result;

    /**
     * @param result the VIPL code.
     * @param message why, for people.
     *
     * <pre>{@code
     * throw new ViplException(ViplResult.INVALID_PARAMETER, "no such VI");
     * }</pre>
     */
    public ViplException(final ViplResult result, final String message)
    {
        super(result + ": " + message);
        this.result = result;
    }

    /**
     * @param cause what the library met underneath.
     *
     * <pre>{@code
     * throw new ViplException(ViplResult.ERROR_RESOURCE, ex.getMessage(), ex);
     * }</pre>
     */
    public ViplException(final ViplResult result, final String message, final Throwable cause)
    {
        super(result + ": " + message, cause);
        this.result = result;
    }

    /**
     * @return the VIPL code ({@code VIP_RESULT}).
     *
     * <pre>{@code
     * if (ViplResult.TIMEOUT == ex.result()) { retry(); }
     * }</pre>
     */
    public ViplResult result()
    {
        return result;
    }

    /** @return the exception for a driver's refusal: its VIPL code, or ERROR_RESOURCE for the rest. */
    static ViplException of(final DriverException ex)
    {
        if (ex instanceof ViaDriverException)
        {
            return new ViplException(((ViaDriverException)ex).result(), ex.getMessage());
        }
        if (DriverProtocol.REFUSED == ex.code())
        {
            return new ViplException(ViplResult.INVALID_PARAMETER, ex.getMessage());
        }
        return new ViplException(ViplResult.ERROR_RESOURCE, ex.getMessage(), ex);
    }

    /**
     * @return {@code timeoutMs}, a wait's timeout, once checked: 0 looks once, a long one waits that long.
     * @throws ViplException {@code INVALID_PARAMETER} for a negative one, which would otherwise wait for ever.
     */
    static long checkedTimeout(final long timeoutMs)
    {
        if (timeoutMs < 0)
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "a timeout of " + timeoutMs +
                " ms is negative: 0 looks once, a positive one waits up to that long");
        }
        return timeoutMs;
    }

    /** @return {@link #checkedTimeout(long)}, in ns, for a wait on the NIC's words. */
    static long checkedTimeoutNs(final long timeoutMs)
    {
        return TimeUnit.MILLISECONDS.toNanos(checkedTimeout(timeoutMs));
    }
}
