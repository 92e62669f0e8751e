package org.qnix.host;

import java.nio.ByteBuffer;

import net.openhft.chronicle.bytes.Bytes;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The three views of one mapped range of host memory that buffers and the Buffer Pool hand out (DESIGN.md
 * 5): an Agrona buffer and a direct ByteBuffer made at once, a Chronicle Bytes made on first use, all over
 * the same bytes with no copy. {@link #close()} detaches them and unmaps.
 */
public final class MappedViews
{
    private final HostMemoryMapping mapping;
    private final UnsafeBuffer buffer;
    private final ByteBuffer byteBuffer;
    private ChronicleView bytes;

    /** Views of {@code length} bytes from {@code offset} of the mapping. */
    public MappedViews(final HostMemoryMapping mapping, final int offset, final int length)
    {
        this.mapping = mapping;
        this.buffer = new UnsafeBuffer(mapping.address() + offset, length);
        this.byteBuffer = mapping.byteBuffer(offset, length);
    }

    public HostMemoryMapping mapping()
    {
        return mapping;
    }

    public UnsafeBuffer buffer()
    {
        return buffer;
    }

    public ByteBuffer byteBuffer()
    {
        return byteBuffer;
    }

    public Bytes<?> bytes()
    {
        if (null == bytes)
        {
            bytes = new ChronicleView(byteBuffer);
        }
        return bytes.bytes();
    }

    /** Detaches the views (a kept Agrona view then has no bytes) and unmaps the memory. */
    public void close()
    {
        if (null != bytes)
        {
            bytes.release();
            bytes = null;
        }
        buffer.wrap(new byte[0]);
        mapping.close();
    }
}
