package org.qnix.host;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

import com.sun.jna.Pointer;
import org.qnix.abi.MappedFile;

/**
 * Pages of the node's {@code host.mem} that the driver handed this process, mapped so that they are
 * virtually contiguous in page order, and nothing else of the file (DESIGN.md 2: the emulated MMU).
 * A physically contiguous run is one {@link MappedFile}; scattered pages are mapped one run at a time
 * with {@code MAP_FIXED} into an address range reserved with {@code PROT_NONE}, which is what a real
 * kernel's page tables do for a buffer whose physical pages are scattered. Each run is one of the
 * process's memory mappings, counted against the kernel's limit by {@link MappingBudget}; a mapping
 * that cannot be made is a {@link HostMemoryException}.
 *
 * <pre>{@code
 * try (HostMemoryMapping pages = HostMemoryMapping.map(hostMem, new long[]{40 * 4096L, 7 * 4096L}, 4096))
 * {
 *     UnsafeBuffer view = new UnsafeBuffer(pages.byteBuffer(0, (int)pages.length()));
 * }
 * }</pre>
 *
 * <p>{@link #close()} retires the range ({@link RetiredMemory}): views made by {@link #byteBuffer} and
 * kept past it read zeros, and the range is unmapped once none of them is reachable.
 *
 * <p>Not thread safe: its owner (a buffer) closes it once no call of its library can touch it.
 */
public final class HostMemoryMapping implements AutoCloseable
{
    private static final AtomicBoolean MLOCK_WARNED = new AtomicBoolean();
    /**
     * Once no view of a range is reachable: unmaps scattered pages (the JDK's own cleaner unmaps a file's)
     * and gives the range's mappings back to {@link MappingBudget}.
     */
    private static final Cleaner UNMAPPER = Cleaner.create();

    private final boolean contiguous;
    /** The one file mapping of contiguous pages; null once closed, so that only views keep it. */
    private MappedFile file;
    private final long address;
    private final long length;
    /** The mappings it holds while mapped, counted by {@link MappingBudget}; one once retired. */
    private final int runs;
    /** The one ByteBuffer every view is a slice of; null once closed, so that only views keep it. */
    private ByteBuffer views;
    /** Whether the close retired the range rather than unmapped it: read by {@link #unmapped}'s action. */
    private final AtomicBoolean retired = new AtomicBoolean();
    private final Cleaner.Cleanable unmapped;
    private boolean mlocked;
    private boolean closed;

    private HostMemoryMapping(final MappedFile file, final long address, final long length, final int runs)
    {
        this.contiguous = null != file;
        this.file = file;
        this.address = address;
        this.length = length;
        this.runs = runs;
        this.views = contiguous ? file.mappedByteBuffer() : new Pointer(address).getByteBuffer(0, length);
        // Captures no field: the mapping object may be collected before its views.
        final AtomicBoolean wasRetired = retired;
        final boolean unmapsItself = !contiguous;
        unmapped = UNMAPPER.register(views, () ->
        {
            if (unmapsItself)
            {
                Libc.munmap(address, length);
            }
            // A retired range is one anonymous mapping, however many runs it had (see close).
            MappingBudget.release(wasRetired.get() ? 1 : runs, wasRetired.get());
        });
    }

    /**
     * @throws IllegalArgumentException if scattered pages cannot be mapped here: the emulated page size
     *                                  must be a multiple of the OS page size for {@code MAP_FIXED}.
     */
    public static void checkScatteredSupported(final int pageSize)
    {
        final String unavailable = Libc.unavailableReason();
        if (null != unavailable)
        {
            throw new IllegalArgumentException("scattered buffers need mmap at a fixed address: " + unavailable);
        }
        final int osPageSize = Libc.getpagesize();
        if (pageSize % osPageSize != 0)
        {
            throw new IllegalArgumentException("cannot map scattered pages of " + pageSize + " bytes: the cluster's " +
                "page size must be a multiple of the OS page size " + osPageSize + " for them to appear virtually " +
                "contiguous; use a contiguous buffer, or a cluster with --page-size " + osPageSize);
        }
    }

    /**
     * Maps {@code pages} of {@code hostMemory} (physical addresses, each {@code pageSize} long) in order.
     *
     * @throws HostMemoryException if the mappings would pass the process's limit ({@link MappingBudget}) or the
     *                       kernel refuses one.
     */
    public static HostMemoryMapping map(final Path hostMemory, final long[] pages, final int pageSize)
    {
        final long length = (long)pages.length * pageSize;
        final int runs = runs(pages, pageSize);
        if (1 != runs)
        {
            checkScatteredSupported(pageSize);
        }
        MappingBudget.acquire(runs, "a buffer of " + pages.length + " page(s) in " + runs + " run(s)");
        try
        {
            if (1 == runs)
            {
                final MappedFile file = mapContiguous(hostMemory, pages[0], length);
                return new HostMemoryMapping(file, file.buffer().addressOffset(), length, runs);
            }
            return new HostMemoryMapping(null, mapScattered(hostMemory, pages, pageSize, length), length, runs);
        }
        catch (final RuntimeException ex)
        {
            MappingBudget.release(runs);
            throw ex;
        }
    }

