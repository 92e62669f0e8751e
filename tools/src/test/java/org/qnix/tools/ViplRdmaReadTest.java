package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplDescriptor;
import org.qnix.firmware.NicCounters;
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
 * RDMA read and QFENCE on a real cluster (issue 14), through libvipl's public API: a VI on node 0-0
 * reads a region of several pages of a VI's process on node 1-0, whose NIC answers without any
 * descriptor of that process; every byte is checked where it lands and the bytes around it untouched.
 * A send with QFENCE posted right after a read carries bytes the read brings: the peer receives them
 * as read, so the send started only after the read's data had landed.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplRdmaReadTest extends ViplClusterTest
{
    private static final int MEMORY = 256 * 1024;
    private static final int DATA = 64 * 1024;
    private static final byte UNTOUCHED = (byte)0xA5;

    @Test
    void aReadBringsEveryByteOfARegionOfSeveralPages() throws Exception
    {
        for (final Reliability reliability : new Reliability[] {Reliability.RELIABLE_DELIVERY,
            Reliability.RELIABLE_RECEPTION})
        {
            try (ViplNic serverNic = Vipl.openNic("1-0", dir.name());
                ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
            {
                final Side server = new Side(serverNic, reliability);
                final Side client = new Side(clientNic, reliability);
                connect(server, client, "read-" + reliability.ordinal());
                final int page = clientNic.parameters().pageSize();
                final int length = 10 * page + 123;
                final int source = DATA + 77;
                final UnsafeBuffer src = server.memory.buffer();
                final UnsafeBuffer dst = client.memory.buffer();
                for (int i = 0; i < MEMORY - DATA; i++)
                {
                    src.putByte(DATA + i, (byte)(i * 11 + 3 + (i >> 10) + reliability.ordinal()));
                }
                dst.setMemory(DATA, MEMORY - DATA, UNTOUCHED);
                // Three local segments at odd offsets with gaps between them.
                final int[] at = {DATA + 5, DATA + 4 * page + 901, DATA + 9 * page + 13};
                final int[] lengths = {3 * page + 7, 4 * page, length - 7 * page - 7};
                final Descriptor read = client.memory.descriptor(0);
                read.fields().reset().control(ViplDescriptor.OP_RDMA_READ).segmentCount(3).length(length)
                    .addressSegment(server.memory.address(source), server.region.handle());
                for (int s = 0; s < 3; s++)
                {
                    read.fields().dataSegment(s, client.memory.address(at[s]), client.region.handle(), lengths[s]);
                }
                client.vi.postSend(read, client.region);
                assertSame(read, client.vi.sendWait(30_000));
                assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ, read.status());
                assertEquals(length, read.length());
                int offset = 0;
                for (int s = 0; s < 3; s++)
                {
                    for (int i = 0; i < lengths[s]; i++)
                    {
                        assertEquals(src.getByte(source + offset + i), dst.getByte(at[s] + i),
                            "byte " + (offset + i) + " of the read");
                    }
                    offset += lengths[s];
                    final int end = at[s] + lengths[s];
                    final int next = s < 2 ? at[s + 1] : end + 1000;
                    for (int i = end; i < next; i++)
                    {
                        assertEquals(UNTOUCHED, dst.getByte(i), "byte " + i + " after segment " + s);
                    }
                }
                for (int i = DATA; i < at[0]; i++)
                {
                    assertEquals(UNTOUCHED, dst.getByte(i), "byte " + i + " before the read");
                }
                client.vi.disconnect();
                server.vi.disconnect();
            }
        }
    }

    @Test
    void aSendWithQfenceAfterAReadCarriesTheBytesTheReadBrought() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final Side server = new Side(serverNic, Reliability.RELIABLE_DELIVERY);
            final Side client = new Side(clientNic, Reliability.RELIABLE_DELIVERY);
            connect(server, client, "qfence");
            final int page = clientNic.parameters().pageSize();
            final int length = 12 * page;
            final int carried = 2 * page + 31;
            final UnsafeBuffer src = server.memory.buffer();
            final UnsafeBuffer dst = client.memory.buffer();
            for (int i = 0; i < length; i++)
            {
                src.putByte(DATA + i, (byte)(i * 7 + 1 + (i >> 9)));
            }
            dst.setMemory(DATA, MEMORY - DATA, UNTOUCHED);
            // The server receives the fenced send into the area right after its source.
            final int landing = DATA + length;
            src.setMemory(landing, carried + 1000, UNTOUCHED);
            final Descriptor recv = server.memory.descriptor(0);
            recv.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, server.memory.address(landing), server.region.handle(), carried + 1000);
            final long before = commandsTaken(server);
            server.vi.postRecv(recv, server.region);
            TestClusters.await("the receive taken by the NIC", () -> commandsTaken(server) > before);

            final Descriptor read = client.memory.descriptor(0);
            read.fields().reset().control(ViplDescriptor.OP_RDMA_READ).segmentCount(1).length(length)
                .addressSegment(server.memory.address(DATA), server.region.handle())
                .dataSegment(0, client.memory.address(DATA), client.region.handle(), length);
            // The last bytes the read brings, sent on at once: only the fence keeps them from going first.
            final Descriptor send = client.memory.descriptor(128);
            send.fields().reset().control(ViplDescriptor.OP_SEND | ViplDescriptor.CONTROL_QFENCE).segmentCount(1)
                .length(carried).dataSegment(0, client.memory.address(DATA + length - carried), client.region.handle(),
                    carried);
            client.vi.postSend(read, client.region);
            client.vi.postSend(send, client.region);

            assertSame(read, client.vi.sendWait(30_000));
            assertSame(send, client.vi.sendWait(30_000));
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ, read.status());
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
            assertSame(recv, server.vi.recvWait(30_000));
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status());
            assertEquals(carried, recv.length());
            for (int i = 0; i < carried; i++)
            {
                assertEquals(src.getByte(DATA + length - carried + i), src.getByte(landing + i),
                    "byte " + i + " of the fenced send");
            }
            for (int i = 0; i < 1000; i++)
            {
                assertEquals(UNTOUCHED, src.getByte(landing + carried + i), "byte " + i + " after the send");
            }
            client.vi.disconnect();
            server.vi.disconnect();
        }
    }

    private static void connect(final Side server, final Side client, final String discriminator) throws Exception
    {
        final byte[] key = discriminator.getBytes(StandardCharsets.US_ASCII);
        final CompletableFuture<RemoteVi> asked = CompletableFuture.supplyAsync(() ->
            client.nic.connectRequest(client.vi, new ViplAddress(server.node, key), 60_000));
        server.nic.connectWait(key, 60_000).accept(server.vi);
        asked.get(60, TimeUnit.SECONDS);
    }

    private static long commandsTaken(final Side side)
    {
        return TestClusters.counters(dir, side.node).get(NicCounters.COMMANDS);
    }

    /** One side: its memory registered whole with RDMA read enabled, and a VI that enables it too. */
    private static final class Side
    {
        final ViplNic nic;
        final NicCoordinates node;
        final ViplMemory memory;
        final MemoryRegion region;
        final Vi vi;

        Side(final ViplNic nic, final Reliability reliability)
        {
            this.nic = nic;
            node = nic.node();
            final ProtectionTag ptag = nic.createPtag();
            memory = nic.allocate(MEMORY);
            region = nic.registerMem(memory, 0, MEMORY, new MemoryAttributes(ptag, false, true));
            vi = nic.createVi(new ViAttributes(reliability, 64 * 1024, ptag, false, true), null, null);
        }
    }
}
