package org.qnix.lib;

import org.qnix.abi.Doorbell;

/** The peer of an operation is not registered, or de-registered before it completed (DESIGN.md 8, item 12). */
public final class QnixPeerGoneException extends QnixCompletionException
{
    private static final long serialVersionUID = 1L;

    public QnixPeerGoneException(final String message)
    {
        super(Doorbell.PEER_GONE, message);
    }
}
