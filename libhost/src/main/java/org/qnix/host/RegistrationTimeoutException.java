package org.qnix.host;

import java.util.List;

import org.qnix.abi.ProcessName;

/** The driver's TIMED_OUT reply to a registration: the group was not complete in time. */
public final class RegistrationTimeoutException extends DriverException
{
    private static final long serialVersionUID = 1L;

    private final transient List<ProcessName> missing;

    public RegistrationTimeoutException(final String message, final List<ProcessName> missing)
    {
        super(org.qnix.abi.DriverProtocol.TIMED_OUT, message);
        this.missing = List.copyOf(missing);
    }

    /** @return the members of the group that had not registered, as far as the driver named them. */
    public List<ProcessName> missing()
    {
        return missing;
    }
}
