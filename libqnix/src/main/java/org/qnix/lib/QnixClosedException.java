package org.qnix.lib;

import org.qnix.abi.ProcessName;

/**
 * The process's registration is closed ({@link Qnix#close()}, {@code qx_end}): every call after it, and
 * every call that was waiting when another thread closed (for a doorbell, for room in the Command Queue,
 * for a free context), ends with this. It is a {@link QnixException}, so a program that handles every
 * library failure in one place sees it there; it means what an {@code IllegalStateException} would (the
 * object was used after its end), and is not worth retrying.
 *
 * <pre>{@code
 * try
 * {
 *     qnix.waitForReceive(rx, status, 10, TimeUnit.SECONDS);
 * }
 * catch (QnixClosedException ex)
 * {
 *     return;   // another thread ended the process's registration: stop receiving
 * }
 * }</pre>
 */
public final class QnixClosedException extends QnixException
{
    private static final long serialVersionUID = 1L;

    public QnixClosedException(final ProcessName name)
    {
        super("QNIX process " + name + " is closed (qx_end was called)");
    }
}
