package org.qnix.lib;

import org.qnix.abi.Doorbell;
import org.qnix.abi.ProcessName;

/**
 * What a completed receive reports (DESIGN.md 8, item 3): status, the actual source and tag (which
 * matter for {@code ANY_PROC} / {@code ANY_TAG} receives) and the message length. Reusable: pass the
 * same object to every poll, nothing is allocated.
 *
 * <pre>{@code
 * ReceiveStatus status = new ReceiveStatus();
 * qnix.waitForReceive(ctx, status, 5, TimeUnit.SECONDS);
 * System.out.println(status.length() + " bytes from " + status.source() + " tag " + status.tag());
 * }</pre>
 */
public final class ReceiveStatus
{
    int status;
    int sourceAi;
    int sourcePi;
    int tag;
    long length;

    /** @return {@link Doorbell#DONE}, or the error doorbell the receive completed with. */
    public int status()
    {
        return status;
    }

    public int sourceAi()
    {
        return sourceAi;
    }

    public int sourcePi()
    {
        return sourcePi;
    }

    public ProcessName source()
    {
        return new ProcessName(sourceAi, sourcePi);
    }

    public int tag()
    {
        return tag;
    }

    /** @return the length of the message that was sent (more than was delivered if truncated). */
    public long length()
    {
        return length;
    }

    public String toString()
    {
        return "ReceiveStatus{" + Doorbell.name(status) + " from (" + sourceAi + "," + sourcePi + ") tag " + tag +
            " length " + length + "}";
    }
}
