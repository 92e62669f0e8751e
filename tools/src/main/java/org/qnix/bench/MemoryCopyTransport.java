package org.qnix.bench;

import java.nio.ByteBuffer;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * The bandwidth floor: one thread copying each message from one off-heap buffer into another, the
 * single copy any transfer between two processes makes at least. No peer JVM.
 */
public final class MemoryCopyTransport implements BandwidthTransport
{
    private final UnsafeBuffer from;
    private final UnsafeBuffer to;
    private final int maxSize;

    private MemoryCopyTransport(final int maxSize)
    {
        this.maxSize = maxSize;
        this.from = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(1, maxSize)));
        this.to = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(1, maxSize)));
    }

    public static MemoryCopyTransport start(final int maxSize)
    {
        return new MemoryCopyTransport(maxSize);
    }

    public String name()
    {
        return "floor";
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void stream(final int size, final int messages, final int window)
    {
        for (int m = 0; m < messages; m++)
        {
            from.putByte(0, (byte)m);
            to.putBytes(0, from, 0, size);
        }
        if (size > 0 && to.getByte(0) != (byte)(messages - 1))
        {
            throw new IllegalStateException("the copy went wrong");
        }
    }

    public void close()
    {
    }
}
