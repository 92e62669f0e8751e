package org.qnix.lib;

/** The NIC control program of this node stopped (no heartbeat), so nothing waited for can complete. */
public final class QnixNicDeadException extends QnixException
{
    private static final long serialVersionUID = 1L;

    public QnixNicDeadException(final String message)
    {
        super(message);
    }
}
