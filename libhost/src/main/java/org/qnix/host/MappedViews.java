package org.qnix.host;

import java.nio.ByteBuffer;

import net.openhft.chronicle.bytes.Bytes;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The three views of one mapped range of host memory that buffers and the Buffer Pool hand out (DESIGN.md
 * 5): an Agrona buffer and a direct ByteBuffer made at once, a Chronicle Bytes made on first use, all over
 * the same bytes with no copy. {@link #close()} detaches the Agrona view and retires the range.
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
        this.byteBuffer = mapping.byteBuffer(offset, length);
        // Over the ByteBuffer, which keeps the mapping's range reachable, so a kept view never
        // outlives it (RetiredMemory).
        this.buffer = new UnsafeBuffer(byteBuffer);
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

    /**
     * Detaches the Agrona view (kept, it has no bytes: IndexOutOfBoundsException) and retires the memory
     * ({@link HostMemoryMapping#close()}): a kept ByteBuffer reads zeros. The Agrona view keeps its
     * address and only loses its capacity, so a thread that passed its bounds check just before reads
     * the retired range, not some other memory.
     */
    public void close()
    {
        if (null != bytes)
        {
            bytes.release();
            bytes = null;
        }
        buffer.wrap(byteBuffer, 0, 0);
        mapping.close();
    }
}
