package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.ViplResult;
import org.qnix.firmware.NicCounters;
import org.qnix.host.DoorbellWait;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.RemoteVi;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplAddress;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * Completion queues and work queues on a real cluster (issue 14): a CQ's entries are the VI's own two
 * values, the same objects every time (taking them allocates nothing); two threads waiting on one CQ
 * both get their entry (the waiters word counts sleepers); a work queue holds at most
 * MaxDescriptorsPerQueue descriptors not taken back and refuses the next with ERROR_RESOURCE; two
 * threads posting receives on one VI at once get them back in the order the NIC filled them.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplCqTest extends ViplClusterTest
{
    static final int MEMORY = 256 * 1024;
    /** Where the ends' data go; descriptors below it. */
    static final int DATA = 128 * 1024;

    /** A thread per task, whatever the machine's core count (the common pool may have fewer). */
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads()
    {
        threads.shutdownNow();
    }

    @Test
    void cqEntriesAreTheVisOwnTwoValuesAndTwoWaitersBothGetTheirs() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final CompletionQueue cq = serverNic.createCq(16);
            final Pair pair = Pair.connect(serverNic, clientNic, Reliability.RELIABLE_DELIVERY, cq, "cq-values");
            // Two threads asleep on the CQ before anything completes.
            final List<CompletableFuture<CompletionQueue.Completion>> waits = new ArrayList<>();
            final CountDownLatch started = new CountDownLatch(2);
            for (int i = 0; i < 2; i++)
            {
                waits.add(CompletableFuture.supplyAsync(() ->
                {
                    started.countDown();
                    return cq.await(120_000);
                }, threads));
            }
            started.await();
            for (int m = 0; m < 2; m++)
            {
                pair.postReceive(m, 16);
                pair.send(m, 4, m);
            }
            for (final CompletableFuture<CompletionQueue.Completion> wait : waits)
            {
                final CompletionQueue.Completion c = wait.get(120, TimeUnit.SECONDS);
                assertSame(pair.server, c.vi());
                assertTrue(!c.sendQueue());
            }
            assertSame(waits.get(0).get(), waits.get(1).get(), "one value per VI and queue, not one per entry");
            assertNotNull(pair.server.recvDone());

            // done() hands out the same object again for the next entry.
            pair.postReceive(2, 16);
            pair.send(2, 4, 2);
            final CompletionQueue.Completion again = cq.await(60_000);
            assertSame(waits.get(0).get(), again);
            assertNull(cq.done(), "nothing else completed");
            pair.close();
            pair.server.close();
            cq.close();
        }
    }

    @Test
    void pollAnswersATimeoutWithNullAndAnEntryOnceOneCompletes() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final CompletionQueue cq = serverNic.createCq(16);
            final Pair pair = Pair.connect(serverNic, clientNic, Reliability.RELIABLE_DELIVERY, cq, "cq-poll");
            assertNull(cq.poll(50, DoorbellWait.SLEEP), "nothing completed: null, not an exception");
            assertEquals(ViplResult.TIMEOUT,
                assertThrows(ViplException.class, () -> cq.await(50, DoorbellWait.SLEEP)).result(),
                "await still says TIMEOUT");
            pair.postReceive(0, 16);
            pair.send(0, 4, 0);
            final CompletionQueue.Completion c = cq.poll(60_000, DoorbellWait.SLEEP);
            assertNotNull(c);
            assertSame(pair.server, c.vi());
            pair.close();
            pair.server.close();
            cq.close();
            assertEquals(ViplResult.INVALID_STATE,
                assertThrows(ViplException.class, () -> cq.poll(50, DoorbellWait.SLEEP)).result(),
                "a destroyed CQ refuses, as await does");
        }
    }

    @Test
    void aWorkQueueHoldsMaxDescriptorsPerQueueAndRefusesTheNextWithErrorResource() throws Exception
    {
        try (ViplNic nic = Vipl.openNic("0-0", dir.name()))
        {
            final int depth = nic.query().maxDescriptorsPerQueue();
            final ProtectionTag ptag = nic.createPtag();
            final ViplMemory memory = nic.allocate((depth + 1) * ViplDescriptor.ALIGNMENT);
            final MemoryRegion region = nic.registerMem(memory, 0, memory.length(), new MemoryAttributes(ptag, false, false));
            final Vi vi = nic.createVi(new ViAttributes(Reliability.UNRELIABLE, 4096, ptag, false, false), null, null);
            final long initial = TestClusters.counters(dir, nic.node()).get(NicCounters.COMMANDS);
            for (int i = 0; i < depth; i++)
            {
                final Descriptor recv = memory.descriptor(i * ViplDescriptor.ALIGNMENT);
                recv.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0);
                vi.postRecv(recv, region);
            }
            final Descriptor extra = memory.descriptor(depth * ViplDescriptor.ALIGNMENT);
            extra.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0);
            TestClusters.await("the receives taken by the NIC", () ->
                TestClusters.counters(dir, nic.node()).get(NicCounters.COMMANDS) - initial >= depth);
            final long commandsBefore = TestClusters.counters(dir, nic.node()).get(NicCounters.COMMANDS);
            assertEquals(ViplResult.ERROR_RESOURCE,
                assertThrows(ViplException.class, () -> vi.postRecv(extra, region)).result());
            assertEquals(ViplResult.ERROR_RESOURCE,
                assertThrows(ViplException.class, () -> vi.postRecv(extra, region)).result(), "and again");
            assertEquals(0, extra.status(), "the refused descriptor was never posted");
            assertTrue(!vi.query().receiveQueueEmpty());
            assertEquals(commandsBefore, TestClusters.counters(dir, nic.node()).get(NicCounters.COMMANDS),
                "no command reached the NIC for the refused posts");
        }
    }

    /**
     * Two threads post receives on one VI at once: the library's queue and the Command Queue are in
     * the same order, so the k-th receive taken back is the one the NIC filled with the k-th message.
     */
    @Test
    void twoThreadsPostingOnOneQueueGetTheirDescriptorsBackInTheNicsOrder() throws Exception
    {
        final int perThread = 150;
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final Pair pair = Pair.connect(serverNic, clientNic, Reliability.RELIABLE_DELIVERY, null, "two-posters");
            final CountDownLatch go = new CountDownLatch(1);
            final List<CompletableFuture<Void>> posters = new ArrayList<>();
            for (int t = 0; t < 2; t++)
            {
                final int first = t * perThread;
                posters.add(CompletableFuture.runAsync(() ->
                {
                    try
                    {
                        go.await();
                    }
                    catch (final InterruptedException ex)
                    {
                        throw new IllegalStateException(ex);
                    }
                    for (int i = first; i < first + perThread; i++)
                    {
                        pair.postReceiveUnwaited(i, 16);
                    }
                }, threads));
            }
            final long before = TestClusters.counters(dir, pair.serverNode).get(NicCounters.COMMANDS);
            go.countDown();
            for (final CompletableFuture<Void> poster : posters)
            {
                poster.get(120, TimeUnit.SECONDS);
            }
            TestClusters.await("the receives taken by the NIC", () ->
                TestClusters.counters(dir, pair.serverNode).get(NicCounters.COMMANDS) - before >= 2 * perThread);
            for (int m = 0; m < 2 * perThread; m++)
            {
                pair.send(m % 64, 4, m);
            }
            for (int m = 0; m < 2 * perThread; m++)
            {
                final Descriptor got = pair.server.recvWait(60_000);
                assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, got.status(), "message " + m);
                final int slot = got.offset() / ViplDescriptor.ALIGNMENT;
                assertEquals(m, pair.serverMemory.buffer().getInt(DATA + slot * 16), "the message in receive " + m);
            }
            assertNull(pair.server.recvDone());
            pair.close();
        }
    }

    /**
     * {@code VipResizeCQ} on a CQ with completions queued: they come out after it in their order, from a
     * ring that now holds more (or fewer) than before; a size below what is queued is refused and the
     * CQ goes on; a thread asleep on the CQ during a resize gets the next completion. Reliable
     * Reception, so that a send completes only after the receive's CQ entry is there.
     */
    @Test
    void aResizeKeepsTheQueuedCompletionsInOrderAndAWaiterGoesOnOnTheNewRing() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final CompletionQueue cq = serverNic.createCq(4);
            final Pair pair = Pair.connect(serverNic, clientNic, Reliability.RELIABLE_RECEPTION, cq, "cq-resize");
            int next = 0;
            for (; next < 3; next++)
            {
                pair.postReceive(next, 16);
                pair.send(next, 4, next);
            }
            int taken = takeInOrder(cq, pair, 0, 1);
            assertEquals(ViplResult.INVALID_PARAMETER, assertThrows(ViplException.class, () -> cq.resize(1)).result(),
                "two completions are queued");
            assertEquals(4, cq.entries(), "the refused resize left the CQ as it was");
            assertEquals(2, cq.queued());

            cq.resize(64);
            assertEquals(64, cq.entries());
            assertEquals(2, cq.queued(), "the queued completions moved with it");
            taken = takeInOrder(cq, pair, taken, 2);

            // A thread asleep on the CQ while it is resized.
            final CountDownLatch waiting = new CountDownLatch(1);
            final CompletableFuture<CompletionQueue.Completion> waiter = CompletableFuture.supplyAsync(() ->
            {
                waiting.countDown();
                return cq.await(120_000);
            }, threads);
            waiting.await();
            Thread.sleep(200);
            cq.resize(8);
            pair.postReceive(next, 16);
            pair.send(next, 4, next);
            next++;
            final CompletionQueue.Completion woken = waiter.get(120, TimeUnit.SECONDS);
            assertSame(pair.server, woken.vi());
            assertEquals(taken, pair.serverMemory.buffer().getInt(DATA + pair.server.recvDone().offset() /
                ViplDescriptor.ALIGNMENT * 16), "the waiter's completion is the next message");
            taken++;

            // More queued than the CQ was created with: the new capacity is real.
            for (int m = 0; m < 6; m++, next++)
            {
                pair.postReceive(next, 16);
                pair.send(next, 4, next);
            }
            assertEquals(6, cq.queued());
            assertTrue(!cq.isOverflowed());
            taken = takeInOrder(cq, pair, taken, 6);
            cq.resize(2);
            assertEquals(2, cq.entries(), "smaller than created, with nothing queued");
            pair.postReceive(next, 16);
            pair.send(next, 4, next);
            next++;
            takeInOrder(cq, pair, taken, 1);
            assertNull(cq.done());
            pair.close();
            pair.server.close();
            cq.close();
        }
    }

    /** A CQ resized twice gives back all three rings' pages when it is destroyed. */
    @Test
    void aResizedCqGivesBackEveryRingWhenDestroyed() throws Exception
    {
        try (ViplNic nic = Vipl.openNic("0-0", dir.name()))
        {
            final int before = freePages();
            final CompletionQueue cq = nic.createCq(16);
            cq.resize(4096);
            cq.resize(2);
            assertTrue(freePages() < before - 1, "the resized CQ holds pages");
            cq.close();
            TestClusters.await("the rings' pages given back", () -> freePages() == before);
            assertEquals(ViplResult.INVALID_STATE, assertThrows(ViplException.class, () -> cq.resize(8)).result(),
                "a destroyed CQ");
        }
    }

    private static int freePages()
    {
        return ClusterStatus.read(dir).nodes().get(0).freePages();
    }

    /**
     * Takes {@code count} CQ entries, each the server's receive of the next message (its first int is
     * {@code first}, {@code first + 1}, ...). @return the number of the message after them.
     */
    private static int takeInOrder(final CompletionQueue cq, final Pair pair, final int first, final int count)
    {
        for (int m = first; m < first + count; m++)
        {
            final CompletionQueue.Completion c = cq.done();
            assertNotNull(c, "the completion of message " + m);
            assertSame(pair.server, c.vi());
            assertTrue(!c.sendQueue());
            final Descriptor got = pair.server.recvDone();
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, got.status(), "message " + m);
            assertEquals(m, pair.serverMemory.buffer().getInt(DATA + got.offset() / ViplDescriptor.ALIGNMENT * 16),
                "message " + m + " in its receive");
        }
        return first + count;
    }

    /**
     * Two connected ends for the tests of this package: the server's VI on node 1-0 (its receive queue
     * on {@code cq} if there is one), the client's on 0-0, each with 256 KiB registered whole.
     * Receive k uses descriptor slot k (64 bytes each) and the 16 data bytes at {@code DATA + 16 k}.
     */
    static final class Pair
    {
        final Vi server;
        final Vi client;
        final ViplMemory serverMemory;
        final ViplMemory clientMemory;
        final MemoryRegion serverRegion;
        final MemoryRegion clientRegion;
        final NicCoordinates serverNode;
        private int sendSlot;

        private Pair(final ViplNic serverNic, final ViplNic clientNic, final Reliability reliability,
            final CompletionQueue serverCq)
        {
            serverNode = serverNic.node();
            final ProtectionTag serverPtag = serverNic.createPtag();
            serverMemory = serverNic.allocate(MEMORY);
            serverRegion = serverNic.registerMem(serverMemory, 0, MEMORY, new MemoryAttributes(serverPtag, false, false));
            server = serverNic.createVi(new ViAttributes(reliability, 4096, serverPtag, false, false), null, serverCq);
            final ProtectionTag clientPtag = clientNic.createPtag();
            clientMemory = clientNic.allocate(MEMORY);
            clientRegion = clientNic.registerMem(clientMemory, 0, MEMORY, new MemoryAttributes(clientPtag, false, false));
            client = clientNic.createVi(new ViAttributes(reliability, 4096, clientPtag, false, false), null, null);
        }

        static Pair connect(final ViplNic serverNic, final ViplNic clientNic, final Reliability reliability,
            final CompletionQueue serverCq, final String discriminator) throws Exception
        {
            final Pair pair = new Pair(serverNic, clientNic, reliability, serverCq);
            final byte[] key = discriminator.getBytes(StandardCharsets.US_ASCII);
            final CompletableFuture<RemoteVi> asked = CompletableFuture.supplyAsync(() ->
                clientNic.connectRequest(pair.client, new ViplAddress(serverNic.node(), key), 60_000));
            serverNic.connectWait(key, 60_000).accept(pair.server);
            asked.get(60, TimeUnit.SECONDS);
            return pair;
        }

        /** Posts receive {@code slot} of {@code bytes} and waits until the NIC took it (a message must find it). */
        void postReceive(final int slot, final int bytes) throws InterruptedException
        {
            final long before = TestClusters.counters(dir, serverNode).get(NicCounters.COMMANDS);
            postReceiveUnwaited(slot, bytes);
            TestClusters.await("the receive taken by the NIC", () ->
                TestClusters.counters(dir, serverNode).get(NicCounters.COMMANDS) > before);
        }

        void postReceiveUnwaited(final int slot, final int bytes)
        {
            final Descriptor recv = serverMemory.descriptor(slot * ViplDescriptor.ALIGNMENT);
            recv.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, serverMemory.address(DATA + slot * 16), serverRegion.handle(), bytes);
            server.postRecv(recv, serverRegion);
        }

        /** @return receive {@code slot}'s descriptor. */
        Descriptor received(final int slot)
        {
            return serverMemory.descriptor(slot * ViplDescriptor.ALIGNMENT);
        }

        /** Sends {@code bytes} starting with the int {@code value} from the client and waits for its completion. */
        Descriptor send(final int slot, final int bytes, final int value)
        {
            final int data = DATA + slot * 16;
            clientMemory.buffer().putInt(data, value);
            final Descriptor send = clientMemory.descriptor((sendSlot++ % 64) * ViplDescriptor.ALIGNMENT);
            send.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(bytes)
                .dataSegment(0, clientMemory.address(data), clientRegion.handle(), bytes);
            client.postSend(send, clientRegion);
            final Descriptor done = client.sendWait(60_000);
            assertSame(send, done);
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
            return send;
        }

        void close()
        {
            client.disconnect();
            server.disconnect();
        }
    }
}
