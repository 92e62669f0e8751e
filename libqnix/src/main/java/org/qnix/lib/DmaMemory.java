package org.qnix.lib;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.host.BufferRegion;
import org.qnix.host.DriverException;
import org.qnix.host.DriverProxy;
import org.qnix.host.HostMemoryException;
import org.qnix.host.HostMemoryMapping;
import org.qnix.host.MappingGuard;

/**
 * Memory for DMA of one registration (thesis 3.6: {@code qx_buffer_lock}, {@code qx_buffer_unlock},
 * {@code qx_buffer_translate}, {@code qx_buffer_pool}): buffers and the Buffer Pool in the node's host
 * memory, allocated, locked, unlocked and freed through the driver ({@link DriverProxy}) and mapped
 * into this process only ({@link HostMemoryMapping}). Its state is what {@link Qnix#close()} must
 * unmap: the buffers handed out and not yet closed, and the pool.
 *
 * <p>Every method is a driver request or touches that state, and is called with {@code Qnix}'s monitor
 * held (its memory calls are {@code synchronized}, and so is its close), which serialises the driver
 * socket as {@code Qnix}'s class Javadoc says.
 */
final class DmaMemory
{
    private final Qnix owner;
    private final ClusterParameters params;
    private final ProcessName name;
    private final String clusterName;
    private final NicCoordinates node;
    private final DriverProxy driver;
    private final MappingGuard guard;
    /** Buffers handed out and not yet closed, so that {@link #unmapAll()} unmaps them. */
    private final List<QnixBuffer> buffers = new ArrayList<>();
    private BufferPool bufferPool;

    DmaMemory(final Qnix owner, final ClusterParameters params, final ProcessName name, final String clusterName,
        final NicCoordinates node, final DriverProxy driver, final MappingGuard guard)
    {
        this.owner = owner;
        this.params = params;
        this.name = name;
        this.clusterName = clusterName;
        this.node = node;
        this.driver = driver;
        this.guard = guard;
    }

    QnixBuffer allocateBuffer(final int length, final int firstPageOffset, final boolean contiguous)
    {
        ensureOpen();
        final int pageSize = params.pageSize();
        if (length < 0 || length > params.maxMessageBytes())
        {
            throw new IllegalArgumentException("buffer length " + length + " is outside [0, " +
                params.maxMessageBytes() + "], the largest message of cluster '" + clusterName + "'");
        }
        if (firstPageOffset < 0 || firstPageOffset >= pageSize)
        {
            throw new IllegalArgumentException("first page offset " + firstPageOffset + " is outside [0, " +
                pageSize + "), the page size");
        }
        if (!contiguous)
        {
            HostMemoryMapping.checkScatteredSupported(pageSize);
        }
        final int expectedPages = Math.max(1, (int)(((long)firstPageOffset + length + pageSize - 1) / pageSize));
        final BufferRegion region;
        try
        {
            region = driver.allocateBuffer(length, firstPageOffset, contiguous, expectedPages);
        }
        catch (final DriverException ex)
        {
            throw QnixDriverException.of(ex, guard, name);
        }
        final HostMemoryMapping mapping;
        try
        {
            mapping = map(region.pages());
        }
        catch (final RuntimeException ex)
        {
            try
            {
                freeRegion(region.id());
            }
            catch (final QnixException freeFailure)
            {
                ex.addSuppressed(freeFailure);
            }
            throw ex;
        }
        final QnixBuffer buffer = new QnixBuffer(owner, region.id(), length, firstPageOffset, pageSize, region.pages(),
            mapping);
        buffers.add(buffer);
        return buffer;
    }

    BufferPool bufferPool(final int pages)
    {
        ensureOpen();
        if (null != bufferPool)
        {
            throw new IllegalStateException("process " + name + " already has its buffer pool of " +
                bufferPool.pages() + " pages: qx_buffer_pool is called once per process");
        }
        final int q = params.bufferPoolPages();
        if (pages < 1 || pages > q)
        {
            throw new IllegalArgumentException("buffer pool of " + pages + " pages is outside [1, Q=" + q +
                "] (cluster '" + clusterName + "')");
        }
        HostMemoryMapping.checkScatteredSupported(params.pageSize());
        final BufferRegion region;
        try
        {
            region = driver.bufferPool(pages);
        }
        catch (final DriverException ex)
        {
            throw QnixDriverException.of(ex, guard, name);
        }
        // Not given back on a mapping failure: the driver keeps the pool until de-registration.
        final HostMemoryMapping mapping = map(region.pages());
        bufferPool = new BufferPool(owner, region.id(), params.pageSize(), params.maxMessageBytes(), region.pages(),
            mapping);
        return bufferPool;
    }

    /** @return the pool {@link #bufferPool(int)} made, or null if there is none yet. */
    BufferPool bufferPool()
    {
        return bufferPool;
    }

    /** BUFFER_LOCK or BUFFER_UNLOCK for {@link QnixBuffer}. @return the region's lock count after it. */
    int lockBuffer(final int regionId, final boolean lock)
    {
        ensureOpen();
        try
        {
            return driver.lockBuffer(regionId, lock);
        }
        catch (final DriverException ex)
        {
            throw QnixDriverException.of(ex, guard, name);
        }
    }

    /** BUFFER_FREE for a {@link QnixBuffer} that is already unmapped; after close de-registration freed it. */
    void freeBuffer(final QnixBuffer buffer)
    {
        buffers.remove(buffer);
        if (!guard.isClosed())
        {
            freeRegion(buffer.regionId());
        }
    }

    /** @return this node's {@code host.mem}: the file a process maps its buffers from. */
    Path hostMemoryFile()
    {
        return ClusterDirectory.of(clusterName).hostMemory(node);
    }

    /** For {@link Qnix#close()}: unmaps every buffer and the pool; de-registration gives their pages back (thesis 3.4). */
    void unmapAll()
    {
        for (final QnixBuffer buffer : buffers)
        {
            buffer.unmap();
        }
        buffers.clear();
        if (null != bufferPool)
        {
            bufferPool.unmap();
        }
    }

    private HostMemoryMapping map(final long[] pages)
    {
        try
        {
            return HostMemoryMapping.map(hostMemoryFile(), pages, params.pageSize());
        }
        catch (final HostMemoryException ex)
        {
            throw new QnixException(ex.getMessage(), ex);
        }
    }

    private void freeRegion(final int regionId)
    {
        try
        {
            driver.freeBuffer(regionId);
        }
        catch (final DriverException ex)
        {
            throw QnixDriverException.of(ex, guard, name);
        }
    }

    /** The driver requests hold the monitor, which close() takes before it closes the socket. */
    private void ensureOpen()
    {
        if (guard.isClosed())
        {
            throw new QnixClosedException(name);
        }
    }
}
