package org.qnix.abi;

import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

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
    private static final int MAX_ATTEMPTS = 10_000;

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
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
        {
            final long before = sdram.getLongVolatile(base + NameTableLayout.SEQUENCE_OFFSET);
            if ((before & 1) != 0)
            {
                Thread.onSpinWait();
                continue;
            }
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
            VarHandle.loadLoadFence();
            if (sdram.getLongVolatile(base + NameTableLayout.SEQUENCE_OFFSET) == before)
            {
                return result;
            }
        }
        throw new IllegalStateException("Name Table kept changing: no consistent snapshot");
    }

    public static List<GroupEntry> groups(final AtomicBuffer sdram, final NicSdramLayout layout)
    {
        final ClusterParameters params = layout.parameters();
        final int base = (int)layout.groupTableOffset();
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
        {
            final long before = sdram.getLongVolatile(base + GroupTableLayout.SEQUENCE_OFFSET);
            if ((before & 1) != 0)
            {
                Thread.onSpinWait();
                continue;
            }
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
            VarHandle.loadLoadFence();
            if (sdram.getLongVolatile(base + GroupTableLayout.SEQUENCE_OFFSET) == before)
            {
                return result;
            }
        }
        throw new IllegalStateException("Group Table kept changing: no consistent snapshot");
    }
}
