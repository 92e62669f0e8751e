package org.qnix.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.WireMessageType;
import org.qnix.daemon.ClusterState;

/**
 * One {@code qnix trace}: attaches a {@link PacketTracer} to some NICs, writes every packet that passes
 * the filter to a pcapng file and/or as text lines, until {@link #stop()} (Ctrl-C), a duration, a
 * packet count or the cluster going down, then switches tracing off and reports what it wrote and what
 * the NICs dropped.
 *
 * <p>Each pcapng packet is an 8-byte trace header, then the packet as captured:
 *
 * <pre>
 *  +---------------+---------------+-------------------------------+
 *  |  Direction    |  Wire type    |  Capturing NIC (packed, LE)   |
 *  +---------------+---------------+-------------------------------+
 *  |  Reserved (0)                                                 |
 *  +---------------------------------------------------------------+
 *  |  16-byte PacketHeader, then the payload up to the snap length |
 * </pre>
 *
 * <pre>{@code
 * TraceSession session = new TraceSession(dir, nodes, 128, Set.of(), Path.of("t.pcapng"), null);
 * Thread t = new Thread(() -> session.run(0, 0)); t.start();  ... session.stop(); t.join();
 * }</pre>
 */
public final class TraceSession
{
    /** Bytes before the packet in a pcapng record. */
    public static final int TRACE_HEADER_LENGTH = 8;
    /**
     * While nothing comes, the tracer looks this often whether its cluster is still up: a trace left
     * running after {@code cluster down} otherwise polled the unlinked files for good, 0.02 cores.
     */
    private static final long LIVENESS_CHECK_NS = TimeUnit.SECONDS.toNanos(1);

    private final ClusterDirectory dir;
    private final List<NicCoordinates> nodes;
    private final int snapLength;
    private final Set<String> filter;
    private final Path pcapFile;
    private final PrintStream text;
    private final TracedPacketText describer = new TracedPacketText();
    private final UnsafeBuffer headerBytes = new UnsafeBuffer(new byte[PacketHeader.LENGTH]);
    private final PacketHeader header = new PacketHeader();
    private final Map<NicCoordinates, Integer> interfaces = new HashMap<>();
    private final ByteBuffer record = ByteBuffer.allocate(TRACE_HEADER_LENGTH + PacketHeader.LENGTH + 65536)
        .order(ByteOrder.LITTLE_ENDIAN);
    private volatile boolean stopping;
    private PcapNgWriter pcap;
    private long written;
    private long sent;
    private long filteredOut;
    private Map<NicCoordinates, Long> dropped = Map.of();
    /** Why the cluster is no longer up, if that ended the trace. */
    private String clusterGone;

    /**
     * @param filter   kinds of packets to keep: {@code data}, {@code system}, or system message names
     *                 ({@code Permission_Request}...), any case; empty keeps every packet.
     * @param pcapFile where to write pcapng, or null.
     * @param text     where to print one line per packet, or null.
     */
    public TraceSession(final ClusterDirectory dir, final List<NicCoordinates> nodes, final int snapLength,
        final Set<String> filter, final Path pcapFile, final PrintStream text)
    {
        this.dir = dir;
        this.nodes = nodes;
        this.snapLength = snapLength;
        this.filter = filter;
        this.pcapFile = pcapFile;
        this.text = text;
    }

    /** @throws IllegalArgumentException naming a filter word that is no kind of packet. */
    public static Set<String> parseFilter(final String words)
    {
        final Set<String> kinds = new java.util.HashSet<>();
        for (final String word : words.split(","))
        {
            final String kind = word.trim().toLowerCase(Locale.ROOT);
            boolean known = "data".equals(kind) || "system".equals(kind);
            for (int code = 1; code <= SystemMessage.LAST_CODE; code++)
            {
                known |= SystemMessage.name(code).toLowerCase(Locale.ROOT).equals(kind);
            }
            if (!known)
            {
                throw new IllegalArgumentException("--filter " + words + ": '" + word.trim() + "' is not a kind of " +
                    "packet; give data, system, or system message names such as Permission_Request,Permission_Reply");
            }
            kinds.add(kind);
        }
        return kinds;
    }

    /** Asks {@link #run} to finish: switch tracing off, write what is left, close the file. */
    public void stop()
    {
        stopping = true;
    }

    /**
     * Traces until {@link #stop()}, {@code durationMs} (0: no limit) or {@code maxPackets} written (0: no
     * limit).
     *
     * @return packets written.
     */
    public long run(final long durationMs, final long maxPackets)
    {
        return run(durationMs, maxPackets, () -> { });
    }

