package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * A flyweight over the Descriptors of a Context Region ({@link ContextRegionLayout}, thesis 3.3.1): one
 * per host page of a buffer, written by the owner process ({@code qx_buffer_translate}) and read by the
 * NIC after it took the command naming the context, whose release published them. Wrap the region,
 * then address a Descriptor by its index.
 *
 * <pre>{@code
 * ContextRegionDescriptor region = new ContextRegionDescriptor().wrap(vni, layout.sendContextRegionOffset(c));
 * int pages = region.translate(pageAddresses, pageSize, start, length, capacity);   // process side
 * long address = region.address(0);                                                 // NIC side
 * }</pre>
 */
public final class ContextRegionDescriptor
{
    private AtomicBuffer buffer;
    private int region;

    /** Wraps the Context Region starting at {@code regionOffset}. */
    public ContextRegionDescriptor wrap(final AtomicBuffer buffer, final int regionOffset)
    {
        this.buffer = buffer;
        this.region = regionOffset;
        return this;
    }

    /** Process side: Descriptor {@code i} of the region, marked valid. Plain stores (see class comment). */
    public void put(final int i, final long pageAddress, final int offsetInPage, final int length)
    {
        final int d = descriptor(i);
        buffer.putLong(d + ContextRegionLayout.ADDRESS_OFFSET, pageAddress);
        buffer.putShort(d + ContextRegionLayout.OFFSET_OFFSET, (short)offsetInPage);
        buffer.putShort(d + ContextRegionLayout.FLAG_OFFSET, ContextRegionLayout.FLAG_VALID);
        buffer.putInt(d + ContextRegionLayout.LEN_OFFSET, length);
    }

    /**
     * Process side, {@code qx_buffer_translate}: the Descriptors of the bytes {@code [start, start + length)}
     * of a run of pages, where {@code start} counts from the beginning of {@code pageAddresses[0]}'s page.
     *
     * @param capacity the region's K Descriptors.
     * @return the Descriptors written (pages touched); 0 for an empty range.
     * @throws IllegalArgumentException if the range touches more than {@code capacity} pages or runs past
     *                                  the pages given.
     */
    public int translate(final long[] pageAddresses, final int pageSize, final long start, final int length,
        final int capacity)
    {
        final int needed = pagesTouched(pageSize, start, length);
        if (needed > capacity)
        {
            throw new IllegalArgumentException("a range of " + length + " bytes starting " + (start % pageSize) +
                " bytes into a page spans " + needed + " pages, more than the K=" + capacity +
                " Descriptors of a Context Region (thesis 3.3.1)");
        }
        if (needed > 0 && (start + length - 1) / pageSize >= pageAddresses.length)
        {
            throw new IllegalArgumentException("a range ending at byte " + (start + length) + " runs past the " +
                pageAddresses.length + " pages of the buffer");
        }
        long position = start;
        int remaining = length;
        for (int i = 0; i < needed; i++)
        {
            final int inPage = (int)(position % pageSize);
            final int bytes = Math.min(remaining, pageSize - inPage);
            put(i, pageAddresses[(int)(position / pageSize)], inPage, bytes);
            position += bytes;
            remaining -= bytes;
        }
        return needed;
    }

    /** @return the pages the bytes {@code [start, start + length)} touch: 0 for an empty range. */
    public static int pagesTouched(final int pageSize, final long start, final int length)
    {
        return 0 == length ? 0 : (int)((start + length - 1) / pageSize - start / pageSize + 1);
    }

    public long address(final int i)
    {
        return buffer.getLong(descriptor(i) + ContextRegionLayout.ADDRESS_OFFSET);
    }

    public int offsetInPage(final int i)
    {
        return buffer.getShort(descriptor(i) + ContextRegionLayout.OFFSET_OFFSET) & 0xFFFF;
    }

    public boolean isValid(final int i)
    {
        return ContextRegionLayout.FLAG_VALID == buffer.getShort(descriptor(i) + ContextRegionLayout.FLAG_OFFSET);
    }

    public int length(final int i)
    {
        return buffer.getInt(descriptor(i) + ContextRegionLayout.LEN_OFFSET);
    }

    private int descriptor(final int i)
    {
        return region + i * ContextRegionLayout.DESCRIPTOR_LENGTH;
    }
}
