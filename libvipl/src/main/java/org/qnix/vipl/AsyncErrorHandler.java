package org.qnix.vipl;

/**
 * {@code VipErrorCallback}'s handler: called from the NIC's async-error thread, one event at a time,
 * in the order the NIC reported them. It must not block for long: the next event waits for it.
 * {@link #DEFAULT} prints one line to standard error, as VIPL's default handler does.
 *
 * <pre>{@code
 * nic.onError(error -> lost.add(error.vi()));
 * nic.onError(AsyncErrorHandler.DEFAULT);     // back to the default
 * nic.onError(AsyncErrorHandler.DEFAULT.ignoring(AsyncError.Code.CONN_LOST));   // a peer's disconnect is no news
 * }</pre>
 */
@FunctionalInterface
public interface AsyncErrorHandler
{
    /** Prints {@link AsyncError#describe()} on standard error. */
    AsyncErrorHandler DEFAULT = error -> System.err.println(error.describe());

    /** @param error what the NIC (or the library, for a dead NIC or a lost event) reported. */
    void onError(AsyncError error);

    /**
     * @return a handler that passes every error but those of code {@code ignored} to this one: for a
     * program that learns of them otherwise (a lost peer shows in its flushed descriptors too).
     */
    default AsyncErrorHandler ignoring(final AsyncError.Code ignored)
    {
        return error ->
        {
            if (ignored != error.code())
            {
                onError(error);
            }
        };
    }
}
