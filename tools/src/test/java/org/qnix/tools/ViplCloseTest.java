package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.ViplResult;
import org.qnix.host.DoorbellWait;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
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

/**
 * Ending what other threads use, against a real cluster: a CQ destroyed under threads waiting on it ends
 * their waits with {@code INVALID_STATE} before its ring goes (and a refused destroy leaves the waits
 * alone); a destroyed VI refuses every call with {@code INVALID_PARAMETER}, ends a wait on it, and
 * never reaches the VI the driver makes next in its table entry; a NIC closed while other threads
 * wait for a connection in the driver ends those waits at once ({@code INVALID_STATE}) instead of
 * waiting behind them for their timeouts, and the driver ends its side of a wait too, so that a client's
 * request after the close reaches the next server on the discriminator, not the closed one. (Waits and polls on a closed NIC, and closes racing them, run
 * in a child JVM: {@link ViplCloseSafetyTest}.)
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplCloseTest extends ViplClusterTest
{
    /** A wait nothing ends but what the test does: an hour. */
    private static final long LONG_WAIT_MS = TimeUnit.HOURS.toMillis(1);
    /**
     * The connection waits' timeout: long enough that a test passes only if the daemon ends a wait when the
     * library's close asks it to, not at this timeout, however slow the machine.
     */
    private static final long CONNECTION_WAIT_MS = 600_000;
    /** Hang guard for a call another thread ended, not a timing assertion. */
    private static final long ENDED_WITHIN_S = 120;

    @Test
    void destroyingACqEndsTheWaitsOnItBeforeItsRingGoes() throws Exception
    {
        try (ViplNic nic = Vipl.openNic("0-0", dir.name()))
        {
            for (int round = 0; round < 5; round++)
            {
                final CompletionQueue cq = nic.createCq(16);
                final List<Future<CompletionQueue.Completion>> waits = new ArrayList<>();
                for (final DoorbellWait wait : List.of(DoorbellWait.SLEEP, DoorbellWait.BUSY, DoorbellWait.BACKOFF,
                    DoorbellWait.YIELD))
                {
                    waits.add(doorbellWait("a " + wait + " wait on the CQ", () -> cq.await(LONG_WAIT_MS, wait)));
                }
                cq.close();
                for (final Future<CompletionQueue.Completion> wait : waits)
                {
                    assertEndedWith(ViplResult.INVALID_STATE, wait, "a wait on the destroyed CQ, round " + round);
                }
                assertEquals(ViplResult.INVALID_STATE, assertThrows(ViplException.class, cq::done).result());
                assertEquals(ViplResult.INVALID_STATE,
                    assertThrows(ViplException.class, () -> cq.await(1_000)).result());
                cq.close();
            }
            assertTrue(ClusterStatus.read(dir).vipl().cqs().isEmpty(), "the CQs left the NIC's table");
        }
    }

    @Test
    void aCqDestroyRefusedForAnAttachedViLeavesItsWaitsWaiting() throws Exception
    {
        try (ViplNic nic = Vipl.openNic("0-0", dir.name()))
        {
            final ProtectionTag ptag = nic.createPtag();
            final ViplMemory memory = nic.allocate(4096);
            final MemoryRegion region = nic.registerMem(memory, 0, 4096, new MemoryAttributes(ptag, false, false));
            final CompletionQueue cq = nic.createCq(16);
            final Vi vi = nic.createVi(new ViAttributes(Reliability.UNRELIABLE, 1024, ptag, false, false), null, cq);
            final CompletableFuture<CompletionQueue.Completion> wait =
                doorbellWait("a wait on the CQ", () -> cq.await(LONG_WAIT_MS));
            assertEquals(ViplResult.ERROR_RESOURCE, assertThrows(ViplException.class, cq::close).result(),
                "a VI's receive queue reports to it");

            // A receive the NIC refuses completes at once, also on an Idle VI: its entry ends the wait.
            final Descriptor bad = memory.descriptor(0);
            bad.fields().reset().control(ViplDescriptor.OP_RDMA_WRITE).segmentCount(0);
            vi.postRecv(bad, region);
            final CompletionQueue.Completion entry = wait.get(ENDED_WITHIN_S, TimeUnit.SECONDS);
            assertSame(vi, entry.vi());
            assertTrue(!entry.sendQueue());
            assertSame(bad, vi.recvWait(60_000));
            vi.close();
            cq.close();
            region.close();
        }
    }

    @Test
    void aDestroyedViRefusesEveryCallAndNeverReachesTheNextViOfItsEntry() throws Exception
    {
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, 64 * 1024); ViplEnd b = new ViplEnd(dir, "1-0", 1, 64 * 1024))
        {
            final Vi old = a.vi(Reliability.UNRELIABLE, 1024, false, false);
            final Descriptor waitedFor = a.receive(0, 0, 1024);
            old.postRecv(waitedFor, a.descriptorRegion);
            final CompletableFuture<Descriptor> wait =
                doorbellWait("a wait on the VI", () -> old.recvWait(LONG_WAIT_MS));
            old.close();
            assertEndedWith(ViplResult.INVALID_PARAMETER, wait, "a wait on the destroyed VI");

            // The driver gives the entry to the next VI: connected to b, with a receive posted.
            final Vi next = a.vi(Reliability.UNRELIABLE, 1024, false, false);
            assertEquals(old.index(), next.index(), "the precondition: the new VI has the old one's entry");
            final Vi peer = b.vi(Reliability.UNRELIABLE, 1024, false, false);
            ViplEnd.connect(a, next, b, peer, "destroyed-vi");
            final Descriptor nextReceive = a.receive(1, 2048, 1024);
            a.postRecvTaken(next, nextReceive);
            final long commands = a.commandsTaken();

            final Descriptor send = a.send(2, 4096, 16, 7);
            final Descriptor receive = a.receive(3, 8192, 1024);
            final Descriptor badReceive = a.descriptor(4);
            badReceive.fields().reset().control(ViplDescriptor.OP_RDMA_WRITE).segmentCount(0);
            final List<Executable> calls = List.of(
                () -> old.postSend(send, a.descriptorRegion),
                () -> old.postRecv(receive, a.descriptorRegion),
                () -> old.postRecv(badReceive, a.descriptorRegion),
                old::sendDone,
                old::recvDone,
                () -> old.sendWait(1_000),
                () -> old.recvWait(1_000, DoorbellWait.BUSY),
                () -> old.sendNotify((vi, d) -> fail("a notification of a destroyed VI")),
                () -> old.recvNotify((vi, d) -> fail("a notification of a destroyed VI")),
                old::query,
                old::connectPeerDone,
                old::connectPeerWait,
                old::disconnect,
                () -> a.nic.connectRequest(old, new ViplAddress(b.node, bytes("nobody")), 1_000),
                () -> a.nic.connectPeerRequest(old, bytes("l"), new ViplAddress(b.node, bytes("r")), 1_000));
            for (int i = 0; i < calls.size(); i++)
            {
                assertEquals(ViplResult.INVALID_PARAMETER, assertThrows(ViplException.class, calls.get(i)).result(),
                    "call " + i + " on the destroyed VI");
            }
            old.close();

            // Nothing of it reached the NIC or the VI now in its entry: still connected, its receive still posted.
            assertEquals(commands, a.commandsTaken(), "no post of the destroyed VI reached the NIC");
            assertEquals(ViState.CONNECTED, next.query().state());
            assertEquals(0, waitedFor.status());
            final Descriptor peerSend = b.send(0, 0, 16, 99);
            peer.postSend(peerSend, b.descriptorRegion);
            assertSame(peerSend, peer.sendWait(60_000));
            assertSame(nextReceive, next.recvWait(60_000), "the next VI's own receive takes the message");
            assertEquals(16, nextReceive.length());
            a.assertMessage(2048, 16, 99);
            next.disconnect();
            peer.disconnect();
        }
    }

    @Test
    void closingTheNicEndsConnectionWaitsOfOtherThreadsAtOnce() throws Exception
    {
        final ViplNic server = Vipl.openNic("0-0", dir.name());
        final ViplNic client = Vipl.openNic("0-0", dir.name());
        final ViplNic peer = Vipl.openNic("1-0", dir.name());
        try
        {
            final Vi clientVi = vi(client);
            final Vi peerVi = vi(peer);
            final CompletableFuture<Object> serverWait =
                driverWait("the server", () -> server.connectWait(bytes("close-wait"), CONNECTION_WAIT_MS));
            // To a server nobody runs: the request waits until its timeout.
            final CompletableFuture<Object> clientWait = CompletableFuture.supplyAsync(() ->
                client.connectRequest(clientVi, new ViplAddress(NicCoordinates.parse("1-0"), bytes("nobody")),
                    CONNECTION_WAIT_MS), daemonThread());
            peer.connectPeerRequest(peerVi, bytes("left"), new ViplAddress(NicCoordinates.parse("0-0"), bytes("right")),
                CONNECTION_WAIT_MS);
            final CompletableFuture<Object> peerWait = driverWait("the peer", peerVi::connectPeerWait);
            awaitConnectPending(client, clientVi);

            server.close();
            assertEndedWith(ViplResult.INVALID_STATE, serverWait, "connectWait");
            client.close();
            assertEndedWith(ViplResult.INVALID_STATE, clientWait, "connectRequest");
            peer.close();
            assertEndedWith(ViplResult.INVALID_STATE, peerWait, "connectPeerWait");
            assertTrue(server.isClosed() && client.isClosed() && peer.isClosed());
            assertEquals(ViplResult.INVALID_STATE,
                assertThrows(ViplException.class, () -> server.connectWait(bytes("again"), 1_000)).result());
        }
        finally
        {
            server.close();
            client.close();
            peer.close();
        }
    }

    @Test
    void aRequestAfterTheServerClosedInItsWaitReachesTheNextServerNotTheClosedOne() throws Exception
    {
        final ViplNic closed = Vipl.openNic("0-0", dir.name());
        final ViplNic client = Vipl.openNic("1-0", dir.name());
        ViplNic server = null;
        try
        {
            final CompletableFuture<Object> closedWait =
                driverWait("the first server", () -> closed.connectWait(bytes("restart"), CONNECTION_WAIT_MS));
            closed.close();
            assertEndedWith(ViplResult.INVALID_STATE, closedWait, "connectWait");

            // Asked at once after the close, whose server's wait ended taking nothing: the request must wait
            // for the next server on the discriminator, not end REJECT with the closed one.
            final Vi clientVi = vi(client);
            final CompletableFuture<Object> connect = CompletableFuture.supplyAsync(() ->
                client.connectRequest(clientVi, new ViplAddress(NicCoordinates.parse("0-0"), bytes("restart")),
                    CONNECTION_WAIT_MS), daemonThread());
            awaitConnectPending(client, clientVi);
            server = Vipl.openNic("0-0", dir.name());
            final Vi serverVi = vi(server);
            server.connectWait(bytes("restart"), CONNECTION_WAIT_MS).accept(serverVi);
            connect.get(ENDED_WITHIN_S, TimeUnit.SECONDS);
            assertEquals(ViState.CONNECTED, clientVi.query().state());
            assertEquals(ViState.CONNECTED, serverVi.query().state());
        }
        finally
        {
            closed.close();
            client.close();
            if (null != server)
            {
                server.close();
            }
        }
    }

    /** Waits until {@code vi} of {@code nic} is Connect Pending in the NIC's VI table: its request is with the daemon. */
    private void awaitConnectPending(final ViplNic nic, final Vi vi) throws InterruptedException
    {
        TestClusters.await("the client's VI Connect Pending", () -> ClusterStatus.read(dir).vipl().vis().stream()
            .anyMatch(v -> v.index() == vi.index() && v.node().equals(nic.node()) &&
            ViTableEntry.STATE_PENDING == v.state()));
    }

    private static Vi vi(final ViplNic nic)
    {
        return nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, 1024, nic.createPtag(), false, false),
            null, null);
    }

    private static byte[] bytes(final String text)
    {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /** @return {@code call} on a thread of its own, once that thread waits in the driver (its exchange). */
    private static CompletableFuture<Object> driverWait(final String who, final Supplier<Object> call)
        throws InterruptedException
    {
        return startedInside(who + " in its driver wait", call,
            f -> f.getClassName().equals("org.qnix.host.DriverProxy") && f.getMethodName().startsWith("via"));
    }

    /** @return {@code call} on a thread of its own, once that thread waits on a doorbell or counter word. */
    private static <T> CompletableFuture<T> doorbellWait(final String who, final Supplier<T> call)
        throws InterruptedException
    {
        return startedInside(who + " in its doorbell wait", call,
            f -> f.getClassName().equals("org.qnix.host.DoorbellWaiter") && f.getMethodName().equals("await"));
    }

    /**
     * @return {@code call} on a thread of its own, once a frame of that thread's stack matches {@code frame}:
     * it is inside the wait the test then ends (a futex sleep, a spin or a blocking read alike).
     */
    private static <T> CompletableFuture<T> startedInside(final String what, final Supplier<T> call,
        final Predicate<StackTraceElement> frame) throws InterruptedException
    {
        final AtomicReference<Thread> thread = new AtomicReference<>();
        final CompletableFuture<T> wait = CompletableFuture.supplyAsync(() ->
        {
            thread.set(Thread.currentThread());
            return call.get();
        }, daemonThread());
        TestClusters.await(what, () ->
        {
            assertTrue(!wait.isDone(), () -> "a wait ended before anything ended it: " + outcome(wait));
            final Thread t = thread.get();
            return null != t && Arrays.stream(t.getStackTrace()).anyMatch(frame);
        });
        return wait;
    }

    private static String outcome(final Future<?> wait)
    {
        try
        {
            return String.valueOf(wait.get());
        }
        catch (final Exception ex)
        {
            return String.valueOf(ex.getCause());
        }
    }

    /** Asserts {@code call} ended, within the hang guard, with a {@link ViplException} of {@code result}. */
    private static void assertEndedWith(final ViplResult result, final Future<?> call, final String what)
        throws InterruptedException
    {
        try
        {
            final Object value = call.get(ENDED_WITHIN_S, TimeUnit.SECONDS);
            fail(what + " returned " + value + " instead of ending with " + result);
        }
        catch (final ExecutionException ex)
        {
            final Throwable cause = ex.getCause();
            if (!(cause instanceof ViplException vipl) || result != vipl.result())
            {
                throw new AssertionError(what + " ended with " + cause + " instead of ViplException " + result, cause);
            }
        }
        catch (final TimeoutException ex)
        {
            fail(what + " did not end");
        }
    }

    /** Threads of their own for the waits: a common pool of two cores would run the blocking waits one by one. */
    private static Executor daemonThread()
    {
        return task ->
        {
            final Thread thread = new Thread(task, "vipl-close-test");
            thread.setDaemon(true);
            thread.start();
        };
    }
}
