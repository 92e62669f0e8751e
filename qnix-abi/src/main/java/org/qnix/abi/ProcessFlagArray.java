package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The Process Flag Array of a node's host memory (thesis 3.3.4, Host System Structures;
 * {@link HostMemoryLayout}): one int per Process Table entry, the OS pid of the process holding it or
 * 0 for a free one, with the NIC Status' Process Table Entry word, where the driver's next search for a
 * free entry starts. The driver is the only writer, under one lock of its own (a claim is a look and a
 * write, not an atomic operation on the word); {@code qnix cluster status} and {@code qnix inspect}
 * read the flags from other JVMs.
 *
 * <pre>{@code
 * ProcessFlagArray flags = new ProcessFlagArray().wrap(host, hostLayout, params.maxProcessesPerNic());
 * int index = flags.claim(osPid);          // -1 if every entry is held
 * ...
 * flags.release(index);
 * }</pre>
 */
public final class ProcessFlagArray
{
    private AtomicBuffer buffer;
    private HostMemoryLayout layout;
    private int entries;
    private int hint;

    /** @param entries the Process Table's entries (the cluster's processes per NIC). */
    public ProcessFlagArray wrap(final AtomicBuffer host, final HostMemoryLayout layout, final int entries)
    {
        this.buffer = host;
        this.layout = layout;
        this.entries = entries;
        this.hint = (int)(layout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_PROCESS_ENTRY_OFFSET);
        return this;
    }

    /**
     * Driver side, under the driver's lock: takes the first free entry from the hint on for
     * {@code osPid} and moves the hint past it.
     *
     * @return the entry's index, or -1 if none is free.
     */
    public int claim(final int osPid)
    {
        // The hint is the driver's own word, read and written under its lock: plain.
        final int start = Math.floorMod(buffer.getInt(hint), entries);
        for (int i = 0; i < entries; i++)
        {
            final int index = (start + i) % entries;
            if (0 == osPid(index))
            {
                // Reader: `qnix cluster status` and `qnix inspect`, in other JVMs.
                buffer.putIntRelease(flagOffset(index), osPid);
                buffer.putInt(hint, (index + 1) % entries);
                return index;
            }
        }
        return -1;
    }

    /** Driver side, under the driver's lock: the entry is free again. */
    public void release(final int index)
    {
        // Reader: as claim's.
        buffer.putIntRelease(flagOffset(index), 0);
    }

    /** @return the OS pid holding entry {@code index}, 0 if it is free (acquire). */
    public int osPid(final int index)
    {
        return buffer.getIntVolatile(flagOffset(index));
    }

    private int flagOffset(final int index)
    {
        return (int)layout.processFlagOffset(index);
    }
}
