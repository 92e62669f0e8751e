package org.qnix.lib;

import java.nio.ByteBuffer;

import net.openhft.chronicle.bytes.Bytes;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.host.HostMemoryMapping;
import org.qnix.host.MappedViews;

/**
 * The process's Buffer Pool ({@code qx_buffer_pool}, thesis 3.3.1 and 3.6): pages that are locked and
 * translated once, for the process's whole life, and whose physical addresses the driver wrote into the
 * Buffer Pool of the process's Virtual Network Interface. It is virtually contiguous here; a buffer of
 * the pool always starts at a page, and a Send or Receive Context names it by its first page, the
 * Buffer Pool Index, so no page table is written per message. The pool is managed by the process: this
 * class hands out views, not allocations.
 *
 * <pre>{@code
 * BufferPool pool = qnix.bufferPool(16);                 // once per process, 1..Q pages
 * MutableDirectBuffer message = pool.slice(4, 1000);     // the buffer at Buffer Pool Index 4: a view to keep
 * message.putLong(0, 42L);
 * // post a Send Context with buffer pool index 4 and length 1000; the next message reuses the view
 * }</pre>
 *
 * <p>Retired by {@link Qnix#close()}: a view kept past it reads zeros and writes nowhere ({@link
 * org.qnix.host.RetiredMemory}); {@link #buffer()} throws. Not thread safe.
 */
public final class BufferPool
{
    private final int regionId;
    private final int pageSize;
    private final int maxMessageBytes;
    private final long[] pages;
    private final HostMemoryMapping mapping;
    private final MappedViews views;
    private final Qnix owner;
    private boolean closed;

    BufferPool(final Qnix owner, final int regionId, final int pageSize, final int maxMessageBytes,
        final long[] pages, final HostMemoryMapping mapping)
    {
        this.owner = owner;
        this.regionId = regionId;
        this.pageSize = pageSize;
        this.maxMessageBytes = maxMessageBytes;
        this.pages = pages;
        this.mapping = mapping;
        this.views = new MappedViews(mapping, 0, (int)mapping.length());
    }

    /** @return the pages of the pool. */
    public int pages()
    {
        return pages.length;
    }

    /** @return the physical address of page {@code page}: entry {@code page} of the VNI's Buffer Pool. */
    public long pageAddress(final int page)
    {
        if (page < 0 || page >= pages.length)
        {
            throw new IndexOutOfBoundsException("page " + page + " of a buffer pool of " + pages.length + " pages");
        }
        return pages[page];
    }

    /** @return an Agrona view of the whole pool, {@code pages() * pageSize} bytes; the same instance each call. */
    public MutableDirectBuffer buffer()
    {
        ensureOpen();
        return views.buffer();
    }

    /** @return a direct ByteBuffer over the whole pool, native byte order; the same instance each call. */
    public ByteBuffer byteBuffer()
    {
        ensureOpen();
        return views.byteBuffer();
    }

    /** @return a Chronicle Bytes view of the whole pool, zero copy, write position 0; made on first use. */
    public Bytes<?> bytes()
    {
        ensureOpen();
        return views.bytes();
    }

    /**
     * @return a new view of the buffer of the pool that starts at page {@code firstPage} (its Buffer Pool
     * Index) and holds {@code length} bytes: the memory a Send or Receive Context with that index uses.
     * Each call makes a view object: a program takes its views once and reuses them for every message.
     * @throws IllegalArgumentException if it does not fit the pool, or is longer than the largest message
     *                                  (thesis 3.3.1: transfers from the pool cannot exceed it).
     */
    public MutableDirectBuffer slice(final int firstPage, final int length)
    {
        ensureOpen();
        if (firstPage < 0 || firstPage >= pages.length)
        {
            throw new IllegalArgumentException("buffer pool index " + firstPage + " is outside [0, " + pages.length + ")");
        }
        if (length < 0 || length > maxMessageBytes)
        {
            throw new IllegalArgumentException("length " + length + " is outside [0, " + maxMessageBytes +
                "], the largest message");
        }
        if ((long)firstPage * pageSize + length > mapping.length())
        {
            throw new IllegalArgumentException(length + " bytes from buffer pool index " + firstPage +
                " run past the end of a pool of " + pages.length + " pages of " + pageSize + " bytes");
        }
        // Over the pool's ByteBuffer, not its address: a slice kept past Qnix.close() keeps the retired
        // range mapped (RetiredMemory) and reads zeros there.
        return new UnsafeBuffer(views.byteBuffer(), firstPage * pageSize, length);
    }

    /** @return the instance whose registration the pool is. */
    Qnix owner()
    {
        return owner;
    }

    int regionId()
    {
        return regionId;
    }

    /** Unmaps, once even if two threads close; for {@link Qnix#close()}: the pool lives as long as the registration. */
    synchronized void unmap()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        views.close();
    }

    private void ensureOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("the buffer pool (region " + regionId + ") is unmapped: its process closed");
        }
    }

    public String toString()
    {
        return "BufferPool{region " + regionId + ", " + pages.length + " pages of " + pageSize + " bytes" +
            (closed ? ", unmapped" : "") + "}";
    }
}
