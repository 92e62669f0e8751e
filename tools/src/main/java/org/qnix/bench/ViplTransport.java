package org.qnix.bench;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ViplDescriptor;
import org.qnix.examples.ViplCompletions;
import org.qnix.host.DoorbellWait;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ViplException;

/**
 * VIPL point-to-point between this JVM, the server of a Reliable Delivery VI on one node of a running
 * cluster, and a peer JVM, its client, on another: a Send from registered memory into the peer's
 * posted receive (api {@code vipl}), or an RDMA write with immediate data straight into the peer's
 * registered memory, completing a receive with no data segment (api {@code vipl-rdma}); the peer
 * echoes each message the same way. Each side keeps the receive of the next message posted before it
 * sends what lets the other send it (VIA has no flow control: a message finding no receive breaks a
 * reliable connection), into two areas used in turn. Both wait on a CQ both queues of the VI report
 * to, the way {@code wait} says; see {@link ViplCompletions#await}.
 */
public final class ViplTransport implements LatencyTransport
{
    private static final long TIMEOUT_MS = 60_000;
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /** Descriptor offsets in the control memory; the hello (two areas: address and handle) after them. */
    private static final int RECEIVE = 0;
    private static final int SEND = 256;
    private static final int HELLO_RECEIVE = 384;
    private static final int HELLO_SEND = 512;
    private static final int HELLO_IN = 1024;
    private static final int HELLO_OUT = 1088;
    private static final int HELLO_LENGTH = 2 * (Long.BYTES + Integer.BYTES);

    private final Side side;
    private final PeerProcess peer;
    private final boolean rdma;
    private final int maxSize;

    private ViplTransport(final Side side, final PeerProcess peer, final boolean rdma, final int maxSize)
    {
        this.side = side;
        this.peer = peer;
        this.rdma = rdma;
        this.maxSize = maxSize;
    }

    /**
     * @param node     this JVM's node, e.g. {@code 0-0}, the server's.
     * @param peerNode the peer's node.
     * @param rdma     true for RDMA write with immediate data, false for Send.
     */
    public static ViplTransport start(final String cluster, final String node, final String peerNode,
        final DoorbellWait wait, final boolean rdma, final int maxSize)
    {
        final byte[] discriminator = ViplLink.discriminator("lat", INSTANCES.incrementAndGet());
        Side side = null;
        PeerProcess peer = null;
        try
        {
            side = new Side(ViplLink.open(cluster, node, maxSize, rdma, 16), rdma, maxSize, wait);
            // Before the peer can connect: its hello may come as soon as the VI connects.
            side.postHelloReceive();
            peer = PeerProcess.launch(Map.of(), "vipl", cluster, peerNode, node,
                new String(discriminator, java.nio.charset.StandardCharsets.US_ASCII), wait.label(),
                Integer.toString(maxSize), rdma ? "rdma" : "send");
            side.link.accept(discriminator);
            side.hello();
            peer.awaitReady();
            return new ViplTransport(side, peer, rdma, maxSize);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(side, peer);
            throw ex;
        }
    }

