package org.qnix.lib;

import java.nio.ByteBuffer;

import net.openhft.chronicle.bytes.Bytes;
import org.agrona.MutableDirectBuffer;
import org.qnix.host.HostMemoryMapping;
import org.qnix.host.MappedViews;
import org.qnix.host.PageTable;

/**
 * A buffer for DMA in the node's host memory ({@code host.mem}), handed out by the driver and mapped
 * into this process only (thesis 3.6; DESIGN.md 3.2). Data to send is composed in it and received data
 * lands in it, with no copy: the NIC moves bytes straight between it and the wire. Before the NIC may
 * touch it the buffer must be locked ({@code qx_buffer_lock}), and the page table of the bytes to move
 * is what {@link #translate} gives ({@code qx_buffer_translate}). The NIC checks every page it is told
 * about against the driver's Translation and Protection Table (DESIGN.md 8, item 10): a page of an
 * unlocked, freed or foreign buffer completes the operation with a protection-error doorbell. A page
 * freed and then given to another buffer of the same process would pass that check, so the pages of a
 * buffer closed while an operation posted on it is in flight are given back once it is done ({@link #close()}).
 *
 * <p>The buffer is {@link #length()} bytes starting {@link #firstPageOffset()} bytes into its first
 * page, so a receive buffer can share the alignment of the sender's; its pages are physically contiguous
 * or scattered, as asked, and always virtually contiguous here. {@link #buffer()}, {@link #byteBuffer()}
 * and {@link #bytes()} are three views of the same memory: Agrona for flyweights, NIO for channels,
 * Chronicle Bytes to compose and parse messages in place.
 *
 * <pre>{@code
 * try (QnixBuffer buffer = qnix.allocateBuffer(64 * 1024))
 * {
 *     buffer.buffer().putStringAscii(0, "hello");   // compose in place
 *     buffer.lock();                                 // the NIC may now DMA from it
 *     PageTable pages = buffer.translate();          // what the Send Context's region describes
 *     // ... send, wait for the doorbell ...
 *     buffer.unlock();
 * }
 * }</pre>
 *
 * <p>Not thread safe. {@link #close()} (or {@link Qnix#close()}) unmaps the memory: no view may be used
 * afterwards; {@link #buffer()} then refuses, and a view kept from before must not be touched.
 */
public final class QnixBuffer implements AutoCloseable
{
    private final Qnix qnix;
    private final int regionId;
    private final int length;
    private final int firstPageOffset;
    private final int pageSize;
    private final long[] pages;
    private final MappedViews views;
    private int lockCount;
    /** Volatile: a post on the posting thread reads it against a close on another (BuffersInFlight). */
    private volatile boolean closed;

    QnixBuffer(final Qnix qnix, final int regionId, final int length, final int firstPageOffset, final int pageSize,
        final long[] pages, final HostMemoryMapping mapping)
    {
        this.qnix = qnix;
        this.regionId = regionId;
        this.length = length;
        this.firstPageOffset = firstPageOffset;
        this.pageSize = pageSize;
        this.pages = pages;
        this.views = new MappedViews(mapping, firstPageOffset, length);
    }

    /** @return the bytes the buffer holds, as asked at allocation. */
    public int length()
    {
        return length;
    }

    /** @return where the buffer starts inside its first page. */
    public int firstPageOffset()
    {
        return firstPageOffset;
    }

    /** @return the pages the buffer spans: at least one, even for an empty buffer. */
    public int pages()
    {
        return pages.length;
    }

    /** @return the physical address (offset in {@code host.mem}) of page {@code page}, page aligned. */
    public long pageAddress(final int page)
    {
        if (page < 0 || page >= pages.length)
        {
            throw new IndexOutOfBoundsException("page " + page + " of a buffer of " + pages.length + " pages");
        }
        return pages[page];
    }

    /** @return the page addresses themselves, for writing a Context Region; callers must not change them. */
    long[] pageAddresses()
    {
        return pages;
    }

    /** @return true if the pages are one physically contiguous run. */
    public boolean isContiguous()
    {
        return HostMemoryMapping.isContiguous(pages, pageSize);
    }

    /**
     * @return an Agrona view of exactly the buffer's {@link #length()} bytes; index 0 is the byte at
     * {@link #firstPageOffset()} of the first page. The same instance on every call.
     */
    public MutableDirectBuffer buffer()
    {
        ensureOpen();
        return views.buffer();
    }

    /**
     * @return a direct {@link ByteBuffer} over the same bytes as {@link #buffer()}, in native byte order
     * (as Agrona reads them). The same instance on every call: its position and limit are the caller's.
     */
    public ByteBuffer byteBuffer()
    {
        ensureOpen();
        return views.byteBuffer();
    }

