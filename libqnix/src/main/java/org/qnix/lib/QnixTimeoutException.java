package org.qnix.lib;

import java.util.List;

import org.qnix.abi.ProcessName;

/**
 * {@code Qnix.init} gave up waiting for the rest of its group; the message and {@link #missing()} name
 * who never arrived.
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

    /** @return the group members that never registered (empty if unknown). */
    public List<ProcessName> missing()
    {
        return missing;
    }
}
