package org.qnix.bench;


import org.agrona.CloseHelper;
import org.qnix.pcicomm.PciBuffer;
import org.qnix.pcicomm.PciCommException;
import org.qnix.pcicomm.PciConnection;

/**
 * Bandwidth of PCIComm (seed 000, issue 15) between two nodes: this JVM listens and streams, keeping up
 * to {@code window} sends in flight from as many buffers of its own, taking one back from
 * {@code sendRecycle} (in sending order) before it reuses it; the peer keeps {@code maxWindow} buffers
 * preposted and preposts each again as soon as {@code recv} returns it. Flow control is PCIComm's own:
 * a send waits for the peer to export room. Each message fills one preposted buffer (a send starts a new
 * one); the first byte of the last message of a stream is {@link #LAST}, and the peer answers it with a
 * one-byte send, the stream's acknowledgement.
 */
public final class PciCommStreamTransport implements BandwidthTransport
{
    /** The most sends in flight, and the buffers the peer keeps preposted. */
    public static final int MAX_WINDOW = 64;
    private static final byte LAST = 1;
    private static final long TIMEOUT_MS = 120_000;

    private final PciConnection connection;
    private final PeerProcess peer;
    private final PciBuffer[] out;
    private final int maxSize;

    private PciCommStreamTransport(final PciConnection connection, final PeerProcess peer, final PciBuffer[] out,
        final int maxSize)
    {
        this.connection = connection;
        this.peer = peer;
        this.out = out;
        this.maxSize = maxSize;
    }

    /** @param maxWindow the largest window a stream will use: the buffers sent from, and the peer's preposted. */
    public static PciCommStreamTransport start(final String cluster, final String node, final String peerNode,
        final int maxSize, final int maxWindow)
    {
        if (maxWindow < 1 || maxWindow > MAX_WINDOW)
        {
            throw new IllegalArgumentException("window " + maxWindow + " is outside [1, " + MAX_WINDOW + "]");
        }
        final PciConnection connection = PciCommTransport.listen(cluster, node);
        try
        {
            // The acknowledgements' receives, exported before the peer can answer a stream.
            PciCommTransport.prepost(connection, 1, PciCommTransport.PREPOSTED);
            final PciBuffer[] out = new PciBuffer[maxWindow];
            for (int k = 0; k < maxWindow; k++)
            {
                out[k] = connection.allocate(maxSize);
                out[k].buffer().setMemory(0, maxSize, (byte)0);
            }
            final PeerProcess peer = PciCommTransport.connectPeer(connection, "pcicomm-sink", cluster, peerNode, node,
                Integer.toString(maxSize), Integer.toString(maxWindow));
            return new PciCommStreamTransport(connection, peer, out, maxSize);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(connection);
            throw ex;
        }
    }

    public String name()
    {
        return "pcicomm";
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void stream(final int size, final int messages, final int window)
    {
        if (window < 1 || window > out.length)
        {
            throw new IllegalArgumentException("window " + window + " is outside [1, " + out.length + "]");
        }
        try
        {
            for (int k = 0; k < messages; k++)
            {
                if (k >= window)
                {
                    // The oldest in flight, message k - window: sendRecycle returns buffers in sending order.
                    recycle();
                }
                final PciBuffer b = out[k % window];
                b.buffer().putByte(0, k + 1 == messages ? LAST : 0);
                connection.send(b, size);
            }
            for (int k = Math.max(0, messages - window); k < messages; k++)
            {
                recycle();
            }
            final PciBuffer ack = connection.recv(TIMEOUT_MS);
            if (null == ack)
            {
                throw new IllegalStateException("pcicomm: no acknowledgement of a stream in " + TIMEOUT_MS + " ms");
            }
            connection.prepostRecv(ack, ack.capacity());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("pcicomm: interrupted in a stream", ex);
        }
    }

    public void close()
    {
        CloseHelper.quietCloseAll(connection, peer);
    }

    /** The receiving side, in the peer JVM: connects from {@code node} to the benchmark JVM's cid. */
    static void sink(final String cluster, final String node, final String listenerNode, final int cid,
        final int maxSize, final int maxWindow) throws InterruptedException
    {
        try (PciConnection connection = PciCommTransport.connect(cluster, node, listenerNode, cid))
        {
            final PciBuffer ack = connection.allocate(1);
            PciCommTransport.prepost(connection, maxSize, maxWindow);
            BenchPeer.ready();
            while (true)
            {
                final PciBuffer message = PciCommTransport.nextMessage(connection);
                if (null == message)
                {
                    return;
                }
                final boolean last = LAST == message.buffer().getByte(0);
                connection.prepostRecv(message, message.capacity());
                if (last)
                {
                    connection.send(ack, 1);
                    if (ack != connection.sendRecycle(TIMEOUT_MS))
                    {
                        throw new IllegalStateException("pcicomm sink: the acknowledgement was not written in " +
                            TIMEOUT_MS + " ms");
                    }
                }
            }
        }
    }

    private void recycle() throws InterruptedException
    {
        if (null == connection.sendRecycle(TIMEOUT_MS))
        {
            throw new IllegalStateException("pcicomm: the peer exported no room in " + TIMEOUT_MS + " ms");
        }
    }
}
