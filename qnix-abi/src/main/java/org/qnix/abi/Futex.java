package org.qnix.abi;

import java.nio.ByteBuffer;

import com.sun.jna.Native;
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
    /** futex_waitv(2), Linux 5.16: the same number on x86_64 and aarch64 (asm-generic). */
    private static final long SYS_FUTEX_WAITV = 449;
    private static final int FUTEX2_SIZE_U32 = 0x02;
    private static final int CLOCK_MONOTONIC = 1;
    private static final int EAGAIN = 11;
    /** Length of one {@code struct futex_waitv}: value (64), address (64), flags (32), reserved (32). */
    public static final int WAITV_ENTRY_LENGTH = 24;
    private static final boolean AVAILABLE;
    private static final boolean WAITV_AVAILABLE;
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
            available = null == CLibrary.link(Futex.class, "futex");
        }
        AVAILABLE = available;
        SYS_FUTEX = number;
        WAITV_AVAILABLE = available && probeWaitv();
    }

    /** A wait on a word that does not hold the value waited for returns EAGAIN if the kernel has futex_waitv. */
    private static boolean probeWaitv()
    {
        final UnsafeBuffer probe = new UnsafeBuffer(ByteBuffer.allocateDirect(WAITV_ENTRY_LENGTH + Long.BYTES));
        putWaiter(probe, 0, probe.addressOffset() + WAITV_ENTRY_LENGTH, 1);
        try
        {
            return -1 == syscall(SYS_FUTEX_WAITV, probe.addressOffset(), 1, 0, 0, CLOCK_MONOTONIC, 0) &&
                EAGAIN == Native.getLastError();
        }
        catch (final RuntimeException | UnsatisfiedLinkError ex)
        {
            return false;
        }
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

    /** @return true if {@link #awaitAny} can sleep on several words at once here (futex_waitv). */
    public static boolean waitvAvailable()
    {
        return WAITV_AVAILABLE;
    }

    /**
     * Fills entry {@code index} of a {@code struct futex_waitv} vector for {@link #awaitAny}: sleep while
     * the shared (not process-private) 32-bit word at {@code address} holds {@code expected}.
     */
    public static void putWaiter(final UnsafeBuffer vector, final int index, final long address, final int expected)
    {
        final int entry = index * WAITV_ENTRY_LENGTH;
        vector.putLong(entry, expected & 0xFFFF_FFFFL);
        vector.putLong(entry + Long.BYTES, address);
        vector.putInt(entry + 2 * Long.BYTES, FUTEX2_SIZE_U32);
        vector.putInt(entry + 2 * Long.BYTES + Integer.BYTES, 0);
    }

    /**
     * Sleeps while every word of the first {@code count} entries of {@code vector} still holds its
     * expected value, for at most {@code timeoutNs}, or until one is woken (futex_waitv). Spurious
     * returns are possible. Returns at once unless {@link #waitvAvailable()}.
     */
    public static void awaitAny(final UnsafeBuffer vector, final int count, final long timeoutNs)
    {
        if (!WAITV_AVAILABLE)
        {
            return;
        }
        // futex_waitv takes an absolute time; System.nanoTime is CLOCK_MONOTONIC on Linux.
        final long deadline = System.nanoTime() + timeoutNs;
        final UnsafeBuffer timespec = TIMESPEC.get();
        timespec.putLong(0, deadline / 1_000_000_000L);
        timespec.putLong(Long.BYTES, deadline % 1_000_000_000L);
        syscall(SYS_FUTEX_WAITV, vector.addressOffset(), count, 0, timespec.addressOffset(), CLOCK_MONOTONIC, 0);
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
