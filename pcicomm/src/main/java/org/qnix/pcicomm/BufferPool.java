package org.qnix.pcicomm;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.agrona.collections.Int2ObjectHashMap;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * A connection's buffers, carved out of chunks of DMA memory each registered once, with RDMA write
 * enabled so that any buffer can be exported: the registration cache. The seed pins and unpins pages
 * per operation (000 5.2.2); here a registration is a driver request and a memory-region table entry of
 * the NIC (a few per process), so a chunk stays registered until the connection closes and a freed
 * buffer is reused for the next buffer of the same size. Nothing is registered on the data path.
 *
 * <pre>{@code
 * BufferPool pool = new BufferPool(nic, ptag, 256 * 1024);
 * PciBuffer b = pool.allocate(4096);
 * b.free();                    // pool.allocate(4096) returns it again
 * }</pre>
 */
final class BufferPool
{
    /** Buffers start on a cache line, as descriptors do. */
    static final int ALIGNMENT = 64;

    private final ViplNic nic;
    private final ProtectionTag ptag;
    private final int chunkBytes;
    private final List<MemoryRegion> chunks = new ArrayList<>();
    /** Free buffers by capacity: an int key, so that a reuse boxes nothing. */
    private final Int2ObjectHashMap<ArrayDeque<PciBuffer>> free = new Int2ObjectHashMap<>();
    private MemoryRegion current;
    private int used;
    private int registrations;

    BufferPool(final ViplNic nic, final ProtectionTag ptag, final int chunkBytes)
    {
        this.nic = nic;
        this.ptag = ptag;
        this.chunkBytes = chunkBytes;
    }

    /** @return a buffer of at least {@code bytes}, with the application. */
    synchronized PciBuffer allocate(final int bytes)
    {
        final int max = nic.parameters().maxMessageBytes();
        if (bytes < 1 || bytes > max)
        {
            throw new IllegalArgumentException("a buffer of " + bytes + " bytes is outside [1, " + max + "]");
        }
        final int capacity = (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
        final ArrayDeque<PciBuffer> same = free.get(capacity);
        if (null != same && !same.isEmpty())
        {
            final PciBuffer reused = same.pollFirst();
            reused.owner = PciBuffer.WITH_APPLICATION;
            reused.length(0);
            return reused;
        }
        if (null == current || used + capacity > current.length())
        {
            current = register(Math.max(chunkBytes, capacity));
            used = 0;
        }
        final PciBuffer buffer = new PciBuffer(this, current, used, Math.min(capacity, max));
        used += capacity;
        return buffer;
    }

    synchronized void free(final PciBuffer buffer)
    {
        if (PciBuffer.WITH_APPLICATION != buffer.owner)
        {
            throw new IllegalStateException(buffer + " is " + (PciBuffer.FREE == buffer.owner ? "free already" :
                "with the connection (sent or preposted): take it back with sendRecycle or recv first"));
        }
        buffer.owner = PciBuffer.FREE;
        free.computeIfAbsent(buffer.capacity(), c -> new ArrayDeque<>()).addLast(buffer);
    }

    /** @return how many chunks were registered: each once, however often their buffers are used. */
    synchronized int registrations()
    {
        return registrations;
    }

    private MemoryRegion register(final int bytes)
    {
        final ViplMemory memory;
        try
        {
            memory = nic.allocate(bytes);
        }
        catch (final ViplException ex)
        {
            throw new PciCommException(PciCommException.Reason.RESOURCE, "no DMA memory for " + bytes +
                " bytes of buffers: " + ex.getMessage(), ex);
        }
        try
        {
            final MemoryRegion region = nic.registerMem(memory, 0, memory.length(), new MemoryAttributes(ptag, true, false));
            chunks.add(region);
            registrations++;
            return region;
        }
        catch (final ViplException ex)
        {
            memory.close();
            throw new PciCommException(PciCommException.Reason.RESOURCE, "cannot register " + bytes +
                " bytes of buffers: " + ex.getMessage(), ex);
        }
    }
}
