package org.qnix.abi;

import java.nio.file.Path;

import com.sun.jna.Native;

/**
 * Reserves the blocks of a cluster file before it is mapped (issue 17, item 7). A sparse file in a
 * {@code tmpfs} that fills up cannot take a page the first time one is written through a mapping, and
 * the kernel answers with SIGBUS, which kills the JVM (daemon, firmware or user process) whatever it
 * was doing. {@code posix_fallocate} takes every block up front or fails with {@code ENOSPC}, which
 * becomes an exception naming the file. On a platform without it the file stays sparse.
 *
 * <pre>{@code
 * FileSpace.reserve(dir.hostMemory(node), params.hostMemoryBytes());   // before mapping it
 * }</pre>
 */
public final class FileSpace
{
    private static final int O_RDWR = 0x2;
    private static final int O_CLOEXEC = 0x80000;
    private static final int ENOSPC = 28;
    private static final boolean AVAILABLE;

    static
    {
        AVAILABLE = null == CLibrary.link(FileSpace.class, "posix_fallocate");
    }

    private FileSpace()
    {
    }

    private static native int open(String path, int flags);

    private static native int close(int fd);

    /** Returns 0 or an error number (not -1 with errno). */
    private static native int posix_fallocate(int fd, long offset, long length);

    /** @return whether {@link #reserve} really reserves here. */
    public static boolean available()
    {
        return AVAILABLE;
    }

    /**
     * Allocates the first {@code length} bytes of an existing file, extending it to that length if it
     * is shorter; they read as zeros.
     *
     * @throws IllegalStateException naming the file and the size if its file system has no room, or the
     *                               allocation fails otherwise.
     */
    public static void reserve(final Path file, final long length)
    {
        if (!AVAILABLE || 0 == length)
        {
            return;
        }
        final int fd = open(file.toString(), O_RDWR | O_CLOEXEC);
        if (fd < 0)
        {
            throw new IllegalStateException("cannot open " + file + " to reserve its " + length + " bytes (errno " +
                Native.getLastError() + ")");
        }
        try
        {
            final int error = posix_fallocate(fd, 0, length);
            if (ENOSPC == error)
            {
                throw new IllegalStateException("no room for " + file + ": its file system cannot hold another " +
                    Sizes.describe(length) + " (" + length + " bytes)");
            }
            if (0 != error)
            {
                throw new IllegalStateException("cannot reserve " + length + " bytes for " + file +
                    " (posix_fallocate error " + error + ")");
            }
        }
        finally
        {
            close(fd);
        }
    }
}
