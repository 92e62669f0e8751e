package org.qnix.firmware;

import java.util.BitSet;

import org.agrona.concurrent.status.AtomicCounter;

/**
 * NIC managed memory (thesis 3.3.4, segment 6) as staging space for data that arrives before its
 * receive is posted. Its size is what flow control protects (thesis 3.2, Reliability): a
 * Permission_Request is answered only when its whole message fits here. First fit over pages, so a
 * message's staged bytes are one run of SDRAM.
 */
final class StagingMemory
{
    private final long base;
    private final int pageSize;
    private final int pages;
    private final BitSet used;
    private final AtomicCounter bytesInUse;
    private long inUse;

    StagingMemory(final long base, final long length, final int pageSize, final AtomicCounter bytesInUse)
    {
        this.base = base;
        this.pageSize = pageSize;
        this.pages = (int)(length / pageSize);
        this.used = new BitSet(pages);
        this.bytesInUse = bytesInUse;
    }

    /** @return SDRAM address of the first byte of a run of {@code bytes} (> 0), or -1 if none is free. */
    long allocate(final int bytes)
    {
        final int count = (bytes + pageSize - 1) / pageSize;
        int start = used.nextClearBit(0);
        while (start + count <= pages)
        {
            final int nextUsed = used.nextSetBit(start);
            if (nextUsed < 0 || nextUsed >= start + count)
            {
                used.set(start, start + count);
                inUse += (long)count * pageSize;
                bytesInUse.setRelease(inUse);
                return base + (long)start * pageSize;
            }
            start = used.nextClearBit(nextUsed);
        }
        return -1;
    }

    void free(final long address, final int bytes)
    {
        final int count = (bytes + pageSize - 1) / pageSize;
        final int start = (int)((address - base) / pageSize);
        used.clear(start, start + count);
        inUse -= (long)count * pageSize;
        bytesInUse.setRelease(inUse);
    }

    long bytesInUse()
    {
        return inUse;
    }

    long capacity()
    {
        return (long)pages * pageSize;
    }
}
