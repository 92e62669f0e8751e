package org.qnix.firmware;

/**
 * A process buffer as the NIC sees it after checking it: the physical addresses of its pages, where
 * it starts in the first page and how many bytes it holds. Read from a Context Region's Descriptors
 * or from the Buffer Pool (thesis 3.3.1). The buffer is one run of bytes, so the first page is used
 * from an offset to its end (or to the buffer's end), every middle page whole, and the last page from
 * its start: that is what lets a receiving NIC compute where every packet of a message goes.
 * Preallocated per Context; filled without allocation.
 */
final class PageList
{
    final long[] pageAddresses;
    int pages;
    int firstOffset;
    int firstLength;
    int length;

    PageList(final int capacity)
    {
        pageAddresses = new long[capacity];
    }

    void clear()
    {
        pages = 0;
        firstOffset = 0;
        firstLength = 0;
        length = 0;
    }

    /** @return the physical address of byte {@code position} of the buffer. */
    long address(final int position, final int pageSize)
    {
        if (position < firstLength)
        {
            return pageAddresses[0] + firstOffset + position;
        }
        final int rest = position - firstLength;
        return pageAddresses[1 + rest / pageSize] + rest % pageSize;
    }

    /** @return bytes from {@code position} to the end of its page or of the buffer, whichever is first. */
    int contiguousFrom(final int position, final int pageSize)
    {
        final int toPageEnd = position < firstLength ? firstLength - position : pageSize - (position - firstLength) % pageSize;
        return Math.min(toPageEnd, length - position);
    }
}
