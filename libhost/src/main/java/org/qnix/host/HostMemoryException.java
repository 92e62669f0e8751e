package org.qnix.host;

/**
 * Pages of host memory could not be mapped into this process: the kernel refused a mapping, or the
 * process's buffers would pass its limit of mappings ({@code MappingBudget}). A user library turns it
 * into its own API's error (libqnix: a {@code QnixException} with the same message).
 */
public class HostMemoryException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public HostMemoryException(final String message)
    {
        super(message);
    }

    public HostMemoryException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
