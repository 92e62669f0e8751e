package org.qnix.lib;

import org.qnix.abi.Doorbell;

/**
 * An operation completed with an error doorbell (DESIGN.md 8, item 11). The doorbell is already Free
 * again when this is thrown, so the context can be reused. Subclasses name the common cases.
 *
 * <pre>{@code
 * try { qnix.waitForSend(ctx, 5, TimeUnit.SECONDS); }
 * catch (QnixPeerGoneException ex) { System.err.println("receiver left: " + ex.getMessage()); }
 * }</pre>
 */
public class QnixCompletionException extends QnixException
{
    private static final long serialVersionUID = 1L;

    private final int status;

    public QnixCompletionException(final int status, final String message)
    {
        super(message + ": " + Doorbell.name(status));
        this.status = status;
    }

    /** @return the error doorbell value, one of the {@link Doorbell} error codes. */
    public int status()
    {
        return status;
    }

    static QnixCompletionException of(final int status, final String what)
    {
        switch (status)
        {
            case Doorbell.PROTECTION:
                return new QnixProtectionException(what +
                    " names a page outside this process's locked memory; nothing was moved from or to it");
            case Doorbell.SEND_ABORTED:
                return new QnixCompletionException(status, what + ": the sender's NIC ended the message part-way" +
                    " (the sender freed or unlocked its buffer during the send); the buffer holds a prefix");
            case Doorbell.PEER_GONE:
                return new QnixPeerGoneException(what + ": the peer process is not (or no longer) registered");
            default:
                return new QnixCompletionException(status, what + " failed");
        }
    }
}
