package org.qnix.abi;

import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.agrona.concurrent.AtomicBuffer;

/**
 * Consistent snapshots of the Name and Group Tables a NIC publishes in its SDRAM
 * ({@link NameTableLayout}, {@link GroupTableLayout}), read under their sequence locks. Used by the
 * driver to answer group queries and by the tools to show the cluster.
 *
 * <pre>{@code
 * List<PublishedTables.NameEntry> names = PublishedTables.names(sdram, layout);
 * }</pre>
 */
public final class PublishedTables
{
    /**
     * How long a reader keeps trying before it gives up. A writer is a control program that can be
     * preempted between the two halves of its write (with one firmware JVM per NIC nothing binds it to
     * a CPU of its own), so the bound is a time, longer than the scheduler's slices, not a number of
     * attempts: 10,000 spins gave up within a millisecond, and `qnix run` failed with "Group Table kept
     * changing" while groups were forming.
     */
    static final long MAX_WAIT_NS = TimeUnit.SECONDS.toNanos(2);
    /** Attempts that spin before the reader starts yielding its CPU, which the writer may need. */
    private static final int SPINS = 100;

    /** One Name Table entry. */
    public record NameEntry(ProcessName name, NicCoordinates node, int nicPid, int osPid)
    {
    }

    /** One Group Table entry. */
    public record GroupEntry(int group, int expectedSize, List<ProcessName> members)
    {
    }

    private PublishedTables()
    {
    }

    public static List<NameEntry> names(final AtomicBuffer sdram, final NicSdramLayout layout)
    {
        final int base = (int)layout.nameTableOffset();
        final int entries = layout.parameters().nameTableEntries();
        return snapshot(sdram, base + NameTableLayout.SEQUENCE_OFFSET, "Name Table", MAX_WAIT_NS, () ->
        {
            final List<NameEntry> result = new ArrayList<>();
            for (int i = 0; i < entries; i++)
            {
                final int e = base + NameTableLayout.entryOffset(i);
                if (NameTableLayout.STATE_USED == sdram.getInt(e + NameTableLayout.STATE_OFFSET))
                {
                    result.add(new NameEntry(
                        new ProcessName(sdram.getInt(e + NameTableLayout.AI_OFFSET), sdram.getInt(e + NameTableLayout.PI_OFFSET)),
                        NicCoordinates.unpack(sdram.getInt(e + NameTableLayout.NODE_OFFSET) & 0xFFFF),
                        sdram.getInt(e + NameTableLayout.NIC_PID_OFFSET),
                        sdram.getInt(e + NameTableLayout.OS_PID_OFFSET)));
                }
            }
            return result;
        });
    }

    public static List<GroupEntry> groups(final AtomicBuffer sdram, final NicSdramLayout layout)
    {
        final ClusterParameters params = layout.parameters();
        final int base = (int)layout.groupTableOffset();
        return snapshot(sdram, base + GroupTableLayout.SEQUENCE_OFFSET, "Group Table", MAX_WAIT_NS, () ->
        {
            final List<GroupEntry> result = new ArrayList<>();
            for (int i = 0; i < params.groupTableEntries(); i++)
            {
                final int e = base + (int)GroupTableLayout.entryOffset(params, i);
                if (GroupTableLayout.STATE_USED != sdram.getInt(e + GroupTableLayout.STATE_OFFSET))
                {
                    continue;
                }
                final int count = Math.min(
                    Math.max(0, sdram.getInt(e + GroupTableLayout.MEMBER_COUNT_OFFSET)), params.nameTableEntries());
                final List<ProcessName> members = new ArrayList<>(count);
                for (int m = 0; m < count; m++)
                {
                    final int mo = e + GroupTableLayout.MEMBERS_OFFSET + m * GroupTableLayout.MEMBER_LENGTH;
                    members.add(new ProcessName(sdram.getInt(mo), sdram.getInt(mo + Integer.BYTES)));
                }
                result.add(new GroupEntry(
                    sdram.getInt(e + GroupTableLayout.NAME_OFFSET),
                    sdram.getInt(e + GroupTableLayout.EXPECTED_SIZE_OFFSET),
                    members));
            }
            return result;
        });
    }

    /**
     * Reads a table under its sequence lock: the sequence even and the same before and after the read
     * (writer: the NIC's control program, which makes it odd while it writes).
     *
     * @throws IllegalStateException if no read was consistent within {@code maxWaitNs}.
     */
    static <T> T snapshot(final AtomicBuffer sdram, final int sequenceOffset, final String table,
        final long maxWaitNs, final Supplier<T> read)
    {
        final long deadline = System.nanoTime() + maxWaitNs;
        for (int attempt = 0; ; attempt++)
        {
            final long before = sdram.getLongVolatile(sequenceOffset);
            if ((before & 1) == 0)
            {
                final T result = read.get();
                VarHandle.loadLoadFence();
                if (sdram.getLongVolatile(sequenceOffset) == before)
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
