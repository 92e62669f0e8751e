package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.agrona.MutableDirectBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplDescriptor;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.ReceiveStatus;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;

/**
 * QNIX and VIPL in one JVM, both moving data (issue 14): a worker JVM on 0-0 holding a {@code Qnix}
 * and a {@code ViplNic} sends messages through both at once to this JVM on 1-0, which holds both too;
 * every byte checked. While the worker holds its VI, regions and CQ, {@code qnix cluster status} lists
 * the QNIX processes, the VIPL processes, the connected VIs with their peers, the regions and the CQs,
 * and {@code qnix inspect} carries the same.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplMixedTest extends ViplClusterTest
{
    static final ProcessName SERVER = new ProcessName(931, 0);
    static final ProcessName WORKER = new ProcessName(932, 0);
    static final int MESSAGES = 12;

    static int length(final int k)
    {
        return (k * 40_503) % (150 * 1024) + k % 3;
    }

    @Test
    void oneJvmMovesDataThroughQnixAndViplAtOnceAndStatusListsWhatVipHolds() throws Exception
    {
        final Path hold = Files.createTempFile("qnix-vipl-hold", ".flag");
        try (Qnix qnix = Qnix.options().name(SERVER).group(SERVER.ai(), 1).cluster(dir.name()).node("1-0")
            .timeout(Duration.ofSeconds(120)).init();
            ViplEnd server = new ViplEnd(dir, "1-0", 1, 2 << 20))
        {
            final Vi vi = server.vi(Reliability.RELIABLE_DELIVERY, 256 * 1024, false, true);
            final Descriptor[] receives = new Descriptor[MESSAGES];
            for (int k = 0; k < MESSAGES; k++)
            {
                receives[k] = server.receive(k, k * 160 * 1024, 160 * 1024);
            }
            server.postRecvTaken(vi, receives);

            final Process worker = ChildCommand.start(ViplMixedWorker.class, dir.name(), "0-0", "1-0", "mixed", hold.toString());
            final ChildCommand.Lines said = ChildCommand.collect(worker, "worker: ");
            try
            {
                server.nic.connectWait("mixed".getBytes(StandardCharsets.US_ASCII), ViplEnd.TIMEOUT_MS).accept(vi);
                try (QnixBuffer buffer = qnix.allocateBuffer(256 * 1024))
                {
                    buffer.lock();
                    final MutableDirectBuffer b = buffer.buffer();
                    final ReceiveStatus status = new ReceiveStatus();
                    for (int k = 0; k < MESSAGES; k++)
                    {
                        final int rx = qnix.recvContext(WORKER, k, true, buffer, 0, 256 * 1024);
                        qnix.receive(rx);
                        qnix.waitForReceive(rx, status, 60, TimeUnit.SECONDS);
                        assertEquals(length(k), status.length(), "QNIX message " + k);
                        for (int i = 0; i < length(k); i++)
                        {
                            if (ViplEnd.pattern(1000 + k, i) != b.getByte(i))
                            {
                                assertEquals(ViplEnd.pattern(1000 + k, i), b.getByte(i), "QNIX message " + k + " byte " + i);
                            }
                        }
                    }
                }
                for (int k = 0; k < MESSAGES; k++)
                {
                    assertSame(receives[k], vi.recvWait(ViplEnd.TIMEOUT_MS), "VIPL message " + k + ": " + said);
                    assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, receives[k].status());
                    assertEquals(length(k), receives[k].length());
                    server.assertMessage(k * 160 * 1024, length(k), k);
                    assertSame(vi, server.cq.await(ViplEnd.TIMEOUT_MS).vi());
                }
                TestClusters.await("the worker done sending", () -> said.contains("sent"));
                final int workerVi = Integer.parseInt(said.said().stream().filter(l -> l.startsWith("connected "))
                    .findFirst().orElseThrow().substring("connected ".length()));
                assertStatusListsBothEnds(vi, workerVi, server);
            }
            finally
            {
                Files.deleteIfExists(hold);
                assertTrue(worker.waitFor(2, TimeUnit.MINUTES), "the worker ends once let go");
                said.join(10_000);
                assertEquals(0, worker.exitValue(), "the worker said: " + said);
                worker.destroyForcibly();
            }
            vi.disconnect();
        }
        finally
        {
            Files.deleteIfExists(hold);
        }
    }

    private static void assertStatusListsBothEnds(final Vi serverVi, final int workerVi, final ViplEnd server)
    {
        final ClusterStatus status = ClusterStatus.read(dir);
        final ClusterStatus.Vipl vipl = status.vipl();
        final NicCoordinates n0 = new NicCoordinates(0, 0);
        final NicCoordinates n1 = new NicCoordinates(1, 0);
        assertEquals(2, vipl.processes().size(), vipl.processes().toString());
        assertEquals(List.of(n0, n1), vipl.processes().stream().map(ClusterStatus.ViplProcess::node).toList());
        final ClusterStatus.ViplVi w = vipl.vis().stream().filter(v -> v.node().equals(n0)).findFirst().orElseThrow();
        final ClusterStatus.ViplVi s = vipl.vis().stream().filter(v -> v.node().equals(n1)).findFirst().orElseThrow();
        assertEquals(workerVi, w.index());
        assertEquals(serverVi.index(), s.index());
        assertEquals(ViTableEntry.STATE_CONNECTED, w.state());
        assertEquals(ViTableEntry.STATE_CONNECTED, s.state());
        assertEquals(n1, w.peer());
        assertEquals(s.index(), w.peerVi());
        assertEquals(n0, s.peer());
        assertEquals(w.index(), s.peerVi());
        assertNotEquals(0, w.connectionId());
        assertEquals(ViTableEntry.RELIABLE_DELIVERY, s.reliability());
        final ClusterStatus.ViplProcess serverProcess =
            vipl.processes().stream().filter(p -> p.node().equals(n1)).findFirst().orElseThrow();
        assertEquals(serverProcess.slot(), s.owner());
        assertEquals(ProcessHandle.current().pid(), serverProcess.osPid());
        // The worker: one region and one CQ; this JVM: its descriptors' and data's regions and its CQ.
        assertEquals(1, vipl.regions().stream().filter(r -> r.node().equals(n0)).count());
        assertEquals(2, vipl.regions().stream().filter(r -> r.node().equals(n1)).count());
        final ClusterStatus.ViplRegion data = vipl.regions().stream()
            .filter(r -> r.node().equals(n1) && r.handle() == server.regions[0].handle()).findFirst().orElseThrow();
        assertEquals(2 << 20, data.length());
        assertEquals(server.ptag.value(), data.ptag());
        assertEquals(ViTableEntry.ATTRIBUTE_RDMA_WRITE, data.attributes());
        assertEquals(List.of(64, 1024), vipl.cqs().stream().map(ClusterStatus.ViplCq::entries).toList());

        final CliResult text = CliResult.run("cluster", "status", "--name", dir.name());
        assertEquals(QnixCommand.OK, text.exit, text.err);
        final String out = text.out;
        System.out.println(out);
        assertTrue(out.contains("registered processes (2):") && out.contains("(931,0)") && out.contains("(932,0)"), out);
        assertTrue(out.contains("VIPL processes (2):") && out.contains("VIs (2):") && out.contains("memory regions (3):") &&
            out.contains("completion queues (2):"), out);
        assertTrue(out.lines().anyMatch(l -> l.trim().startsWith("0-0") && l.contains("connected") &&
            l.contains("reliable delivery") && l.contains("1-0/" + s.index())), out);
        assertTrue(out.lines().anyMatch(l -> l.trim().startsWith("1-0") && l.contains("connected") &&
            l.contains("0-0/" + w.index()) && l.contains(Integer.toString(s.connectionId()))), out);
        assertTrue(out.contains(String.format("0x%x", server.regions[0].handle())) && out.contains("rdma-write"), out);

        final Map<String, Object> node = ClusterInspector.node(dir, n1);
        @SuppressWarnings("unchecked")
        final Map<String, Object> via = (Map<String, Object>)node.get("vipl");
        @SuppressWarnings("unchecked")
        final List<Map<String, Object>> vis = (List<Map<String, Object>>)via.get("vis");
        assertEquals(1, vis.size());
        assertEquals("connected", vis.get(0).get("state"));
        assertEquals("0-0", vis.get(0).get("peer"));
        assertEquals(w.index(), vis.get(0).get("peerVi"));
        assertEquals(2, ((List<?>)via.get("memoryRegions")).size());
        assertEquals(1, ((List<?>)via.get("completionQueues")).size());
    }
}
