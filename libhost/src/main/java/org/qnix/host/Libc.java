package org.qnix.host;

import com.sun.jna.Native;

import org.qnix.abi.CLibrary;

/**
 * The few libc calls Java lacks for memory for DMA (DESIGN.md 1): {@code mmap} at a chosen address, so
 * that scattered physical pages appear virtually contiguous as they do to a real process, and
 * {@code mlock}/{@code munlock} for {@code qx_buffer_lock} (thesis 3.6), best effort (PLATFORM.md).
 * JNA direct mapping through {@link CLibrary}: no varargs marshalling on the call path.
 * Constants are Linux's (the same on x86_64 and aarch64).
 */
final class Libc
{
    static final int PROT_NONE = 0;
    static final int PROT_READ = 1;
    static final int PROT_WRITE = 2;
    static final int MAP_SHARED = 0x01;
    static final int MAP_PRIVATE = 0x02;
    static final int MAP_FIXED = 0x10;
    static final int MAP_ANONYMOUS = 0x20;
    static final int MAP_NORESERVE = 0x4000;
    static final int O_RDWR = 0x2;
    static final int O_CLOEXEC = 0x80000;
    static final long MAP_FAILED = -1L;

    private static final String UNAVAILABLE = CLibrary.link(Libc.class, "mmap at a fixed address");

    private Libc()
    {
    }

    /** @return null if the calls below work here, else why not. */
    static String unavailableReason()
    {
        return UNAVAILABLE;
    }

    /** @return errno of this thread's last call through JNA. */
    static int errno()
    {
        return Native.getLastError();
    }

    static native long mmap(long address, long length, int prot, int flags, int fd, long offset);

    static native int munmap(long address, long length);

    static native int mlock(long address, long length);

    static native int munlock(long address, long length);

    static native int open(String path, int flags);

    static native int close(int fd);

    static native int getpagesize();
}