    private static MappedFile mapContiguous(final Path hostMemory, final long address, final long length)
    {
        try
        {
            return MappedFile.mapExisting(hostMemory, address, length);
        }
        catch (final UncheckedIOException | IllegalArgumentException ex)
        {
            // Java reports a refused mmap (ENOMEM: too many mappings) as an IOException "Map failed".
            throw new HostMemoryException("cannot map " + length + " bytes at " + address + " of " + hostMemory + ": " +
                ex.getMessage() + (null != ex.getCause() ? " (" + ex.getCause() + ")" : ""), ex);
        }
    }

    /** @return how many physically contiguous runs {@code pages} make: one mapping each. */
    public static int runs(final long[] pages, final int pageSize)
    {
        int runs = pages.length > 0 ? 1 : 0;
        for (int i = 1; i < pages.length; i++)
        {
            if (pages[i] != pages[i - 1] + pageSize)
            {
                runs++;
            }
        }
        return runs;
    }

    public static boolean isContiguous(final long[] pages, final int pageSize)
    {
        return runs(pages, pageSize) <= 1;
    }

    private static long mapScattered(final Path hostMemory, final long[] pages, final int pageSize, final long length)
    {
        // Reserve the whole range first: MAP_FIXED then replaces pieces of our own reservation only,
        // never some other mapping of the JVM's.
        final long base = Libc.mmap(0, length, Libc.PROT_NONE,
            Libc.MAP_PRIVATE | Libc.MAP_ANONYMOUS | Libc.MAP_NORESERVE, -1, 0);
        if (Libc.MAP_FAILED == base)
        {
            throw new HostMemoryException("cannot reserve " + length + " bytes of address space for a buffer (mmap errno " +
                Libc.errno() + ")");
        }
        final int fd = Libc.open(hostMemory.toString(), Libc.O_RDWR | Libc.O_CLOEXEC);
        if (fd < 0)
        {
            final int errno = Libc.errno();
            Libc.munmap(base, length);
            throw new HostMemoryException("cannot open " + hostMemory + " (errno " + errno + ")");
        }
        try
        {
            int first = 0;
            while (first < pages.length)
            {
                // One mmap per physically contiguous run: fewer calls, same result.
                int end = first + 1;
                while (end < pages.length && pages[end] == pages[end - 1] + pageSize)
                {
                    end++;
                }
                final long at = base + (long)first * pageSize;
                final long runLength = (long)(end - first) * pageSize;
                final long mapped = Libc.mmap(at, runLength, Libc.PROT_READ | Libc.PROT_WRITE,
                    Libc.MAP_SHARED | Libc.MAP_FIXED, fd, pages[first]);
                if (mapped != at)
                {
                    final int errno = Libc.errno();
                    Libc.munmap(base, length);
                    throw new HostMemoryException("cannot map physical page " + pages[first] + " of " + hostMemory +
                        " at " + Long.toHexString(at) + " (mmap errno " + errno + ")");
                }
                first = end;
            }
            return base;
        }
        finally
        {
            // The mappings keep the file; the descriptor is no longer needed.
            Libc.close(fd);
        }
    }

    /** @return the virtual address of the first page. */
    public long address()
    {
        return address;
    }

    public long length()
    {
        return length;
    }

    /**
     * @return a direct buffer over {@code [offset, offset + length)} of the mapping, in native order. Views
     * of the mapping are made from it (or from the mapping's own ByteBuffer), never from {@link #address()}:
     * it keeps the range mapped while it is reachable.
     * @throws IllegalStateException once closed.
     */
    public ByteBuffer byteBuffer(final int offset, final int length)
    {
        if (closed)
        {
            throw new IllegalStateException("the mapping is closed");
        }
        return views.slice(offset, length).order(ByteOrder.nativeOrder());
    }

    /**
     * Attempts the real {@code mlock} of thesis 3.6's {@code qx_buffer_lock}. It is best effort: the
     * driver's lock count is what the NIC honours, and {@code mlock} fails on machines with a small
     * {@code RLIMIT_MEMLOCK} (PLATFORM.md), so a failure is reported once per JVM and never thrown.
     */
    public void mlock()
    {
        if (mlocked || null != Libc.unavailableReason())
        {
            return;
        }
        if (0 == Libc.mlock(address, length))
        {
            mlocked = true;
        }
        else if (MLOCK_WARNED.compareAndSet(false, true))
        {
            System.err.println("qnix: warning: mlock of " + length + " bytes failed (errno " + Libc.errno() +
                "); buffers stay locked for the NIC by the driver, but the OS may page them out. " +
                "This warning is printed once.");
        }
    }

    /** Undoes a successful {@link #mlock()}. */
    public void munlock()
    {
        if (mlocked)
        {
            mlocked = false;
            Libc.munlock(address, length);
        }
    }

    /**
     * Retires the range ({@link RetiredMemory}; that also drops any mlock of it): kept views read zeros.
     * It stays mappings of the process, counted by {@link MappingBudget}, until its last view is collected.
     * Idempotent.
     */
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (contiguous ? RetiredMemory.retire(file) : RetiredMemory.overlay(address, length))
        {
            // One mmap over the whole range replaced its runs with one mapping (the kernel's count, which
            // vm.max_map_count limits): the others are gone now, not at the collection.
            MappingBudget.release(runs - 1);
            MappingBudget.retired(1);
            retired.set(true);
        }
        else
        {
            // Unmapped (the file's by the retire itself): counted no longer.
            unmapped.clean();
        }
        file = null;
        views = null;
    }
}