    public String name()
    {
        return rdma ? "vipl-rdma" : "vipl";
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void roundTrip(final int size)
    {
        side.postReceive();
        side.send(size);
        side.sent();
        side.received();
    }

    public void close()
    {
        // Closing the NIC breaks the connection: the peer's wait ends and it exits.
        CloseHelper.quietCloseAll(side, peer);
    }

    /** The echo side, in the peer JVM: the client of the benchmark JVM's VI. */
    static void echo(final String cluster, final String node, final String serverNode, final byte[] discriminator,
        final DoorbellWait wait, final int maxSize, final boolean rdma)
    {
        try (Side side = new Side(ViplLink.open(cluster, node, maxSize, rdma, 16), rdma, maxSize, wait))
        {
            // The first message's receive before the request: it may come as soon as the VI connects.
            side.postHelloReceive();
            side.postReceive();
            side.link.request(serverNode, discriminator);
            side.hello();
            BenchPeer.ready();
            while (true)
            {
                final int size;
                try
                {
                    size = side.received();
                }
                catch (final ViplException | IllegalStateException ex)
                {
                    return; // the benchmark closed its NIC
                }
                side.postReceive();
                side.send(size);
                side.sent();
            }
        }
    }

    /** One end: its link, its out buffer, its two receive areas, the peer's two, and the counts. */
    private static final class Side implements AutoCloseable
    {
        private final ViplLink link;
        private final boolean rdma;
        private final DoorbellWait wait;
        private final MemoryRegion out;
        private final MemoryRegion[] in = new MemoryRegion[2];
        private final Descriptor[] receive = new Descriptor[2];
        private final Descriptor send;
        private final long[] peerAddress = new long[2];
        private final int[] peerHandle = new int[2];
        private final int slot;
        private long posted;
        private long sent;

        Side(final ViplLink link, final boolean rdma, final int maxSize, final DoorbellWait wait)
        {
            this.link = link;
            this.rdma = rdma;
            this.wait = wait;
            this.slot = Math.max(1, maxSize);
            try
            {
                out = link.register(slot, false);
                in[0] = link.register(slot, rdma);
                in[1] = link.register(slot, rdma);
            }
            catch (final RuntimeException ex)
            {
                link.close();
                throw ex;
            }
            receive[0] = link.descriptor(RECEIVE);
            receive[1] = link.descriptor(RECEIVE + 128);
            send = link.descriptor(SEND);
        }

        void postHelloReceive()
        {
            final Descriptor d = link.descriptor(HELLO_RECEIVE);
            d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, link.control.memory().address(HELLO_IN), link.control.handle(), HELLO_LENGTH);
            link.vi.postRecv(d, link.control);
        }

        /** Each side's two receive areas to the other, for RDMA writes; the hello's receive was posted before connecting. */
        void hello()
        {
            final UnsafeBuffer c = link.control.memory().buffer();
            for (int k = 0; k < 2; k++)
            {
                c.putLong(HELLO_OUT + k * 12, in[k].address());
                c.putInt(HELLO_OUT + k * 12 + Long.BYTES, in[k].handle());
            }
            final Descriptor d = link.descriptor(HELLO_SEND);
            d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(HELLO_LENGTH)
                .dataSegment(0, link.control.memory().address(HELLO_OUT), link.control.handle(), HELLO_LENGTH);
            link.vi.postSend(d, link.control);
            take(true, TIMEOUT_MS, "the hello sent");
            take(false, TIMEOUT_MS, "the hello received");
            for (int k = 0; k < 2; k++)
            {
                peerAddress[k] = c.getLong(HELLO_IN + k * 12);
                peerHandle[k] = c.getInt(HELLO_IN + k * 12 + Long.BYTES);
            }
        }

        /** Posts the receive of the next message not yet posted for, into the area of its parity. */
        void postReceive()
        {
            final int k = (int)(posted++ & 1);
            final Descriptor d = receive[k];
            d.fields().reset().control(ViplDescriptor.OP_SEND);
            if (rdma)
            {
                d.fields().segmentCount(0);
            }
            else
            {
                d.fields().segmentCount(1).dataSegment(0, in[k].address(), in[k].handle(), slot);
            }
            link.vi.postRecv(d, link.control);
        }

        /** Sends message number {@code sent} of {@code size} bytes: from the out buffer, or RDMA into the peer's area. */
        void send(final int size)
        {
            final int k = (int)(sent++ & 1);
            if (rdma)
            {
                send.fields().reset().control(ViplDescriptor.OP_RDMA_WRITE | ViplDescriptor.CONTROL_IMMEDIATE)
                    .segmentCount(size > 0 ? 1 : 0).length(size).immediateData(size)
                    .addressSegment(peerAddress[k], peerHandle[k]);
            }
            else
            {
                send.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(size > 0 ? 1 : 0).length(size);
            }
            if (size > 0)
            {
                send.fields().dataSegment(0, out.address(), out.handle(), size);
            }
            link.vi.postSend(send, link.control);
        }

        void sent()
        {
            take(true, TIMEOUT_MS, "a message sent");
        }

        /** @return the size of the next message, once it arrived. */
        int received()
        {
            final Descriptor d = take(false, TimeUnit.DAYS.toMillis(1), "a message received");
            return rdma ? d.immediateData() : d.length();
        }

        public void close()
        {
            link.close();
        }

        /** The oldest send ({@code send}) or receive once completed, without error, waiting {@code wait}'s way. */
        private Descriptor take(final boolean send, final long timeoutMs, final String what)
        {
            return ViplCompletions.expectDone(ViplCompletions.await(link.vi, link.cq, send, timeoutMs, wait), what);
        }
    }
}
