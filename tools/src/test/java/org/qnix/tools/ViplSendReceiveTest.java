package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplDescriptor;
import org.qnix.firmware.NicCounters;
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
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * VIA send/receive on a real cluster (issue 14): a VI on node 0-0 connected to one on node 1-0, at
 * Reliable Delivery and Unreliable; messages of 0 B, 1 B, a page, and several pages gathered from and
 * scattered into several segments at odd offsets, with and without immediate data. Every byte is
 * checked where it lands and the bytes after it are checked untouched; the receive queue reports to a
 * CQ. RDMA writes with and without immediate data land at the address the sender names.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplSendReceiveTest extends ViplClusterTest
{
    private static final int MEMORY = 256 * 1024;
    private static final int DATA = 64 * 1024;
    private static final byte UNTOUCHED = (byte)0xA5;

    @Test
    void reliableDeliveryCarriesEveryByteOfEverySize() throws Exception
    {
        exchangeAll(Reliability.RELIABLE_DELIVERY, "rd");
    }

    @Test
    void unreliableCarriesEveryByteOfEverySize() throws Exception
    {
        exchangeAll(Reliability.UNRELIABLE, "ur");
    }

    /**
     * RDMA write into the server's memory: at Reliable Reception without immediate data (the send
     * completes on the acknowledgement, after the bytes landed), at Reliable Delivery with immediate
     * data (a receive of the server's completes with it).
     */
    @Test
    void rdmaWritesLandAtTheRemoteAddressWithAndWithoutImmediateData() throws Exception
    {
        for (final Reliability reliability : new Reliability[] {Reliability.RELIABLE_RECEPTION,
            Reliability.RELIABLE_DELIVERY})
        {
            try (ViplNic serverNic = Vipl.openNic("1-0", dir.name());
                ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
            {
                final Side server = new Side(serverNic, reliability, false, true);
                final Side client = new Side(clientNic, reliability, false, false);
                final byte[] key = ("rdma-" + reliability.ordinal()).getBytes(StandardCharsets.US_ASCII);
                final CompletableFuture<RemoteVi> asked = CompletableFuture.supplyAsync(() ->
                    clientNic.connectRequest(client.vi, new ViplAddress(new NicCoordinates(1, 0), key), 60_000));
                serverNic.connectWait(key, 60_000).accept(server.vi);
                asked.get(60, TimeUnit.SECONDS);

                final boolean immediate = Reliability.RELIABLE_DELIVERY == reliability;
                final int page = clientNic.parameters().pageSize();
                final int length = 3 * page + 9;
                final UnsafeBuffer src = client.memory.buffer();
                final UnsafeBuffer dst = server.memory.buffer();
                dst.setMemory(DATA, MEMORY - DATA, UNTOUCHED);
                for (int i = 0; i < length + 500; i++)
                {
                    src.putByte(DATA + i, (byte)(i * 13 + 5 + (immediate ? 1 : 0)));
                }
                final Descriptor recv = server.memory.descriptor(0);
                if (immediate)
                {
                    recv.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0);
                    final long before = commandsTaken(server);
                    server.vi.postRecv(recv, server.region);
                    TestClusters.await("the receive taken by the NIC", () -> commandsTaken(server) > before);
                }
                final int target = DATA + 1001;
                final Descriptor write = client.memory.descriptor(0);
                write.fields().reset()
                    .control(ViplDescriptor.OP_RDMA_WRITE | (immediate ? ViplDescriptor.CONTROL_IMMEDIATE : 0))
                    .segmentCount(2).length(length).immediateData(immediate ? 0x1234 : 0)
                    .addressSegment(server.memory.address(target), server.region.handle())
                    .dataSegment(0, client.memory.address(DATA), client.region.handle(), page)
                    .dataSegment(1, client.memory.address(DATA + page + 300), client.region.handle(), length - page);
                client.vi.postSend(write, client.region);
                assertSame(write, client.vi.sendWait(30_000));
                assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_WRITE, write.status());
                if (immediate)
                {
                    assertSame(recv, server.vi.recvWait(30_000));
                    assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_REMOTE_RDMA_WRITE |
                        ViplDescriptor.STATUS_IMMEDIATE, recv.status());
                    assertEquals(0x1234, recv.immediateData());
                }
                for (int i = 0; i < length; i++)
                {
                    final int from = i < page ? DATA + i : DATA + page + 300 + i - page;
                    assertEquals(src.getByte(from), dst.getByte(target + i), "byte " + i);
                }
                for (int i = target + length; i < target + length + 1000; i++)
                {
                    assertEquals(UNTOUCHED, dst.getByte(i), "byte " + i + " after the write");
                }
                for (int i = DATA; i < target; i++)
                {
                    assertEquals(UNTOUCHED, dst.getByte(i), "byte " + i + " before the write");
                }
                client.vi.disconnect();
                server.vi.disconnect();
            }
        }
    }

    private void exchangeAll(final Reliability reliability, final String discriminator) throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final Side server = new Side(serverNic, reliability, true);
            final Side client = new Side(clientNic, reliability, false);
            final byte[] key = discriminator.getBytes(StandardCharsets.US_ASCII);
            final CompletableFuture<RemoteVi> asked = CompletableFuture.supplyAsync(() ->
                clientNic.connectRequest(client.vi, new ViplAddress(new NicCoordinates(1, 0), key), 60_000));
            serverNic.connectWait(key, 60_000).accept(server.vi);
            asked.get(60, TimeUnit.SECONDS);

            final int page = clientNic.parameters().pageSize();
            int seed = 1;
            for (final int[] shape : new int[][] {{0, 1}, {1, 1}, {page, 1}, {3 * page + 17, 3}, {10 * page + 5, 7}})
            {
                exchange(client, server, shape[0], shape[1], seed++, false);
                exchange(client, server, shape[0], shape[1], seed++, true);
                // And back the other way.
                exchange(server, client, shape[0], shape[1], seed++, true);
            }
            client.vi.disconnect();
            server.vi.disconnect();
        }
    }

    /**
     * One message of {@code length} bytes from {@code from} to {@code to}, gathered from
     * {@code segments} segments and scattered into as many (with room to spare in the last).
     */
    private static long commandsTaken(final Side side)
    {
        return TestClusters.counters(dir, side.node).get(NicCounters.COMMANDS);
    }

    private static void exchange(final Side from, final Side to, final int length, final int segments,
        final int seed, final boolean immediate) throws InterruptedException
    {
        final UnsafeBuffer src = from.memory.buffer();
        final UnsafeBuffer dst = to.memory.buffer();
        dst.setMemory(DATA, MEMORY - DATA, UNTOUCHED);
        for (int i = 0; i < MEMORY - DATA; i++)
        {
            src.putByte(DATA + i, (byte)(seed * 31 + i * 7 + (i >> 9)));
        }
        final int[] sendAt = new int[segments];
        final int[] sendLength = new int[segments];
        final int[] receiveAt = new int[segments];
        final int[] receiveLength = new int[segments];
        int left = length;
        for (int s = 0; s < segments; s++)
        {
            sendLength[s] = s == segments - 1 ? left : left / (segments - s);
            left -= sendLength[s];
            // Odd offsets, gaps between the segments.
            sendAt[s] = DATA + 3 + s * (length / Math.max(1, segments) + 101);
            receiveAt[s] = DATA + 11 + s * (length / Math.max(1, segments) + 211);
            receiveLength[s] = sendLength[s] + (s == segments - 1 ? 40 : 0);
        }

        final Descriptor recv = to.memory.descriptor(128 * (seed % 8));
        recv.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(segments);
        for (int s = 0; s < segments; s++)
        {
            recv.fields().dataSegment(s, to.memory.address(receiveAt[s]), to.region.handle(), receiveLength[s]);
        }
        // A message finding no receive is dropped (Unreliable) or breaks the connection: the receive
        // must be with the NIC before the send is posted, which its "process commands" counter says.
        final long commandsBefore = commandsTaken(to);
        to.vi.postRecv(recv, to.region);
        TestClusters.await("the receive taken by the NIC", () -> commandsTaken(to) > commandsBefore);

        final Descriptor send = from.memory.descriptor(2048 + 128 * (seed % 8));
        send.fields().reset().control(ViplDescriptor.OP_SEND | (immediate ? ViplDescriptor.CONTROL_IMMEDIATE : 0))
            .segmentCount(segments).length(length).immediateData(immediate ? seed * 1000 + 7 : 0);
        for (int s = 0; s < segments; s++)
        {
            send.fields().dataSegment(s, from.memory.address(sendAt[s]), from.region.handle(), sendLength[s]);
        }
        from.vi.postSend(send, from.region);

        assertSame(send, from.vi.sendWait(30_000));
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status(), "send status");
        assertSame(recv, to.vi.recvWait(30_000));
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            (immediate ? ViplDescriptor.STATUS_IMMEDIATE : 0), recv.status(), "receive status");
        assertEquals(length, recv.length());
        if (immediate)
        {
            assertEquals(seed * 1000 + 7, recv.immediateData());
        }
        assertNull(to.vi.recvDone(), "nothing else arrived");
        // Every byte in order, across the segments; the spare room and the gaps untouched.
        int s = 0;
        int inSegment = 0;
        for (int i = 0; i < length; i++)
        {
            while (inSegment == sendLength[s])
            {
                s++;
                inSegment = 0;
            }
            final byte expected = src.getByte(sendAt[s] + inSegment);
            assertEquals(expected, dst.getByte(receiveAt[s] + inSegment), "byte " + i + " of " + length);
            inSegment++;
        }
        for (int r = 0; r < segments; r++)
        {
            final int end = receiveAt[r] + sendLength[r];
            final int next = r + 1 < segments ? receiveAt[r + 1] : MEMORY;
            for (int i = end; i < next; i++)
            {
                assertEquals(UNTOUCHED, dst.getByte(i), "byte " + i + " after segment " + r);
            }
        }
        if (to.cq != null)
        {
            final CompletionQueue.Completion c = to.cq.await(10_000);
            assertSame(to.vi, c.vi());
            assertTrue(!c.sendQueue());
        }
    }

    /** One end: a NIC, a ptag, memory registered whole, a VI (the server's receive queue on a CQ). */
    private static final class Side
    {
        final NicCoordinates node;
        final ViplMemory memory;
        final MemoryRegion region;
        final Vi vi;
        final CompletionQueue cq;

        Side(final ViplNic nic, final Reliability reliability, final boolean withCq)
        {
            this(nic, reliability, withCq, false);
        }

        /** @param rdmaWrite whether the region and the VI enable RDMA writes into them. */
        Side(final ViplNic nic, final Reliability reliability, final boolean withCq, final boolean rdmaWrite)
        {
            node = nic.node();
            final ProtectionTag ptag = nic.createPtag();
            memory = nic.allocate(MEMORY);
            region = nic.registerMem(memory, 0, MEMORY, new MemoryAttributes(ptag, rdmaWrite, false));
            cq = withCq ? nic.createCq(64) : null;
            vi = nic.createVi(new ViAttributes(reliability, 64 * 1024, ptag, rdmaWrite, false), null, cq);
        }
    }
}
