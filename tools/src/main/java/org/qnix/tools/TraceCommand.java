package org.qnix.tools;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.TraceLayout;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code qnix trace}: capture the packets the NICs send and take, to a pcapng file for Wireshark
 * ({@code tools/wireshark/qnix.lua} decodes them) or as text lines.
 *
 * <pre>{@code
 * qnix trace -o run.pcapng                      # every NIC, until Ctrl-C
 * qnix trace --node 0-0 --filter system         # system messages of node 0-0 as text
 * qnix trace -o t.pcapng --duration 10 --text   # ten seconds, to a file and as text
 * }</pre>
 */
@Command(name = "trace", mixinStandardHelpOptions = true,
    description = {
        "Capture every packet the NICs of a cluster send or take, with a timestamp, into a pcapng file or as " +
            "text.",
        "Open the file in Wireshark with -X lua_script:tools/wireshark/qnix.lua; text lines are the default " +
            "without -o. Runs until Ctrl-C, --duration, --count or the cluster going down. The NICs never wait for " +
            "the tracer: what does not " +
            "fit their trace rings is counted and reported at the end; the cluster's own packets are never lost or " +
            "reordered by tracing." })
public final class TraceCommand implements Callable<Integer>
{
    @Mixin
    ClusterOption cluster;

    @Option(names = "--node", paramLabel = "X-Y", description = "A NIC to trace (repeat for more; default: every NIC).")
    List<String> nodeNames = new ArrayList<>();

    @Option(names = "--filter", paramLabel = "KINDS",
        description = "Keep only these kinds, comma separated: data, system, or system message names " +
            "(Permission_Request, Permission_Reply, New_Process, New_Process_Ack, New_Group, New_Group_Ack, " +
            "Barrier, Delete_Process, Transfer_Abort, Eager_Short, Eager_Short_Reply).")
    String filter;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE.pcapng", description = "Write a pcapng file.")
    Path output;

    @Option(names = "--text", description = "Print one decoded line per packet (the default without -o).")
    boolean text;

    @Option(names = "--snaplen", paramLabel = "BYTES", defaultValue = "" + TraceLayout.DEFAULT_SNAP_LENGTH,
        description = "Payload bytes kept per packet, after its 16-byte header (default: ${DEFAULT-VALUE}; " +
            "system messages are at most 64).")
    int snapLength;

    @Option(names = "--duration", paramLabel = "SECONDS", description = "Stop after this many seconds.")
    Double duration;

    @Option(names = "--count", paramLabel = "N", description = "Stop after N packets written.")
    Long count;

    public Integer call() throws InterruptedException
    {
        if (snapLength < 0 || snapLength > TraceLayout.MAX_SNAP_LENGTH)
        {
            throw new IllegalArgumentException("--snaplen " + snapLength + ": give 0 to " + TraceLayout.MAX_SNAP_LENGTH);
        }
        // Whole milliseconds: less than half of one rounded to 0, which is no limit at all.
        if (null != duration && !(duration >= 0.001 && duration <= 7 * 86_400))
        {
            throw new IllegalArgumentException("--duration " + duration + ": give 0.001 to 604800 seconds");
        }
        if (null != count && count < 1)
        {
            throw new IllegalArgumentException("--count " + count + ": give at least 1");
        }
        if (null != output && (output.toString().isBlank() || java.nio.file.Files.isDirectory(output)))
        {
            throw new IllegalArgumentException("-o " + output + ": give a file name, e.g. trace.pcapng");
        }
        if (null != output)
        {
            Bench.checkOutputFile("-o", output);
        }
        final Set<String> kinds = null == filter ? Set.of() : TraceSession.parseFilter(filter);
        final ClusterDirectory dir = cluster.dir();
        final ClusterParameters params = ClusterStatus.liveProperties(dir).parameters();
        final List<NicCoordinates> nodes = new ArrayList<>();
        if (nodeNames.isEmpty())
        {
            for (int i = 0; i < params.nodeCount(); i++)
            {
                nodes.add(NicCoordinates.ofIndex(i, params.torusWidth()));
            }
        }
        for (final String name : nodeNames)
        {
            final NicCoordinates node = NicCoordinates.parse(name);
            if (!params.hasNode(node))
            {
                throw new IllegalArgumentException("--node " + name + ": cluster '" + dir.name() +
                    "' has no such node, it is a " + params.torus() + " torus");
            }
            if (!nodes.contains(node))
            {
                nodes.add(node);
            }
        }
        final TraceSession session = new TraceSession(dir, nodes, snapLength, kinds, output,
            null == output || text ? System.out : null);
        // Not a join of the tracing thread: after its summary that thread calls System.exit, which blocks
        // while this hook runs, so a join would always wait its whole limit.
        final CountDownLatch summarized = new CountDownLatch(1);
        final Thread onInterrupt = new Thread(() ->
        {
            session.stop();
            try
            {
                summarized.await(5, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ignored)
            {
                Thread.currentThread().interrupt();
            }
        }, "qnix-trace-stop");
        Runtime.getRuntime().addShutdownHook(onInterrupt);
        try
        {
            session.run(null == duration ? 0 : Math.round(duration * 1000), null == count ? 0 : count,
                () -> System.err.println("qnix trace: tracing " + nodes.size() + (1 == nodes.size() ? " NIC" : " NICs") +
                    " of cluster '" + dir.name() + "'" + (null == output ? "" : " into " + output) + "; Ctrl-C stops"));
        }
        finally
        {
            try
            {
                Runtime.getRuntime().removeShutdownHook(onInterrupt);
            }
            catch (final IllegalStateException shuttingDown)
            {
                // Ctrl-C: the hook is running and waits for this thread.
            }
        }
        System.err.println("qnix trace: " + session.summary());
        summarized.countDown();
        return QnixCommand.OK;
    }
}