    /**
     * A Chronicle Bytes view of the same bytes, zero copy, made on first use. Its write position starts at
     * 0 for composing a message; to parse {@code n} received bytes use
     * {@code bytes().readPositionRemaining(0, n)}.
     *
     * <pre>{@code
     * Bytes<?> out = buffer.bytes();
     * out.writeInt(42).writeUtf8("hello");
     * int messageLength = (int)out.writePosition();
     * }</pre>
     */
    public Bytes<?> bytes()
    {
        ensureOpen();
        return views.bytes();
    }

    /**
     * {@code qx_buffer_lock}: asks the driver to lock the buffer's pages for DMA. Locks nest: each
     * {@code lock()} needs one {@link #unlock()}. Also attempts the real {@code mlock} of the pages, best
     * effort: on a machine that refuses it one warning is printed per JVM and the lock still holds for the
     * NIC, which honours only the driver's count (PLATFORM.md).
     *
     * @throws QnixDriverException if the driver refuses, e.g. at the most nested locks a page can hold.
     */
    public void lock()
    {
        ensureOpen();
        lockCount = qnix.lockBuffer(regionId, true);
        if (1 == lockCount)
        {
            views.mapping().mlock();
        }
    }

    /**
     * {@code qx_buffer_unlock}: undoes one {@link #lock()}; at zero the NIC may no longer DMA to or from
     * the buffer.
     *
     * @throws QnixDriverException with code {@code DriverProtocol.REFUSED} if the buffer is not locked.
     */
    public void unlock()
    {
        ensureOpen();
        lockCount = qnix.lockBuffer(regionId, false);
        if (0 == lockCount)
        {
            views.mapping().munlock();
        }
    }

    /** @return how many {@link #lock()} calls are not yet undone. */
    public int lockCount()
    {
        return lockCount;
    }

    public boolean isLocked()
    {
        return lockCount > 0;
    }

    /**
     * {@code qx_buffer_translate} of the whole buffer into a new table of K descriptors: three arrays
     * of K entries each time, so a loop that translates per message keeps one table and calls
     * {@link #translate(int, int, PageTable)} instead.
     *
     * <pre>{@code
     * PageTable pages = receive.translate();             // once, after lock()
     * receive.translate(0, 4096, pages);                  // again, into the same table, allocating nothing
     * }</pre>
     *
     * @see #translate(int, int, PageTable)
     */
    public PageTable translate()
    {
        final PageTable table = new PageTable(qnix.parameters().descriptorsPerRegion());
        translate(0, length, table);
        return table;
    }

    /**
     * {@code qx_buffer_translate}: the page table of bytes {@code [offset, offset + length)} of the
     * buffer, computed here from the physical addresses the driver gave at allocation, with no call.
     * An empty range gives no descriptors.
     *
     * @throws IllegalArgumentException if the range is not inside the buffer, or spans more pages than
     *                                  {@code into} holds.
     */
    public void translate(final int offset, final int length, final PageTable into)
    {
        ensureOpen();
        if (offset < 0 || length < 0 || (long)offset + length > this.length)
        {
            throw new IllegalArgumentException("range [" + offset + ", " + ((long)offset + length) +
                ") is not inside a buffer of " + this.length + " bytes");
        }
        into.fill(pages, pageSize, (long)firstPageOffset + offset, length);
    }

    /** @return true once closed, by {@link #close()} or {@link Qnix#close()}. */
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * Unmaps the buffer and gives its pages back to the driver, locked or not. Idempotent. While a Send
     * or Receive posted on it has not completed, its pages stay this process's until it has (they are
     * given back at the next context taken after, or with {@link Qnix#close()}): the NIC may still move
     * their bytes, and as the next buffer's pages they would pass its check. What such a receive brings
     * is lost with the buffer. A context made on it and not yet posted is refused when posted.
     *
     * @throws QnixDriverException if the driver cannot be reached; the buffer is unmapped anyway.
     */
    public void close()
    {
        if (closed)
        {
            return;
        }
        // Unmapped before the driver frees the pages: they may belong to another process right after.
        unmap();
        qnix.freeBuffer(this);
    }

    /** @return the instance that allocated it. */
    Qnix owner()
    {
        return qnix;
    }

    int regionId()
    {
        return regionId;
    }

    /**
     * Unmaps without telling the driver: for {@link Qnix#close()}, where de-registration frees all.
     * Synchronized because that close may run on another thread than the buffer's own {@link #close()}:
     * the memory must be unmapped once, never a second time over whatever was mapped there since.
     */
    synchronized void unmap()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        lockCount = 0;
        views.close();
    }

    private void ensureOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("buffer region " + regionId + " is closed");
        }
    }

    public String toString()
    {
        return "QnixBuffer{region " + regionId + ", " + length + " bytes at page offset " + firstPageOffset + ", " +
            pages.length + (isContiguous() ? " contiguous" : " scattered") + " pages, lock count " + lockCount +
            (closed ? ", closed" : "") + "}";
    }
}
