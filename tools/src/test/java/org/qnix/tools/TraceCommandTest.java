package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.TraceLayout;
import org.qnix.abi.WireMessageType;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.ReceiveStatus;

/**
 * {@code qnix trace} on a running cluster: the pcapng file read back by a reader written here from
 * the pcapng format, the text mode, the Wireshark dissector through tshark when it is installed, and
 * messages that arrive the same with tracing on as off.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class TraceCommandTest
{
    private static final int LENGTH = 10_000;

    @TempDir
    Path temp;

    /** One Enhanced Packet Block: interface, time, the trace header's fields and the packet's. */
    private record Captured(int iface, long nanos, int direction, int wireType, int node, int originalLength,
        int tag, int counter, int packetLength)
    {
    }

    @Test
    void aTracedExchangeIsEveryPacketInOrderAndTheMessagesAreTheSame() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("t"), 2, 1, "threads");
        try (Qnix sender = TestClusters.registerAlone(dir, 801, "0-0");
             Qnix receiver = TestClusters.registerAlone(dir, 802, "1-0"))
        {
            final QnixBuffer out = sender.allocateBuffer(LENGTH);
            out.lock();
            final QnixBuffer in = receiver.allocateBuffer(LENGTH);
            in.lock();
            exchange(sender, receiver, out, in, 1);

            // A node the cluster does not have is refused before tracing starts.
            final CliResult noNode =
                CliResult.run("trace", "--cluster", dir.name(), "--node", "9-9", "--duration", "1");
            assertEquals(QnixCommand.BAD_ARGUMENT, noNode.exit, noNode.out + noNode.err);
            assertEquals("qnix: --node 9-9: cluster '" + dir.name() + "' has no such node, it is a 2x1 torus",
                noNode.err.strip());

            // Nor is a file among the clusters' files: one cut short under the NICs ended their firmware.
            final Path sdram = dir.nicSdram(NicCoordinates.parse("0-0"));
            final long sdramBytes = Files.size(sdram);
            for (final Path inside : List.of(sdram, dir.propertiesFile(), dir.path().resolve("new.pcapng")))
            {
                final CliResult refused = CliResult.run("trace", "--cluster", dir.name(), "-o", inside.toString(),
                    "--duration", "1");
                assertEquals(QnixCommand.BAD_ARGUMENT, refused.exit, refused.out + refused.err);
                assertEquals("qnix: -o " + inside + ": is in " + ClusterDirectory.baseDirectory().toAbsolutePath() +
                    ", where the clusters' NICs map their files: write it elsewhere", refused.err.strip());
            }
            // Nor another name of one of them, made outside the clusters' directory on their file system.
            final Path link = ClusterDirectory.baseDirectory().toAbsolutePath().getParent()
                .resolve(dir.name() + "-sdram-link");
            Files.createLink(link, sdram);
            try
            {
                final CliResult refused = CliResult.run("trace", "--cluster", dir.name(), "-o", link.toString(),
                    "--duration", "1");
                assertEquals(QnixCommand.BAD_ARGUMENT, refused.exit, refused.out + refused.err);
                assertEquals("qnix: -o " + link + ": has other hard links on the file system of " +
                    ClusterDirectory.baseDirectory().toAbsolutePath() + ", and may be a file a cluster's NIC maps: " +
                    "write a new file", refused.err.strip());
            }
            finally
            {
                Files.delete(link);
            }
            assertEquals(sdramBytes, Files.size(sdram));
            assertTrue(Files.notExists(dir.path().resolve("new.pcapng")));

            final Path pcap = temp.resolve("t.pcapng");
            final ByteArrayOutputStream lines = new ByteArrayOutputStream();
            final List<NicCoordinates> nodes = List.of(NicCoordinates.parse("0-0"), NicCoordinates.parse("1-0"));
            final TraceSession session = new TraceSession(dir, nodes, 64, Set.of(), pcap,
                new PrintStream(lines, true, StandardCharsets.UTF_8));
            final long[] written = {-1};
            final Thread tracing = new Thread(() -> written[0] = session.run(0, 0));
            tracing.start();
            TestClusters.await("the trace to be on", () -> traced(dir, "0-0") && traced(dir, "1-0"));
            assertThrows(IllegalStateException.class, () -> PacketTracer.attach(dir, nodes.subList(0, 1), 0),
                "one tracer per NIC");

            exchange(sender, receiver, out, in, 2);
            session.stop();
            tracing.join(TimeUnit.SECONDS.toMillis(60));
            assertTrue(!traced(dir, "0-0") && !traced(dir, "1-0"), "tracing off again");
            exchange(sender, receiver, out, in, 3);

            final List<Captured> packets = read(pcap);
            assertEquals(written[0], packets.size());
            assertEquals(packets.size(), lines.toString(StandardCharsets.UTF_8).lines().count(), "one text line each");
            // Per node, per direction: the permission handshake, then three data packets in order.
            final List<Captured> fromSender = select(packets, "0-0", TraceLayout.DIRECTION_SENT);
            final List<Captured> atReceiver = select(packets, "1-0", TraceLayout.DIRECTION_TAKEN);
            assertEquals(SystemMessage.PERMISSION_REQUEST, fromSender.get(0).tag(), packets.toString());
            assertEquals(WireMessageType.SYSTEM_MESSAGE, fromSender.get(0).wireType());
            assertEquals(SystemMessage.PERMISSION_REQUEST, atReceiver.get(0).tag());
            final List<Captured> replies = select(packets, "1-0", TraceLayout.DIRECTION_SENT);
            assertTrue(replies.stream().allMatch(c -> SystemMessage.PERMISSION_REPLY == c.tag()), replies.toString());
            assertTrue(replies.size() >= 1);
            for (final List<Captured> data : List.of(data(fromSender), data(atReceiver)))
            {
                assertEquals(3, data.size(), packets.toString());
                long bytes = 0;
                for (int i = 0; i < 3; i++)
                {
                    assertEquals(i, data.get(i).counter(), "data packets in order");
                    bytes += data.get(i).originalLength() - TraceSession.TRACE_HEADER_LENGTH - PacketHeader.LENGTH;
                    assertTrue(data.get(i).packetLength() <= PacketHeader.LENGTH + 64, "cut to the snap length");
                }
                assertEquals(LENGTH, bytes, "every byte of the message on the wire, once");
            }
            assertTrue(data(fromSender).get(0).nanos() >= fromSender.get(0).nanos(), "request before data");
            assertTrue(session.summary().contains("dropped no trace records"), session.summary());
            dissector(pcap, packets.size());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    /** A trace left running ends when its cluster goes down, saying so, instead of polling for good. */
    @Test
    void aTraceEndsWhenItsClusterGoesDown() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("t"), 2, 1, "threads");
        final TraceSession session;
        final Thread tracing;
        try
        {
            session = new TraceSession(dir, List.of(NicCoordinates.parse("0-0")), 64, Set.of(), null, null);
            tracing = new Thread(() -> session.run(0, 0), "trace-until-down");
            tracing.start();
            TestClusters.await("the trace to be on", () -> traced(dir, "0-0"));
        }
        finally
        {
            TestClusters.down(dir);
        }
        tracing.join(TimeUnit.SECONDS.toMillis(30));
        final boolean ended = !tracing.isAlive();
        if (!ended)
        {
            session.stop();
            tracing.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertTrue(ended, "the trace ended with its cluster");
        assertTrue(null != session.clusterGone(), session.summary());
        assertTrue(session.summary().contains("stopped: cluster '" + dir.name() + "' is no longer up"),
            session.summary());
    }

    @Test
    void badArgumentsGetAOneLineError()
    {
        for (final String[] args : List.of(new String[] {"trace", "--snaplen", "-1"},
            new String[] {"trace", "--filter", "frob"}, new String[] {"trace", "--duration", "0"},
            new String[] {"trace", "--duration", "0.0000001"},
            new String[] {"trace", "--count", "0"}, new String[] {"trace", "--cluster", "no-such-cluster-here"},
            new String[] {"trace", "--cluster", "no-such-cluster-here", "-o", "/no/such/dir/x.pcapng"}))
        {
            final CliResult result = CliResult.run(args);
            assertTrue(result.exit != QnixCommand.OK, String.join(" ", args));
            assertEquals(1, result.err.lines().count(), String.join(" ", args) + ":\n" + result.err);
            assertTrue(result.err.startsWith("qnix: "), result.err);
        }
        // The output's directory is looked at before the cluster.
        final CliResult missing =
            CliResult.run("trace", "--cluster", "no-such-cluster-here", "-o", "/no/such/dir/x.pcapng");
        assertTrue(missing.err.contains("-o /no/such/dir/x.pcapng: no such directory /no/such/dir"), missing.err);
    }

    /** Wireshark's own reading of the file, through the dissector in the repository, when tshark is here. */
    private void dissector(final Path pcap, final int packets) throws Exception
    {
        final Path script = Path.of("wireshark/qnix.lua").toAbsolutePath();
        final boolean present = ChildCommand.executable("/usr/bin/tshark");
        if (!present)
        {
            System.out.println("TraceCommandTest: tshark not installed (apt-get install tshark): dissector not checked");
            return;
        }
        final ChildCommand.Result result = ChildCommand.run(List.of("/usr/bin/tshark", "-X", "lua_script:" + script,
            "-r", pcap.toString(), "-T", "fields", "-e", "qnix.direction", "-e", "qnix.type", "-e", "qnix.system",
            "-e", "qnix.counter"), java.util.Map.of(), temp);
        assertEquals(0, result.exit(), result.output());
        final List<String> rows = result.output().lines().filter(l -> l.matches("[12]\\t[123]\\t.*")).toList();
        assertEquals(packets, rows.size(), "a decoded row per packet:\n" + result.output());
        assertTrue(rows.stream().anyMatch(r -> r.startsWith("1\t2\t" + SystemMessage.PERMISSION_REQUEST)),
            result.output());
        assertEquals(6, rows.stream().filter(r -> r.split("\t")[1].equals("1")).count(), "3 data out, 3 in");
    }

    private static boolean traced(final ClusterDirectory dir, final String node)
    {
        try (org.qnix.abi.MappedFile file = org.qnix.abi.MappedFile.mapExisting(dir.counters(NicCoordinates.parse(node))))
        {
            return 0 != file.buffer().getIntVolatile(
                org.qnix.abi.CountersLayout.TRACE_CONTROL_OFFSET + TraceLayout.CAPTURE_LENGTH_OFFSET);
        }
    }

    private static void exchange(final Qnix sender, final Qnix receiver, final QnixBuffer out, final QnixBuffer in,
        final int round)
    {
        out.buffer().setMemory(0, LENGTH, (byte)round);
        in.buffer().setMemory(0, LENGTH, (byte)0);
        final int rx = receiver.recvContext(sender.name(), round, true, in, 0, LENGTH);
        receiver.receive(rx);
        final int tx = sender.sendContext(receiver.name(), round, true, out, 0, LENGTH);
        sender.send(tx);
        sender.waitForSend(tx, 60, TimeUnit.SECONDS);
        final ReceiveStatus status = new ReceiveStatus();
        receiver.waitForReceive(rx, status, 60, TimeUnit.SECONDS);
        assertEquals(LENGTH, status.length());
        for (int i = 0; i < LENGTH; i++)
        {
            assertEquals(round, in.buffer().getByte(i), "round " + round + " byte " + i);
        }
    }

    private static List<Captured> select(final List<Captured> packets, final String node, final int direction)
    {
        final int packed = NicCoordinates.parse(node).packed();
        return packets.stream().filter(c -> c.node() == packed && c.direction() == direction).toList();
    }

    private static List<Captured> data(final List<Captured> packets)
    {
        return packets.stream().filter(c -> WireMessageType.DATA_PACKET == c.wireType()).toList();
    }

    /** A pcapng reader from the format's text: Section Header, Interface Description and Enhanced Packet Blocks. */
    private static List<Captured> read(final Path file) throws Exception
    {
        final ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        final List<Captured> packets = new ArrayList<>();
        int interfaces = 0;
        assertEquals(0x0A0D0D0A, in.getInt(0), "a Section Header Block first");
        assertEquals(0x1A2B3C4D, in.getInt(8), "little-endian");
        while (in.remaining() > 0)
        {
            final int start = in.position();
            final int type = in.getInt(start);
            final int length = in.getInt(start + 4);
            assertEquals(length, in.getInt(start + length - 4), "block lengths agree at " + start);
            if (1 == type)
            {
                assertEquals(147, in.getShort(start + 8) & 0xFFFF, "LINKTYPE_USER0");
                interfaces++;
            }
            else if (6 == type)
            {
                final int iface = in.getInt(start + 8);
                assertTrue(iface < interfaces);
                final long nanos = ((long)in.getInt(start + 12) << 32) | (in.getInt(start + 16) & 0xFFFFFFFFL);
                final int captured = in.getInt(start + 20);
                final int original = in.getInt(start + 24);
                final int data = start + 28;
                final int packet = data + TraceSession.TRACE_HEADER_LENGTH;
                packets.add(new Captured(iface, nanos, in.get(data), in.get(data + 1), in.getShort(data + 2) & 0xFFFF,
                    original, in.getShort(packet + PacketHeader.CONTEXT_TAG_OFFSET) & 0xFFFF,
                    in.getShort(packet + PacketHeader.COUNTER_OFFSET) & 0xFFFF, captured - TraceSession.TRACE_HEADER_LENGTH));
            }
            in.position(start + length);
        }
        assertEquals(2, interfaces, "one interface per traced NIC");
        return packets;
    }
}
