package org.qnix.tools;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.CountersLayout;
import org.qnix.abi.FileDescriptorBlock;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;

/**
 * Every counter of every NIC of a live cluster, read from the {@code counters} files the firmware
 * writes (Agrona counters: a label and a 64-bit value each), with each NIC's liveness from its Control
 * Program segment. What {@code qnix stat} prints, the way AeronStat prints a media driver's counters.
 *
 * <pre>{@code
 * NicStatistics before = NicStatistics.read(ClusterDirectory.of("default"));
 * long sent = before.nodes().get(0).counters().get("data packets sent");
 * }</pre>
 */
public final class NicStatistics
{
    /**
     * One NIC: its counters by label, in the order the firmware allocated them, and how long ago its
     * control program last beat.
     */
    public record Node(NicCoordinates node, String firmwareState, long heartbeatAgeMs, Map<String, Long> counters)
    {
        /** @return true if the firmware runs and beat recently. */
        public boolean isAlive()
        {
            return "running".equals(firmwareState);
        }
    }

    private final String cluster;
    private final long readAtNs;
    private final List<Node> nodes;

    NicStatistics(final String cluster, final long readAtNs, final List<Node> nodes)
    {
        this.cluster = cluster;
        this.readAtNs = readAtNs;
        this.nodes = nodes;
    }

    /**
     * @throws IllegalStateException if the cluster is not up, saying why (as {@code cluster status}).
     */
    public static NicStatistics read(final ClusterDirectory dir)
    {
        final List<Node> nodes = new ArrayList<>();
        for (final ClusterStatus.Node node : ClusterStatus.read(dir).nodes())
        {
            nodes.add(new Node(node.node(), node.firmwareStateName(), node.heartbeatAgeMs(), counters(dir, node.node())));
        }
        return new NicStatistics(dir.name(), System.nanoTime(), nodes);
    }

    /** @return one NIC's counters by label, in allocation order. */
    public static Map<String, Long> counters(final ClusterDirectory dir, final NicCoordinates node)
    {
        try (MappedFile file = MappedFile.mapExisting(dir.counters(node)))
        {
            return counters(file.buffer(), dir.counters(node).toString());
        }
    }

    /**
     * @param file a mapped counters file.
     * @return its counters by label, in allocation order.
     */
    static Map<String, Long> counters(final AtomicBuffer file, final String what)
    {
        FileDescriptorBlock.verify(file, FileDescriptorBlock.TYPE_COUNTERS, what);
        final Map<String, Long> values = new LinkedHashMap<>();
        final CountersReader reader = new CountersReader(
            new UnsafeBuffer(file, CountersLayout.METADATA_OFFSET, CountersLayout.METADATA_LENGTH),
            new UnsafeBuffer(file, CountersLayout.VALUES_OFFSET, CountersLayout.VALUES_LENGTH));
        reader.forEach((id, type, key, label) -> values.put(label, reader.getCounterValue(id)));
        return values;
    }

    public String cluster()
    {
        return cluster;
    }

    public List<Node> nodes()
    {
        return nodes;
    }

    /** @return {@link System#nanoTime()} when the counters were read, for rates between two readings. */
    public long readAtNs()
    {
        return readAtNs;
    }
}
