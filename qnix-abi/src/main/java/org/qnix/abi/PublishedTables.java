package org.qnix.abi;

import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.AtomicBuffer;

/**
 * Consistent snapshots of the Name and Group Tables a NIC publishes in its SDRAM
 * ({@link NameTableLayout}, {@link GroupTableLayout}), read under their sequence locks
 * ({@link SequenceLock}). Used by the driver to answer group queries and by the tools to show the
 * cluster.
 *
 * <pre>{@code
 * List<PublishedTables.NameEntry> names = PublishedTables.names(sdram, layout);
 * }</pre>
 */
public final class PublishedTables
{
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
        return SequenceLock.read(sdram, base + NameTableLayout.SEQUENCE_OFFSET, "Name Table",
            SequenceLock.MAX_READ_WAIT_NS, () ->
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
        return SequenceLock.read(sdram, base + GroupTableLayout.SEQUENCE_OFFSET, "Group Table",
            SequenceLock.MAX_READ_WAIT_NS, () ->
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
}
