package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.NicCoordinates;
import org.qnix.firmware.NicCounters;
import org.qnix.pcicomm.ConnectionState;
import org.qnix.pcicomm.PciBuffer;
import org.qnix.pcicomm.PciComm;
import org.qnix.pcicomm.PciConnection;

/**
 * PCIComm's data path (issue 15) on a real cluster, both ends in this JVM on their own NICs (each a
 * VIA process of its node's driver), the firmware and daemon in their own JVMs: sendRecycle and recv in
 * order; a send spanning several preposted buffers, each returned with its actual length; zero copy
 * (recv returns the preposted buffer at its address; the sending NIC read each byte of host memory
 * once); back-pressure while the receiver preposts one buffer at a time; a random-size stress with a
 * printed seed, every byte delivered once and in order; and loopback on one node.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PciCommTransferTest extends ViplClusterTest
{
    private static final long WAIT_MS = 60_000;

    @AfterAll
    static void noCidLockIsLeft() throws Exception
    {
        // Every connection of this class was closed: each released cid took its lock file with it.
        assertEquals(java.util.List.of(), removeCidLocks(), "cid lock files left");
    }

    /**
     * Removes the cid lock files of this class's cluster: a holder killed with -9 leaves its own.
     *
     * @return the files it found.
     */
    static java.util.List<java.nio.file.Path> removeCidLocks() throws java.io.IOException
    {
        final java.util.List<java.nio.file.Path> found = new java.util.ArrayList<>();
        final java.nio.file.Path locks = PciComm.cidLockDirectory();
        if (null == dir || !java.nio.file.Files.isDirectory(locks))
        {
            return found;
        }
        try (java.nio.file.DirectoryStream<java.nio.file.Path> files =
            java.nio.file.Files.newDirectoryStream(locks, dir.name() + "-*.lock"))
        {
            for (final java.nio.file.Path file : files)
            {
                found.add(file);
                java.nio.file.Files.deleteIfExists(file);
            }
        }
        return found;
    }

    @Test
    void buffersComeBackInOrderAndASendSpansPrepostedBuffersWithTheirActualLengths() throws Exception
    {
        try (Pair pair = Pair.of("1-0", "0-0", 21))
        {
            final PciConnection in = pair.listener;
            final PciConnection out = pair.client;
            // Three receives of 4 KiB, then one of 1 KiB: a send of 10 000 bytes fills 4096 + 4096 + 1808.
            final List<PciBuffer> preposted = new ArrayList<>();
            for (final int length : new int[] {4096, 4096, 4096, 1024})
            {
                final PciBuffer b = in.allocate(4096);
                b.buffer().setMemory(0, 4096, (byte)0x5A);
                in.prepostRecv(b, length);
                preposted.add(b);
            }
            final PciBuffer big = out.allocate(10_000);
            final PciBuffer small = out.allocate(700);
            fill(big, 10_000, 1);
            fill(small, 700, 2);
            out.send(big, 10_000);
            out.send(small, 700);

            assertSame(big, out.sendRecycle(WAIT_MS), "recycled in the order sent");
            assertEquals(10_000, big.length());
            assertSame(small, out.sendRecycle(WAIT_MS));
            assertEquals(700, small.length());

            final int[] actual = {4096, 4096, 1808};
            for (int i = 0; i < 3; i++)
            {
                final PciBuffer got = in.recv(WAIT_MS);
                assertSame(preposted.get(i), got, "received in preposting order, at the preposted address");
                assertEquals(actual[i], got.length(), "the actual length of piece " + i);
                for (int j = 0; j < got.length(); j++)
                {
                    assertEquals(pattern(1, i * 4096 + j), got.buffer().getByte(j), "byte " + (i * 4096 + j));
                }
                // The rest of the buffer is untouched: a write never spills past its actual length.
                for (int j = got.length(); j < 4096; j++)
                {
                    assertEquals((byte)0x5A, got.buffer().getByte(j));
                }
            }
            // The next send starts a new buffer (the 1 KiB one), not the rest of the third.
            final PciBuffer last = in.recv(WAIT_MS);
            assertSame(preposted.get(3), last);
            assertEquals(700, last.length());
            for (int j = 0; j < 700; j++)
            {
                assertEquals(pattern(2, j), last.buffer().getByte(j));
            }
            assertNull(in.tryRecv(), "nothing else arrived");
            assertEquals(4, out.statistics().dataWrites());
        }
    }

    @Test
    void zeroCopyTheSendingNicReadsEachByteOnceAndRecvReturnsThePrepostedAddress() throws Exception
    {
        try (Pair pair = Pair.of("1-0", "0-0", 22))
        {
            final PciConnection in = pair.listener;
            final PciConnection out = pair.client;
            final int size = 64 * 1024;
            final int count = 16;
            // The NICs' counts start before anything is posted: a NIC reads a control message at its own
            // pace, and a count taken between the message's post and its read would see it read but not sent.
            final long readBefore = hostBytesRead(0);
            final long controlBefore = out.statistics().controlBytesSent();
            final long inControlBefore = in.statistics().controlBytesSent();
            final long readBeforeIn = hostBytesRead(1);
            final PciBuffer[] receives = new PciBuffer[4];
            final long[] addresses = new long[receives.length];
            for (int i = 0; i < receives.length; i++)
            {
                receives[i] = in.allocate(size);
                addresses[i] = receives[i].address();
                in.prepostRecv(receives[i], size);
            }
            final PciBuffer[] sends = {out.allocate(size), out.allocate(size)};
            // The four exports are posted before the first send, so the data lands in preposting order.
            TestClusters.await("the exports sent", () -> in.statistics().buffersExported() == receives.length);

            long received = 0;
            int sent = 0;
            int recycledCount = 0;
            final java.util.ArrayDeque<PciBuffer> free = new java.util.ArrayDeque<>(List.of(sends));
            while (received < (long)size * count)
            {
                while (sent < count && !free.isEmpty())
                {
                    final PciBuffer b = free.pollFirst();
                    fill(b, size, 100 + sent);
                    out.send(b, size);
                    sent++;
                }
                final PciBuffer got = in.recv(WAIT_MS);
                assertNotNull(got, "data within the wait");
                final int index = (int)(received / size);
                assertEquals(addresses[index % receives.length], got.address(), "zero copy: the preposted address");
                assertSame(receives[index % receives.length], got);
                assertEquals(size, got.length());
                for (int j = 0; j < size; j += 997)
                {
                    assertEquals(pattern(100 + index, j), got.buffer().getByte(j));
                }
                received += got.length();
                in.prepostRecv(got, size);
                // Each send filled one buffer: the one just received was send number index, recycled next.
                final PciBuffer back = out.sendRecycle(WAIT_MS);
                assertSame(sends[index % sends.length], back, "recycled in sending order");
                free.addLast(back);
                recycledCount++;
            }
            assertEquals(count, recycledCount);
            final PciConnection.Statistics stats = out.statistics();
            assertEquals((long)size * count, stats.dataBytesWritten());
            assertEquals(1, stats.registrations(), "both buffers lie in one chunk, registered once for all " + count +
                " sends");
            // Once each: the sending NIC read the data bytes and its own control messages, nothing more.
            final long controlOut = stats.controlBytesSent() - controlBefore;
            TestClusters.await("the sending NIC's count", () -> hostBytesRead(0) - readBefore ==
                (long)size * count + controlOut);
            assertEquals((long)size * count + controlOut, hostBytesRead(0) - readBefore,
                "host memory bytes DMA-read on the sender: the data once, plus " + controlOut + " bytes of control");
            // The receiver's NIC read only the receiver's own control messages (exports, credits), each once.
            final long controlIn = in.statistics().controlBytesSent() - inControlBefore;
            TestClusters.await("the receiving NIC's count", () -> hostBytesRead(1) - readBeforeIn == controlIn);
        }
    }

    @Test
    void aSenderWaitsForExportedSpaceWhileTheReceiverPrepostsSlowly() throws Exception
    {
        try (Pair pair = Pair.of("1-0", "0-0", 23))
        {
            final PciConnection in = pair.listener;
            final PciConnection out = pair.client;
            final int n = 12;
            final PciBuffer[] sends = new PciBuffer[n];
            for (int i = 0; i < n; i++)
            {
                sends[i] = out.allocate(2048);
                fill(sends[i], 2048, 200 + i);
                out.send(sends[i], 2048);      // queued: returns at once, nothing exported yet
            }
            assertNull(out.trySendRecycle(), "nothing can be written before the receiver exports");
            final PciBuffer slot = in.allocate(2048);
            for (int i = 0; i < n; i++)
            {
                in.prepostRecv(slot, 2048);
                final PciBuffer got = in.recv(WAIT_MS);
                assertSame(slot, got);
                for (int j = 0; j < 2048; j += 61)
                {
                    assertEquals(pattern(200 + i, j), got.buffer().getByte(j), "send " + i + " byte " + j);
                }
                final long written = out.statistics().dataBytesWritten();
                assertTrue(written <= 2048L * (i + 1), "the sender wrote " + written + " bytes into " + (i + 1) +
                    " exported buffers of 2048");
                // The sender recycles the send whose bytes just landed, and only it.
                assertSame(sends[i], out.sendRecycle(WAIT_MS));
                assertNull(out.trySendRecycle());
                Thread.sleep(20);
            }
        }
    }

    @Test
    void aRandomStressDeliversEveryByteOnceInOrder() throws Exception
    {
        // Fixed, and printed: -Dpcicomm.seed=N replays another.
        final long seed = Long.getLong("pcicomm.seed", 20_261_124L);
        System.out.println("PciCommTransferTest stress seed " + seed);
        stress(seed, "1-0", "0-0", 24);
    }

    @Test
    void loopbackOnOneNode() throws Exception
    {
        final long seed = 15;
        System.out.println("PciCommTransferTest loopback seed " + seed);
        stress(seed, "0-0", "0-0", 25);
    }

    /**
     * Random send sizes from the client, random prepost sizes at the listener, both ways at once; the
     * stream is checked byte by byte in the order sent.
     */
    private static void stress(final long seed, final String listenerNode, final String clientNode, final int cid)
        throws Exception
    {
        try (Pair pair = Pair.of(listenerNode, clientNode, cid))
        {
            final long total = 3L << 20;
            final CompletableFuture<Long> forward = CompletableFuture.supplyAsync(() -> pump(pair.client, total, seed));
            final CompletableFuture<Long> backward = CompletableFuture.supplyAsync(() -> pump(pair.listener, total / 4,
                seed + 1));
            final long in = drain(pair.listener, total, seed, seed * 7);
            final long back = drain(pair.client, total / 4, seed + 1, seed * 11);
            assertEquals(total, in);
            assertEquals(total / 4, back);
            assertEquals(total, (long)forward.get(WAIT_MS, TimeUnit.MILLISECONDS));
            assertEquals(total / 4, (long)backward.get(WAIT_MS, TimeUnit.MILLISECONDS));
        }
    }

    /** Sends {@code total} bytes of the stream of {@code seed} in random sizes; @return bytes recycled. */
    private static long pump(final PciConnection out, final long total, final long seed)
    {
        final Random sizes = new Random(seed ^ 0x5DEECE66DL);
        final java.util.ArrayDeque<PciBuffer> free = new java.util.ArrayDeque<>();
        for (int i = 0; i < 6; i++)
        {
            free.add(out.allocate(48 * 1024));
        }
        long queued = 0;
        long recycled = 0;
        try
        {
            while (recycled < total)
            {
                while (queued < total && !free.isEmpty())
                {
                    final PciBuffer b = free.pollFirst();
                    final int length = (int)Math.min(total - queued, 1 + sizes.nextInt(b.capacity()));
                    for (int j = 0; j < length; j++)
                    {
                        b.buffer().putByte(j, streamByte(seed, queued + j));
                    }
                    out.send(b, length);
                    queued += length;
                }
                final PciBuffer back = out.sendRecycle(WAIT_MS);
                if (null == back)
                {
                    throw new AssertionError("no send recycled in " + WAIT_MS + " ms");
                }
                recycled += back.length();
                free.addLast(back);
            }
            return recycled;
        }
        catch (final InterruptedException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /** Receives {@code total} bytes with random prepost sizes; checks each against the stream of {@code seed}. */
    private static long drain(final PciConnection in, final long total, final long seed, final long prepostSeed)
        throws InterruptedException
    {
        final Random sizes = new Random(prepostSeed);
        for (int i = 0; i < 8; i++)
        {
            final PciBuffer b = in.allocate(32 * 1024);
            in.prepostRecv(b, 1 + sizes.nextInt(b.capacity()));
        }
        long received = 0;
        while (received < total)
        {
            final PciBuffer got = in.recv(WAIT_MS);
            assertNotNull(got, "data within the wait, at byte " + received);
            for (int j = 0; j < got.length(); j++)
            {
                if (streamByte(seed, received + j) != got.buffer().getByte(j))
                {
                    throw new AssertionError("byte " + (received + j) + " of the stream of seed " + seed + " differs");
                }
            }
            received += got.length();
            in.prepostRecv(got, 1 + sizes.nextInt(got.capacity()));
        }
        assertNull(in.tryRecv(), "no byte beyond the stream");
        return received;
    }

    private static byte streamByte(final long seed, final long position)
    {
        long x = position * 0x9E3779B97F4A7C15L + seed;
        x ^= x >>> 29;
        return (byte)(x * 0xBF58476D1CE4E5B9L >>> 56);
    }

    static void fill(final PciBuffer b, final int length, final int seed)
    {
        for (int j = 0; j < length; j++)
        {
            b.buffer().putByte(j, pattern(seed, j));
        }
    }

    static byte pattern(final int seed, final int j)
    {
        return (byte)(seed * 31 + j * 7 + (j >> 8));
    }

    private static long hostBytesRead(final int node)
    {
        final Map<String, Long> c = TestClusters.counters(dir, NicCoordinates.ofIndex(node, 2));
        return c.get(NicCounters.HOST_BYTES_READ);
    }

    /** A listener and a client connected to it, both in this JVM; closed (disconnected) together. */
    static final class Pair implements AutoCloseable
    {
        final PciConnection listener;
        final PciConnection client;

        private Pair(final PciConnection listener, final PciConnection client)
        {
            this.listener = listener;
            this.client = client;
        }

        static Pair of(final String listenerNode, final String clientNode, final int cid) throws InterruptedException
        {
            final PciConnection listener = PciComm.options().cluster(dir.name()).listen(listenerNode, cid);
            try
            {
                final PciConnection client =
                    PciComm.options().cluster(dir.name()).localNode(clientNode).connectTimeoutMs(WAIT_MS).connect(listenerNode, cid);
                listener.awaitConnected(WAIT_MS);
                assertEquals(ConnectionState.CONNECTED, client.state());
                assertEquals(ConnectionState.CONNECTED, listener.state());
                return new Pair(listener, client);
            }
            catch (final RuntimeException | InterruptedException ex)
            {
                listener.close();
                throw ex;
            }
        }

        public void close() throws InterruptedException
        {
            try
            {
                client.disconnect(WAIT_MS);
                assertEquals(ConnectionState.CLOSED, client.state());
                TestClusters.await("the listener closed too", () -> ConnectionState.CLOSED == listener.state());
            }
            finally
            {
                client.close();
                listener.close();
            }
        }
    }
}