    /**
     * As {@link #run(long, long)}, calling {@code onTracing} once every NIC is attached: a trace refused
     * (another one holds a NIC) never says it is tracing.
     */
    public long run(final long durationMs, final long maxPackets, final Runnable onTracing)
    {
        try (PacketTracer tracer = PacketTracer.attach(dir, nodes, snapLength))
        {
            onTracing.run();
            final long deadline = durationMs > 0 ? System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(durationMs) : 0;
            if (null != pcapFile)
            {
                pcap = new PcapNgWriter(pcapFile, "qnix trace of cluster " + dir.name());
                for (final NicCoordinates node : nodes)
                {
                    interfaces.put(node, pcap.addInterface("node " + node, TRACE_HEADER_LENGTH + PacketHeader.LENGTH +
                        snapLength));
                }
            }
            int idle = 0;
            long nextLivenessCheck = System.nanoTime() + LIVENESS_CHECK_NS;
            while (!stopping && (0 == deadline || System.nanoTime() - deadline < 0) &&
                (0 == maxPackets || written < maxPackets))
            {
                if (0 == tracer.poll(this::write))
                {
                    idle++;
                    if (System.nanoTime() - nextLivenessCheck >= 0)
                    {
                        nextLivenessCheck = System.nanoTime() + LIVENESS_CHECK_NS;
                        final ClusterState state = ClusterState.inspect(dir);
                        if (!state.isLive())
                        {
                            clusterGone = state.reason();
                            break;
                        }
                    }
                    LockSupport.parkNanos(idle < 100 ? 100_000 : 1_000_000);
                }
                else
                {
                    idle = 0;
                    flush();
                }
            }
            tracer.stop(this::write);
            dropped = tracer.dropped();
            return written;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("writing " + pcapFile + ": " + ex.getMessage(), ex);
        }
        finally
        {
            try
            {
                if (null != pcap)
                {
                    pcap.close();
                }
            }
            catch (final IOException ex)
            {
                text("qnix trace: closing " + pcapFile + ": " + ex.getMessage());
            }
        }
    }

    private void write(final PacketTracer.Packet packet)
    {
        if (!passes(packet))
        {
            filteredOut++;
            return;
        }
        written++;
        sent += packet.isSent() ? 1 : 0;
        if (null != text)
        {
            text.println(describer.describe(packet));
        }
        if (null != pcap)
        {
            record.clear();
            record.put((byte)packet.direction()).put((byte)packet.wireType()).putShort((short)packet.node().packed())
                .putInt(0).put(packet.bytes());
            try
            {
                pcap.writePacket(interfaces.get(packet.node()), packet.epochNanos(), record.array(), 0,
                    record.position(), TRACE_HEADER_LENGTH + packet.wireLength());
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("writing " + pcapFile + ": " + ex.getMessage(), ex);
            }
        }
    }

    private boolean passes(final PacketTracer.Packet packet)
    {
        if (filter.isEmpty())
        {
            return true;
        }
        if (WireMessageType.SYSTEM_MESSAGE != packet.wireType())
        {
            return filter.contains("data");
        }
        if (filter.contains("system"))
        {
            return true;
        }
        if (packet.bytes().length < PacketHeader.LENGTH)
        {
            return false;
        }
        headerBytes.wrap(packet.bytes());
        return filter.contains(SystemMessage.name(header.wrap(headerBytes, 0).contextTag()).toLowerCase(Locale.ROOT));
    }

    private void flush()
    {
        try
        {
            if (null != pcap)
            {
                pcap.flush();
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("writing " + pcapFile + ": " + ex.getMessage(), ex);
        }
        if (null != text)
        {
            text.flush();
        }
    }

    private void text(final String line)
    {
        System.err.println(line);
    }

    /** @return e.g. "412 packets (206 sent, 206 taken) from nodes 0-0, 1-0; 3 filtered out; none dropped". */
    public String summary()
    {
        final long lost = dropped.values().stream().mapToLong(Long::longValue).sum();
        return written + " packets (" + sent + " sent, " + (written - sent) + " taken) from " +
            (1 == nodes.size() ? "node " : "nodes ") + String.join(", ", nodes.stream().map(Object::toString).toList()) +
            (filteredOut > 0 ? "; " + filteredOut + " filtered out" : "") +
            (0 == lost ? "; the NICs dropped no trace records" : "; NOT CAPTURED: " + lost +
            " packets the NICs could not put into their trace rings (the tracer fell behind: " + dropped + ")") +
            (null == clusterGone ? "" : "; stopped: cluster '" + dir.name() + "' is no longer up (" + clusterGone + ")");
    }

    /** @return why the cluster is no longer up if that ended {@link #run}, else null. */
    public String clusterGone()
    {
        return clusterGone;
    }

    /** @return trace records the NICs dropped, by node (known once {@link #run} returned). */
    public Map<NicCoordinates, Long> dropped()
    {
        return dropped;
    }
}
