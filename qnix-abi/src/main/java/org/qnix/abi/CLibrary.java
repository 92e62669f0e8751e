package org.qnix.abi;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

/**
 * Links a class's {@code native} methods to the C library by JNA direct mapping, for the few calls Java
 * lacks ({@link NicProcessor}'s affinity calls, {@link Futex}, {@link FileSpace}, libhost's {@code mmap}
 * and {@code mlock}, the daemon's {@code SO_PEERCRED}): no varargs marshalling on a call. Linux only;
 * where the link cannot be made, the caller keeps the reason and says it instead of calling.
 *
 * <pre>{@code
 * private static final String UNAVAILABLE = CLibrary.link(MyCalls.class, "CPU affinity");
 * private static native int sched_getaffinity(int tid, long setSize, long maskAddress);
 * }</pre>
 */
public final class CLibrary
{
    private CLibrary()
    {
    }

    /**
     * @param natives the class whose {@code native} methods name C library functions.
     * @param feature what they are for, for the reason on another OS.
     * @return null if linked, else why not.
     */
    public static String link(final Class<?> natives, final String feature)
    {
        if (!Platform.isLinux())
        {
            return feature + " is only wired up for Linux, not " + System.getProperty("os.name");
        }
        try
        {
            Native.register(natives, NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
            return null;
        }
        catch (final UnsatisfiedLinkError | RuntimeException ex)
        {
            return "cannot link libc through JNA: " + ex;
        }
    }
}
