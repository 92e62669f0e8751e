package org.qnix.host;

import java.nio.MappedByteBuffer;

import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.qnix.abi.MappedFile;

/**
 * Ends a process's mapping of memory it gives back (a buffer freed, a NIC closed) without leaving a
 * hole: the range is mapped over with private anonymous memory ({@code MAP_FIXED}) instead of being
 * unmapped. A view the program kept, or a thread of the library still inside a wait, then reads zeros
 * and writes into memory nobody else sees, where an unmapped range would kill the JVM with SIGSEGV and
 * the file's pages would show whatever process the driver gives them to next. The overlay is one
 * mapping of the process; it goes when the last view of it does: the JDK's cleaner of a
 * {@link MappedByteBuffer}, or {@link HostMemoryMapping}'s for scattered pages, unmaps the range once
 * no buffer over it is reachable. Views must therefore be made from the mapping's ByteBuffer (which
 * keeps it reachable), never from its raw address.
 *
 * <p>Where {@code mmap} at a fixed address is not available ({@link Libc#unavailableReason()}), the
 * range is unmapped as before, or left mapped while calls may still be inside it.
 *
 * <pre>{@code
 * MappedFile vni = MappedFile.mapExisting(dir.nicSdram(node), offset, length);
 * ...
 * RetiredMemory.retire(vni);   // vni.buffer() now reads zeros; the file is no longer mapped
 * }</pre>
 */
public final class RetiredMemory
{
    private RetiredMemory()
    {
    }

    /**
     * Retires all of a mapped file region; see the class comment. Idempotent.
     *
     * @return false if it unmapped the region instead.
     */
    public static boolean retire(final MappedFile file)
    {
        return retire(file, true);
    }

    /**
     * Retires all of a mapped file region, or, where no overlay can be made, unmaps it only if
     * {@code mayUnmap}: with calls of the library still inside it, an unmapped range would be a SIGSEGV,
     * so it stays mapped instead (as it did before retiring existed). Idempotent.
     *
     * @return false if the region was unmapped or left mapped instead of retired.
     */
    public static boolean retire(final MappedFile file, final boolean mayUnmap)
    {
        if (file.isClosed())
        {
            return false;
        }
        final MappedByteBuffer mapped = file.mappedByteBuffer();
        if (overlay(BufferUtil.address(mapped), mapped.capacity()))
        {
            return true;
        }
        if (mayUnmap)
        {
            file.close();
        }
        return false;
    }

    /**
     * Maps private anonymous memory over every page that holds a byte of {@code [address, address + length)}.
     *
     * @return false if it could not: the range is still mapped as it was.
     */
    static boolean overlay(final long address, final long length)
    {
        if (null != Libc.unavailableReason())
        {
            return false;
        }
        if (length <= 0)
        {
            return true;
        }
        final long osPage = Libc.getpagesize();
        final long first = address & -osPage;
        final long pastLast = BitUtil.align(address + length, osPage);
        final long mapped = Libc.mmap(first, pastLast - first, Libc.PROT_READ | Libc.PROT_WRITE,
            Libc.MAP_PRIVATE | Libc.MAP_ANONYMOUS | Libc.MAP_FIXED | Libc.MAP_NORESERVE, -1, 0);
        return mapped == first;
    }
}
