package org.qnix.abi;

import java.nio.ByteBuffer;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * The emulated interrupt line (DESIGN.md 5): a process that has polled its doorbell for a while
 * sleeps on the doorbell word with {@code FUTEX_WAIT}; the NIC control program, after writing a
 * doorbell whose Waiters field is set, wakes it with {@code FUTEX_WAKE}. The word lives in a
 * {@code MAP_SHARED} file mapping, so the non-private futex operations work across processes
 * (PLATFORM.md). On a platform without futex both calls return at once and waiters fall back to
 * polling.
 *
 * <pre>{@code
 * // process side: sleep at most 1 ms while the doorbell still reads Used
 * Futex.await(hps.addressOffset() + doorbellOffset, Doorbell.USED, 1_000_000);
 * // NIC side, after the release write of the doorbell
 * Futex.wakeAll(host.addressOffset() + doorbellAddress);
 * }</pre>
 */
public final class Futex
{
    private static final long SYS_FUTEX_X86_64 = 202;
    private static final long SYS_FUTEX_AARCH64 = 98;
    private static final int FUTEX_WAIT = 0;
    private static final int FUTEX_WAKE = 1;
    private static final boolean AVAILABLE;
    private static final long SYS_FUTEX;
    /** One struct timespec per thread, so that a wait on the data path allocates nothing. */
    private static final ThreadLocal<UnsafeBuffer> TIMESPEC =
        ThreadLocal.withInitial(() -> new UnsafeBuffer(ByteBuffer.allocateDirect(2 * Long.BYTES)));

    static
    {
        boolean available = false;
        long number = -1;
        if (Platform.isLinux() && (Platform.isIntel() && Platform.is64Bit() || Platform.isARM() && Platform.is64Bit()))
        {
            number = Platform.isIntel() ? SYS_FUTEX_X86_64 : SYS_FUTEX_AARCH64;
            try
            {
                Native.register(Futex.class, NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
                available = true;
            }
            catch (final UnsatisfiedLinkError | RuntimeException ex)
            {
                available = false;
            }
        }
        AVAILABLE = available;
        SYS_FUTEX = number;
    }

    private Futex()
    {
    }

    private static native long syscall(long number, long address, long op, long value, long timeout, long a5, long a6);

    /** @return true if sleeping on a word is possible here; otherwise {@link #await} returns at once. */
    public static boolean available()
    {
        return AVAILABLE;
    }

    /**
     * Sleeps while the 32-bit word at {@code address} still holds {@code expected}, for at most
     * {@code timeoutNs}, or until woken. Spurious returns are possible: the caller re-reads the word.
     */
    public static void await(final long address, final int expected, final long timeoutNs)
    {
        if (!AVAILABLE)
        {
            return;
        }
        final UnsafeBuffer timespec = TIMESPEC.get();
        timespec.putLong(0, timeoutNs / 1_000_000_000L);
        timespec.putLong(Long.BYTES, timeoutNs % 1_000_000_000L);
        syscall(SYS_FUTEX, address, FUTEX_WAIT, expected, timespec.addressOffset(), 0, 0);
    }

    /** Wakes every process sleeping on the word at {@code address}. @return how many were woken. */
    public static int wakeAll(final long address)
    {
        if (!AVAILABLE)
        {
            return 0;
        }
        return (int)syscall(SYS_FUTEX, address, FUTEX_WAKE, Integer.MAX_VALUE, 0, 0, 0);
    }
}
