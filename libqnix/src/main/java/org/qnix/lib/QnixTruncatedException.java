package org.qnix.lib;

import org.qnix.abi.Doorbell;
import org.qnix.abi.ProcessName;

/**
 * A message longer than the receive buffer arrived (DESIGN.md 8, item 3): the buffer holds its prefix,
 * and this says who sent it, with which tag and how long it was.
 *
 * <pre>{@code
 * try { qnix.waitForReceive(ctx, status, 5, TimeUnit.SECONDS); }
 * catch (QnixTruncatedException ex) { int got = capacity; long sent = ex.messageLength(); }
 * }</pre>
 */
public final class QnixTruncatedException extends QnixCompletionException
{
    private static final long serialVersionUID = 1L;

    private final ProcessName source;
    private final int tag;
    private final long messageLength;

    public QnixTruncatedException(final ProcessName source, final int tag, final long messageLength, final long capacity)
    {
        super(Doorbell.TRUNCATED, "a message of " + messageLength + " bytes from " + source + " with tag " + tag +
            " did not fit the receive buffer of " + capacity + " bytes; its prefix was delivered");
        this.source = source;
        this.tag = tag;
        this.messageLength = messageLength;
    }

    public ProcessName source()
    {
        return source;
    }

    public int tag()
    {
        return tag;
    }

    public long messageLength()
    {
        return messageLength;
    }
}
