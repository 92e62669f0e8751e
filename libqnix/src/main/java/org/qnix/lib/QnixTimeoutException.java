package org.qnix.lib;

import java.util.List;

import org.qnix.abi.ProcessName;

/**
 * A bounded wait ran out: {@code Qnix.init} waiting for the rest of its group (the message and
 * {@link #missing()} name who never arrived), a poll with a timeout, or a Command Queue that stayed
 * full.
 */
public final class QnixTimeoutException extends QnixException
{
    private static final long serialVersionUID = 1L;

    private final transient List<ProcessName> missing;

    public QnixTimeoutException(final String message, final List<ProcessName> missing)
    {
        super(message);
        this.missing = List.copyOf(missing);
    }

    public QnixTimeoutException(final String message)
    {
        this(message, List.of());
    }

    /** @return the group members that never registered (empty if unknown). */
    public List<ProcessName> missing()
    {
        return missing;
    }
}
