package org.qnix.abi;

import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The sequence lock guarding a table a NIC publishes in its SDRAM ({@link NameTableLayout},
 * {@link GroupTableLayout}): the control program, the one writer, makes the sequence odd, writes, and
 * makes it even again; a reader in another process takes a read as consistent when the sequence was
 * even and the same before and after it.
 *
 * <pre>{@code
 * SequenceLock.beginWrite(sdram, sequence);                       // the firmware
 * sdram.putInt(entry + NameTableLayout.STATE_OFFSET, NameTableLayout.STATE_USED);
 * SequenceLock.endWrite(sdram, sequence);
 *
 * int used = SequenceLock.read(sdram, sequence, "Name Table",     // a tool or the driver
 *     SequenceLock.MAX_READ_WAIT_NS, () -> countUsed(sdram));
 * }</pre>
 */
public final class SequenceLock
{
    /**
     * How long a reader keeps trying before it gives up. The writer is a control program that can be
     * preempted between the two halves of its write (with one firmware JVM per NIC nothing binds it to
     * a CPU of its own), so the bound is a time, longer than the scheduler's slices, not a number of
     * attempts: 10,000 spins gave up within a millisecond, and `qnix run` failed with "Group Table kept
     * changing" while groups were forming.
     */
    public static final long MAX_READ_WAIT_NS = TimeUnit.SECONDS.toNanos(2);
    /** Attempts that spin before the reader starts yielding its CPU, which the writer may need. */
    private static final int SPINS = 100;

    private SequenceLock()
    {
    }

    public static void beginWrite(final AtomicBuffer buffer, final int sequenceOffset)
    {
        final long sequence = buffer.getLong(sequenceOffset);
        // Readers (read, in other processes): an odd sequence tells them to retry.
        buffer.putLongRelease(sequenceOffset, sequence + 1);
        // Keep the table writes that follow from being seen before the odd sequence.
        VarHandle.storeStoreFence();
    }

    public static void endWrite(final AtomicBuffer buffer, final int sequenceOffset)
    {
        // Readers (read, in other processes): the table is consistent again once the sequence is even.
        buffer.putLongRelease(sequenceOffset, buffer.getLong(sequenceOffset) + 1);
    }

    /**
     * Reads a table under its sequence lock, again until a read is consistent (writer: the NIC's
     * control program).
     *
     * @param table names the table in the error.
     * @throws IllegalStateException if no read was consistent within {@code maxWaitNs}.
     */
    public static <T> T read(final AtomicBuffer buffer, final int sequenceOffset, final String table,
        final long maxWaitNs, final Supplier<T> read)
    {
        final long deadline = System.nanoTime() + maxWaitNs;
        for (int attempt = 0; ; attempt++)
        {
            final long before = buffer.getLongVolatile(sequenceOffset);
            if ((before & 1) == 0)
            {
                final T result = read.get();
                VarHandle.loadLoadFence();
                if (buffer.getLongVolatile(sequenceOffset) == before)
                {
                    return result;
                }
            }
            if (System.nanoTime() - deadline > 0)
            {
                throw new IllegalStateException(table + " kept changing for " +
                    TimeUnit.NANOSECONDS.toMillis(maxWaitNs) + " ms: no consistent snapshot");
            }
            if (attempt < SPINS)
            {
                Thread.onSpinWait();
            }
            else
            {
                Thread.yield();
            }
        }
    }
}
