package org.qnix.pcicomm;

import java.util.ArrayDeque;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.vipl.MemoryRegion;

/**
 * A buffer of a connection, in the node's DMA memory and registered with its NIC once (the seed's
 * pinned kiobuf pages, 000 4.2; {@link BufferPool} caches the registrations): what {@code send},
 * {@code prepostRecv}, {@code recv} and {@code sendRecycle} hand back and forth, never copied.
 * While the library holds it (sent and not recycled, preposted and not received) the application must
 * not touch its bytes, as in the seed (5.2.1).
 *
 * <p>Every buffer of a connection lies in memory registered with RDMA write enabled, so that any of them
 * can be preposted: the connection's peer can write into any of them at any time, not only into those
 * exported to it (as a peer of the seed's shared PCI bus can). No other memory of the process, and no
 * buffer of another connection, is within its reach. Data that must not change after it was checked is
 * copied out of the buffer first.
 *
 * <pre>{@code
 * PciBuffer b = connection.allocate(4096);
 * b.buffer().putBytes(0, bytes);
 * connection.send(b, bytes.length);
 * PciBuffer back = connection.sendRecycle(10_000);   // b again, once its bytes are in the peer's memory
 * back.free();                                      // to the connection's pool
 * }</pre>
 */
public final class PciBuffer
{
    static final int WITH_APPLICATION = 0;
    static final int SENDING = 1;
    static final int PREPOSTED = 2;
    static final int FREE = 3;

    private final BufferPool pool;
    private final MemoryRegion region;
    private final int offset;
    private final int capacity;
    private final UnsafeBuffer view;
    private int length;
    int owner = WITH_APPLICATION;
    /** While sending: the bytes of it already posted as RDMA writes. */
    int posted;
    /** While sending: the send sequence of its last RDMA write; its completion recycles the buffer. */
    long lastSequence;

    PciBuffer(final BufferPool pool, final MemoryRegion region, final int offset, final int capacity)
    {
        this.pool = pool;
        this.region = region;
        this.offset = offset;
        this.capacity = capacity;
        this.view = new UnsafeBuffer(region.memory().buffer(), offset, capacity);
    }

    /** @return the oldest buffer of {@code queue}, now the application's, or null. */
    static PciBuffer handBack(final ArrayDeque<PciBuffer> queue)
    {
        final PciBuffer buffer = queue.pollFirst();
        if (null != buffer)
        {
            buffer.owner = WITH_APPLICATION;
        }
        return buffer;
    }

    /** Every buffer of {@code queue} back to the application, in order. */
    static void handBackAll(final ArrayDeque<PciBuffer> queue)
    {
        while (null != handBack(queue))
        {
        }
    }

    /** @return the buffer's bytes, {@link #capacity()} long, in the DMA memory the NIC reads and writes. */
    public UnsafeBuffer buffer()
    {
        return view;
    }

    public int capacity()
    {
        return capacity;
    }

    /**
     * @return after {@code recv}, the bytes the peer filled (the seed's actual length, at most what was
     * preposted); after {@code sendRecycle}, the bytes sent; after {@code prepostRecv}, the bytes exported.
     */
    public int length()
    {
        return length;
    }

    /** @return the VIA address of its first byte: what an export names, and what stays the same through recv. */
    public long address()
    {
        return region.memory().address(offset);
    }

    /** @return the VIA address of its byte {@code at}. */
    long address(final int at)
    {
        return region.memory().address(offset + at);
    }

    /** @return the memory handle of the registered region it lies in. */
    public int handle()
    {
        return region.handle();
    }

    /** Gives it back to its connection's pool, for a later {@code allocate} of the same size. */
    public void free()
    {
        pool.free(this);
    }

    void length(final int length)
    {
        this.length = length;
    }

    BufferPool pool()
    {
        return pool;
    }

    public String toString()
    {
        return "PciBuffer[" + capacity + " bytes at 0x" + Long.toHexString(address()) + ", handle " + handle() + "]";
    }
}
