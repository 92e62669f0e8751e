package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.ViplResult;
import org.qnix.firmware.NicCounters;
import org.qnix.host.EmptyPolls;
import org.qnix.vipl.AsyncError;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.NicAttributes;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.ViState;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplAddress;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;
import org.qnix.vipl.ViplNicDeadException;

/**
 * The NIC-wide side of the VIPL on a real cluster (issue 14): asynchronous errors reach the handler of
 * {@code onError} from the NIC's async-event ring (a CQ overflow, a connection lost to a peer's
 * disconnect or kill -9), the default handler prints one line; a NIC whose firmware stops ends every
 * wait with {@link ViplNicDeadException} and tells the handler CATASTROPHIC; and {@code query()}, the
 * name service and auto-discovery answer for the cluster's nodes.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplAsyncErrorsTest extends ViplClusterTest
{
    @Test
    void aCqOverflowRaisesACatastrophicErrorOfThatCq() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final BlockingQueue<AsyncError> errors = new LinkedBlockingQueue<>();
            serverNic.onError(errors::add);
            final CompletionQueue cq = serverNic.createCq(1);
            final ViplCqTest.Pair pair =
                ViplCqTest.Pair.connect(serverNic, clientNic, Reliability.RELIABLE_DELIVERY, cq, "overflow");
            pair.postReceive(0, 16);
            pair.postReceive(1, 16);
            pair.send(0, 4, 1);
            pair.send(1, 4, 2);
            // Both receives complete on the VI's queue; the second found the CQ full.
            assertEquals(0, pair.server.recvWait(60_000).offset());
            assertEquals(ViplDescriptor.ALIGNMENT, pair.server.recvWait(60_000).offset());
            final AsyncError error = errors.poll(60, TimeUnit.SECONDS);
            assertEquals(AsyncError.Resource.CQ, error.resource(), error.describe());
            assertEquals(AsyncError.Code.CATASTROPHIC, error.code());
            assertSame(cq, error.cq());
            assertSame(pair.server, error.vi());
            assertSame(serverNic, error.nic());
            assertFalse(error.eventsLost());
            assertTrue(cq.isOverflowed());
            assertSame(pair.server, cq.done().vi(), "the entry that fitted is there");
            assertNull(errors.poll(200, TimeUnit.MILLISECONDS), "one event for one lost entry");
            pair.close();
        }
    }

    /**
     * The handler held on its first event while the NIC raises 70 more (each a CQ overflow): the ring
     * of 64 fills, the NIC drops the rest, and once the handler returns it gets the 64 and then one
     * report that events were lost.
     */
    @Test
    void aFullEventRingIsReportedAsEventsLost() throws Exception
    {
        final int messages = 72;
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final BlockingQueue<AsyncError> errors = new LinkedBlockingQueue<>();
            final CountDownLatch release = new CountDownLatch(1);
            serverNic.onError(error ->
            {
                errors.add(error);
                try
                {
                    release.await();
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            });
            final CompletionQueue cq = serverNic.createCq(1);
            final ViplCqTest.Pair pair = ViplCqTest.Pair.connect(serverNic, clientNic, Reliability.UNRELIABLE, cq, "ring");
            final long before = TestClusters.counters(dir, pair.serverNode).get(NicCounters.COMMANDS);
            final long eventsBefore = TestClusters.counters(dir, pair.serverNode).get(NicCounters.VIA_ASYNC_EVENTS);
            for (int m = 0; m < messages; m++)
            {
                pair.postReceiveUnwaited(m, 16);
            }
            TestClusters.await("the receives taken by the NIC", () ->
                TestClusters.counters(dir, pair.serverNode).get(NicCounters.COMMANDS) - before >= messages);
            for (int m = 0; m < messages; m++)
            {
                pair.send(m % 64, 4, m);
            }
            for (int m = 0; m < messages; m++)
            {
                assertEquals(m * ViplDescriptor.ALIGNMENT, pair.server.recvWait(60_000).offset());
            }
            // messages - 1 overflows: the first in the handler, 64 in the ring, the other 6 dropped. A
            // receive's status is written before its CQ entry, so the last overflows may come after
            // recvWait: the handler is released only once the NIC has raised them all.
            TestClusters.await("the first event in the handler", () -> 1 == errors.size());
            TestClusters.await("every overflow raised", () ->
                TestClusters.counters(dir, pair.serverNode).get(NicCounters.VIA_ASYNC_EVENTS) - eventsBefore >= messages - 1);
            release.countDown();
            final List<AsyncError> all = new ArrayList<>();
            TestClusters.await("the ring drained", () ->
            {
                errors.drainTo(all);
                return all.stream().anyMatch(AsyncError::eventsLost);
            });
            assertEquals(1 + ViaProcessStructuresLayout.ASYNC_EVENTS + 1, all.size(), "the first, the ring, the report");
            for (int i = 0; i < all.size() - 1; i++)
            {
                assertEquals(AsyncError.Code.CATASTROPHIC, all.get(i).code());
                assertEquals(AsyncError.Resource.CQ, all.get(i).resource());
                assertFalse(all.get(i).eventsLost());
            }
            final AsyncError lost = all.get(all.size() - 1);
            assertTrue(lost.eventsLost());
            assertEquals(AsyncError.Resource.NIC, lost.resource());
            assertTrue(lost.describe().contains("overflowed"), lost.describe());
            pair.close();
        }
    }

    @Test
    void aPeersDisconnectGivesConnLostAndTheDefaultHandlerPrintsOneLine() throws Exception
    {
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final PrintStream stderr = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final BlockingQueue<AsyncError> errors = new LinkedBlockingQueue<>();
            clientNic.onError(errors::add);
            ViplCqTest.Pair pair =
                ViplCqTest.Pair.connect(serverNic, clientNic, Reliability.RELIABLE_DELIVERY, null, "lost-1");
            pair.server.disconnect();
            final AsyncError lost = errors.poll(60, TimeUnit.SECONDS);
            assertEquals(AsyncError.Code.CONN_LOST, lost.code(), lost.describe());
            assertEquals(AsyncError.Resource.VI, lost.resource());
            assertSame(pair.client, lost.vi());
            assertEquals(ViState.ERROR, pair.client.query().state());
            pair.client.disconnect();

            // The server's NIC kept the default handler: one line on standard error.
            pair = ViplCqTest.Pair.connect(serverNic, clientNic, Reliability.RELIABLE_DELIVERY, null, "lost-2");
            pair.client.disconnect();
            TestClusters.await("the default handler's line", () -> captured.toString(StandardCharsets.UTF_8)
                .contains("CONN_LOST"));
            final String line = captured.toString(StandardCharsets.UTF_8).lines()
                .filter(l -> l.contains("CONN_LOST")).findFirst().orElseThrow();
            assertTrue(line.contains("NIC 1-0") && line.contains("VI " + pair.server.index()), line);
            pair.server.disconnect();
        }
        finally
        {
            System.setErr(stderr);
        }
    }

    @Test
    void aPeerKilledWithSigkillGivesConnLostToTheHandler() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()))
        {
            final BlockingQueue<AsyncError> errors = new LinkedBlockingQueue<>();
            serverNic.onError(errors::add);
            final Vi server = serverNic.createVi(
                new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, serverNic.createPtag(), false, false), null, null);
            final Process worker = ViplConnectWorker.start(dir, "sigkill");
            try
            {
                serverNic.connectWait("sigkill".getBytes(StandardCharsets.US_ASCII), 120_000).accept(server);
                ViplConnectWorker.connected(worker);
                assertNull(errors.poll(), "no error while connected");

                assertTrue(worker.toHandle().destroyForcibly(), "kill -9");
                final AsyncError lost = errors.poll(120, TimeUnit.SECONDS);
                assertEquals(AsyncError.Code.CONN_LOST, lost.code(), null == lost ? "none" : lost.describe());
                assertSame(server, lost.vi());
                assertEquals(ViState.ERROR, server.query().state());
                server.disconnect();
                server.close();
            }
            finally
            {
                worker.destroyForcibly();
                worker.waitFor();
            }
        }
    }

    /**
     * The firmware of node 0-0 (a process of its own) killed while threads wait there: a send, a
     * receive, a CQ and a connection wait each end with {@link ViplNicDeadException}, not at their
     * timeout, and the handler hears CATASTROPHIC of resource NIC; a post that finds the Command Queue
     * full ends so too; the NIC still closes.
     */
    @Test
    void aStoppedNicEndsEveryWaitWithNicDeadAndTellsTheHandler() throws Exception
    {
        final ClusterDirectory own = TestClusters.up(TestClusters.uniqueName("vd"), 2, 1, "processes");
        // A thread per wait, whatever the machine's core count (the common pool may have fewer).
        final ExecutorService threads = Executors.newCachedThreadPool();
        try
        {
            final ViplNic nic = Vipl.openNic("0-0", own.name());
            final BlockingQueue<AsyncError> errors = new LinkedBlockingQueue<>();
            nic.onError(errors::add);
            final ProtectionTag ptag = nic.createPtag();
            final ViplMemory memory = nic.allocate(64 * 1024);
            final MemoryRegion region = nic.registerMem(memory, 0, memory.length(), new MemoryAttributes(ptag, false, false));
            final CompletionQueue cq = nic.createCq(4);
            // Idle VIs: what they post waits for a connection that never comes.
            final Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, ptag, false, false), cq, cq);
            final Descriptor send = memory.descriptor(0);
            send.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0).length(0);
            vi.postSend(send, region);
            final Descriptor recv = memory.descriptor(64);
            recv.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0);
            vi.postRecv(recv, region);

            final List<CompletableFuture<?>> waits = new ArrayList<>();
            waits.add(CompletableFuture.supplyAsync(() -> vi.sendWait(600_000), threads));
            waits.add(CompletableFuture.supplyAsync(() -> vi.recvWait(600_000), threads));
            waits.add(CompletableFuture.supplyAsync(() -> cq.await(600_000), threads));
            waits.add(CompletableFuture.supplyAsync(() -> nic.connectWait("nobody".getBytes(StandardCharsets.US_ASCII),
                600_000), threads));
            killFirmwareOf00AndExpectNicDead(own, waits);
            final AsyncError catastrophic = errors.poll(60, TimeUnit.SECONDS);
            assertEquals(AsyncError.Resource.NIC, catastrophic.resource());
            assertEquals(AsyncError.Code.CATASTROPHIC, catastrophic.code());
            // A loop of Done polls ends the same way, instead of answering NOT_DONE for ever.
            assertThrows(ViplNicDeadException.class, () -> pollUntilDead(vi::sendDone));
            assertThrows(ViplNicDeadException.class, () -> pollUntilDead(vi::recvDone));
            assertThrows(ViplNicDeadException.class, () -> pollUntilDead(cq::done));

            // Posts fill the Command Queue, which the dead NIC never empties: the post that finds it
            // full ends with NIC-dead too, not after the full queue's 30 s.
            final int slots = (memory.length() - 128) / ViplDescriptor.ALIGNMENT;
            final ViplNicDeadException full = assertThrows(ViplNicDeadException.class, () ->
            {
                for (int i = 0; i < slots; i++)
                {
                    final Descriptor more = memory.descriptor(128 + i * ViplDescriptor.ALIGNMENT);
                    more.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0);
                    vi.postRecv(more, region);
                }
            });
            assertEquals(new NicCoordinates(0, 0), full.node());
            nic.close();
            assertTrue(nic.isClosed());
        }
        finally
        {
            threads.shutdownNow();
            TestClusters.down(own);
        }
    }

    /**
     * The firmware of node 0-0 killed while a {@code connectRequest} (to a server that never waits) and
     * a {@code connectPeerWait} (for a peer that never asks) wait there with ten-minute timeouts: each
     * ends with {@link ViplNicDeadException}, not at its timeout (which would fail the test by the time
     * it takes and by its type), the daemon keeps neither request and both VIs are Idle again, so they
     * can be destroyed. A third request, whose process only polls {@code connectPeerDone}, ends the same
     * way: the poll throws {@link ViplNicDeadException} instead of saying NOT_DONE until the deadline.
     */
    @Test
    void aStoppedNicEndsConnectionRequestsWithNicDeadAndLeavesTheirVisIdle() throws Exception
    {
        final ClusterDirectory own = TestClusters.up(TestClusters.uniqueName("vc"), 2, 1, "processes");
        final ExecutorService threads = Executors.newCachedThreadPool();
        try
        {
            // Two NICs opened on 0-0: a connection wait holds its ViplNic's driver connection.
            final ViplNic client = Vipl.openNic("0-0", own.name());
            final ViplNic peer = Vipl.openNic("0-0", own.name());
            final Vi clientVi = client.createVi(
                new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, client.createPtag(), false, false), null, null);
            final Vi peerVi = peer.createVi(
                new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, peer.createPtag(), false, false), null, null);
            final ViplAddress server = new ViplAddress(new NicCoordinates(1, 0), "nobody".getBytes(StandardCharsets.US_ASCII));
            final ViplAddress right = new ViplAddress(new NicCoordinates(1, 0), "right".getBytes(StandardCharsets.US_ASCII));
            final byte[] left = "left".getBytes(StandardCharsets.US_ASCII);

            // A third request nobody waits for: its process polls with Done.
            final Vi polledVi = peer.createVi(
                new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, peer.createPtag(), false, false), null, null);
            final byte[] polled = "polled".getBytes(StandardCharsets.US_ASCII);

            peer.connectPeerRequest(peerVi, left, right, 600_000);
            peer.connectPeerRequest(polledVi, polled, new ViplAddress(new NicCoordinates(1, 0), polled), 600_000);
            assertEquals(ViplResult.NOT_DONE, peerVi.connectPeerDone());
            assertEquals(ViplResult.NOT_DONE, polledVi.connectPeerDone());
            final List<CompletableFuture<?>> waits = new ArrayList<>();
            waits.add(CompletableFuture.supplyAsync(() -> client.connectRequest(clientVi, server, 600_000), threads));
            waits.add(CompletableFuture.supplyAsync(peerVi::connectPeerWait, threads));
            waits.add(CompletableFuture.supplyAsync(() -> pollUntilEnded(polledVi), threads));
            killFirmwareOf00AndExpectNicDead(own, waits);
            assertEquals(ViState.IDLE, polledVi.query().state());
            polledVi.close();
            // Neither VI stays Connect Pending in the daemon's tables: Idle, and so destroyable.
            assertEquals(ViState.IDLE, clientVi.query().state());
            assertEquals(ViState.IDLE, peerVi.query().state());
            assertEquals(ViplResult.INVALID_STATE, peerVi.connectPeerDone(), "the peer request was withdrawn");

            // Nor does the daemon keep the requests: on the live NIC no server is given the client's, and
            // the mirror of the peer request finds nothing to match (both end at their own short timeout).
            try (ViplNic other = Vipl.openNic("1-0", own.name()))
            {
                assertEquals(ViplResult.TIMEOUT, assertThrows(ViplException.class,
                    () -> other.connectWait(server.discriminator(), 1_000)).result());
                final Vi mirror = other.createVi(
                    new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, other.createPtag(), false, false), null, null);
                other.connectPeerRequest(mirror, right.discriminator(), new ViplAddress(new NicCoordinates(0, 0), left),
                    1_000);
                assertEquals(ViplResult.TIMEOUT, assertThrows(ViplException.class, mirror::connectPeerWait).result());
                assertEquals(ViState.IDLE, mirror.query().state());
            }
            clientVi.close();
            peerVi.close();
            client.close();
            peer.close();
        }
        finally
        {
            threads.shutdownNow();
            TestClusters.down(own);
        }
    }

    /**
     * A resize the driver never answers (its daemon killed with SIGKILL) may have been taken by the NIC
     * all the same, so the CQ cannot be trusted: the resize fails INVALID_STATE (or NIC-dead, should the
     * firmware have stopped first) and every later call on the CQ fails, instead of the CQ reading a ring
     * the NIC may no longer complete into.
     */
    @Test
    void aResizeTheDriverNeverAnswersLeavesTheCqUnusable() throws Exception
    {
        final ClusterDirectory own = TestClusters.up(TestClusters.uniqueName("vr"), 2, 1, "shared");
        try
        {
            final ViplNic nic = Vipl.openNic("0-0", own.name());
            final CompletionQueue cq = nic.createCq(4);
            final ProcessHandle daemon =
                ProcessHandle.of(ClusterProperties.read(own.propertiesFile()).orElseThrow().daemonPid()).orElseThrow();
            assertTrue(daemon.destroyForcibly(), "kill -9 the daemon");
            TestClusters.await("the daemon dead", () -> TestClusters.isGone(daemon));

            final ViplException resize = assertThrows(ViplException.class, () -> cq.resize(8));
            assertTrue(ViplResult.INVALID_STATE == resize.result() || resize instanceof ViplNicDeadException,
                resize.toString());
            final ViplException after = assertThrows(ViplException.class, cq::done);
            assertEquals(ViplResult.INVALID_STATE, after.result());
            assertTrue(after.getMessage().contains("its resize did not finish"), after.getMessage());
            nic.close();
        }
        finally
        {
            TestClusters.down(own);
        }
    }

    @Test
    void queryReportsEveryNicAttributeOfVipl() throws Exception
    {
        try (ViplNic nic = Vipl.openNic("1-0", dir.name()))
        {
            final NicAttributes a = nic.query();
            assertEquals("1-0", a.name());
            assertEquals(ViplNic.PROVIDER_VERSION, a.providerVersion());
            assertTrue(a.hardwareVersion() > 0);
            assertArrayEquals(new byte[] {1, 0}, a.nicAddress());
            assertTrue(a.threadSafe());
            assertTrue(a.maxDiscriminatorLength() > 0);
            assertTrue(a.maxRegisterBytes() >= a.maxRegisterBlockBytes() && a.maxRegisterBlockBytes() > 0);
            assertTrue(a.maxRegisterRegions() > 0);
            assertTrue(a.maxVi() > 0 && a.maxCq() > 0 && a.maxPtags() > 0);
            assertEquals(1024, a.maxDescriptorsPerQueue());
            assertEquals(ViplDescriptor.MAX_SEGMENTS, a.maxSegmentsPerDesc());
            assertTrue(a.maxCqEntries() > 1);
            assertEquals(nic.parameters().maxMessageBytes(), a.maxTransferSize());
            assertEquals(nic.parameters().pageSize(), a.nativeMtu());
            assertEquals(EnumSet.allOf(Reliability.class), a.reliabilityLevels());
            assertEquals(EnumSet.of(Reliability.RELIABLE_DELIVERY, Reliability.RELIABLE_RECEPTION), a.rdmaReadSupport());
            // The limits hold: a CQ of MaxCQEntries + 1 is refused.
            assertEquals(ViplResult.INVALID_PARAMETER,
                assertThrows(ViplException.class, () -> nic.createCq(a.maxCqEntries() + 1)).result());
        }
    }

    @Test
    void theNameServiceKnowsTheClustersNodesByBothNames() throws Exception
    {
        try (ViplNic nic = Vipl.openNic("0-0", dir.name()))
        {
            final ViplAddress one = nic.hostByName("node-1-0");
            assertEquals(new NicCoordinates(1, 0), one.node());
            assertEquals(0, one.discriminator().length);
            assertEquals(one, nic.hostByName("1-0"));
            assertEquals("node-0-0", nic.hostByAddress(nic.hostByName("0-0")));
            assertEquals("node-1-0", nic.hostByAddress(new ViplAddress(new NicCoordinates(1, 0), new byte[] {7})));
            for (final String unknown : new String[] {"node-2-0", "0-1", "frodo", "node-", ""})
            {
                assertEquals(ViplResult.ERROR_NAMESERVICE,
                    assertThrows(ViplException.class, () -> nic.hostByName(unknown)).result(), unknown);
            }
            assertEquals(ViplResult.ERROR_NAMESERVICE, assertThrows(ViplException.class,
                () -> nic.hostByAddress(new ViplAddress(new NicCoordinates(0, 3), new byte[0]))).result());
        }
    }

    /**
     * {@code VipQuerySystemManagementInfo}'s auto-discovery: every NIC of the torus, this one included,
     * in the nodes' order, as the name service gives and names them; and an address it lists is one a
     * connection reaches.
     */
    @Test
    void autoDiscoveryListsEveryNicOfTheTorusAsTheNameServiceKnowsThem() throws Exception
    {
        try (ViplNic nic = Vipl.openNic("1-0", dir.name()); ViplNic other = Vipl.openNic("0-0", dir.name()))
        {
            final List<ViplAddress> hosts = nic.querySystemManagementInfo();
            assertEquals(List.of(nic.hostByName("node-0-0"), nic.hostByName("node-1-0")), hosts);
            assertEquals(List.of("node-0-0", "node-1-0"), hosts.stream().map(nic::hostByAddress).toList());
            assertEquals(hosts, other.querySystemManagementInfo(), "the same list from every NIC");
            assertThrows(UnsupportedOperationException.class, () -> hosts.remove(0));

            // The other node's address, found so, with a discriminator, is where its server listens.
            final ViplAddress found = hosts.stream().filter(h -> !h.node().equals(nic.node())).findFirst().orElseThrow();
            final byte[] discriminator = "discovered".getBytes(StandardCharsets.US_ASCII);
            final Vi serverVi = other.createVi(
                new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, other.createPtag(), false, false), null, null);
            final Vi clientVi = nic.createVi(
                new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, nic.createPtag(), false, false), null, null);
            final CompletableFuture<Void> accepted =
                CompletableFuture.runAsync(() -> other.connectWait(discriminator, 60_000).accept(serverVi));
            nic.connectRequest(clientVi, new ViplAddress(found.node(), discriminator), 60_000);
            accepted.get(60, TimeUnit.SECONDS);
            assertEquals(ViState.CONNECTED, clientVi.query().state());
            clientVi.disconnect();
            serverVi.disconnect();
            clientVi.close();
            serverVi.close();
        }
    }

    /** Polls {@code VipConnectPeerDone} while it says NOT_DONE, as a program doing other work would. */
    private static ViplResult pollUntilEnded(final Vi vi)
    {
        ViplResult result;
        while (ViplResult.NOT_DONE == (result = vi.connectPeerDone()))
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        return result;
    }

    /** Polls {@code done} (which must answer NOT_DONE) twice as often as the library looks at the NIC. */
    private static void pollUntilDead(final Supplier<?> done)
    {
        for (int poll = 0; poll < 2 * EmptyPolls.PER_LOOK; poll++)
        {
            assertNull(done.get(), "nothing completes on a dead NIC");
        }
    }

    /**
     * Waits still running, then 0-0's firmware JVM killed: each of {@code waits} ends with a
     * {@link ViplNicDeadException} naming 0-0 (a TIMEOUT would fail the 120 s get by its type).
     */
    private static void killFirmwareOf00AndExpectNicDead(final ClusterDirectory own, final List<CompletableFuture<?>> waits)
        throws Exception
    {
        Thread.sleep(300);
        for (final CompletableFuture<?> wait : waits)
        {
            assertFalse(wait.isDone(), "waiting before the NIC stops");
        }

        TestClusters.killFirmware(own, "0-0");

        for (final CompletableFuture<?> wait : waits)
        {
            final ExecutionException ended = assertThrows(ExecutionException.class, () -> wait.get(120, TimeUnit.SECONDS));
            final ViplNicDeadException dead = assertInstanceOf(ViplNicDeadException.class, ended.getCause());
            assertEquals(ViplResult.ERROR_RESOURCE, dead.result());
            assertEquals(new NicCoordinates(0, 0), dead.node());
            assertTrue(dead.getMessage().contains("node 0-0"), dead.getMessage());
        }
    }
}
