package org.qnix.host;

import org.qnix.abi.ContextRegionDescriptor;

/**
 * The page table of a byte range of a {@link QnixBuffer}, as {@code qx_buffer_translate} gives it
 * (thesis 3.6): one descriptor per page the range touches, each with the page's physical address, the
 * offset of the range's bytes inside that page and how many of them there are. It is what goes into a
 * Context Region's Descriptors (Address, Offset, Len; thesis 3.3.1), so it holds at most K descriptors,
 * {@code ClusterParameters.descriptorsPerRegion()}: enough for a largest message at any alignment.
 *
 * <p>Reusable and allocation free once made: translate into the same table for every message. Not
 * thread safe.
 *
 * <pre>{@code
 * PageTable table = new PageTable(qnix.parameters().descriptorsPerRegion());
 * buffer.translate(0, messageLength, table);
 * for (int i = 0; i < table.descriptors(); i++)
 * {
 *     writeDescriptor(i, table.address(i), table.offset(i), table.length(i));
 * }
 * }</pre>
 */
public final class PageTable
{
    private final long[] addresses;
    private final int[] offsets;
    private final int[] lengths;
    private int descriptors;
    private int totalLength;

    /**
     * @param capacity the most descriptors the table holds: K, {@code descriptorsPerRegion()}.
     */
    public PageTable(final int capacity)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("page table capacity " + capacity + " must be at least 1");
        }
        addresses = new long[capacity];
        offsets = new int[capacity];
        lengths = new int[capacity];
    }

    /** @return the most descriptors this table holds (K). */
    public int capacity()
    {
        return addresses.length;
    }

    /** @return how many descriptors the last translation produced; 0 for an empty range. */
    public int descriptors()
    {
        return descriptors;
    }

    /** @return the physical address of the page of descriptor {@code i} (page aligned). */
    public long address(final int i)
    {
        return addresses[checkIndex(i)];
    }

    /** @return the offset inside the page where descriptor {@code i}'s bytes start. */
    public int offset(final int i)
    {
        return offsets[checkIndex(i)];
    }

    /** @return how many bytes of the page descriptor {@code i} covers. */
    public int length(final int i)
    {
        return lengths[checkIndex(i)];
    }

    /** @return the bytes of the translated range: the sum of every descriptor's length. */
    public int totalLength()
    {
        return totalLength;
    }

    /**
     * Fills the table with the range {@code [start, start + length)} of a run of pages, where
     * {@code start} counts from the beginning of the first page. For the library that hands out the
     * buffer (its {@code translate}); a program asks its buffer instead.
     */
    public void fill(final long[] pages, final int pageSize, final long start, final int length)
    {
        final int needed = ContextRegionDescriptor.pagesTouched(pageSize, start, length);
        if (needed > addresses.length)
        {
            throw new IllegalArgumentException("a range of " + length + " bytes starting " + (start % pageSize) +
                " bytes into a page spans " + needed + " pages, more than the K=" + addresses.length +
                " descriptors of a page table (one Context Region, thesis 3.3.1)");
        }
        long position = start;
        int remaining = length;
        for (int i = 0; i < needed; i++)
        {
            final int page = (int)(position / pageSize);
            final int offset = (int)(position % pageSize);
            final int bytes = Math.min(remaining, pageSize - offset);
            addresses[i] = pages[page];
            offsets[i] = offset;
            lengths[i] = bytes;
            position += bytes;
            remaining -= bytes;
        }
        descriptors = needed;
        totalLength = length;
    }

    private int checkIndex(final int i)
    {
        if (i < 0 || i >= descriptors)
        {
            throw new IndexOutOfBoundsException("descriptor " + i + " of a page table of " + descriptors);
        }
        return i;
    }

    public String toString()
    {
        final StringBuilder text = new StringBuilder("PageTable{").append(totalLength).append(" bytes:");
        for (int i = 0; i < descriptors; i++)
        {
            text.append(' ').append(Long.toHexString(addresses[i])).append('+').append(offsets[i])
                .append('/').append(lengths[i]);
        }
        return text.append('}').toString();
    }
}
