package org.qnix.bench;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.pcicomm.PciBuffer;
import org.qnix.pcicomm.PciComm;
import org.qnix.pcicomm.PciCommException;
import org.qnix.pcicomm.PciConnection;

/**
 * PCIComm (seed 000, issue 15) point-to-point between this JVM, listening on a cid of one node of a
 * running cluster, and a peer JVM connecting from another (api {@code pcicomm}): a {@code send} of the
 * message from one buffer, which the library RDMA-writes into a buffer the peer preposted; the peer
 * echoes the very buffer {@code recv} gave it (zero copy both ways) and preposts it again once
 * {@code sendRecycle} returns it. Each side keeps {@link #PREPOSTED} receive buffers exported, so the
 * next message always finds one (a send would wait for an export otherwise, nothing is dropped).
 *
 * <p>What a round trip costs here beside {@code vipl-rdma}: the export of the preposted buffer (a
 * control message each way per message), and each call's step of the connection under its monitor.
 * {@code recv} and {@code sendRecycle} poll for the cluster's hot window, as the VIPL's waits do, so
 * neither side sleeps while the other answers. Every echoed byte is checked against what was sent; the
 * first bytes carry the round trip's number, so a buffer left from an earlier message fails the check.
 * {@code pcic_send} takes at least one byte: size 0 is sent as one byte. {@code --wait} does not apply
 * (the library polls, then blocks on its own monitor).
 */
public final class PciCommTransport implements LatencyTransport
{
    /** Receive buffers each side keeps preposted. */
    static final int PREPOSTED = 2;
    /** The cids of benchmark pairs start here ("BE" and a number); a taken one is skipped. */
    private static final int CID_BASE = 0x4245_0000;
    private static final int CID_TRIES = 256;
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    static final long TIMEOUT_MS = 60_000;
    /** The peer looks whether its benchmark JVM is gone this often while no message comes. */
    private static final long PEER_POLL_MS = 1_000;

    private final PciConnection connection;
    private final PeerProcess peer;
    private final PciBuffer out;
    private final int maxSize;
    private long roundTrips;

    private PciCommTransport(final PciConnection connection, final PeerProcess peer, final PciBuffer out,
        final int maxSize)
    {
        this.connection = connection;
        this.peer = peer;
        this.out = out;
        this.maxSize = maxSize;
    }

    /**
     * @param node     this JVM's node, e.g. {@code 0-0}, the listener's.
     * @param peerNode the peer's node, the connecting end's.
     */
    public static PciCommTransport start(final String cluster, final String node, final String peerNode,
        final int maxSize)
    {
        final int slot = Math.max(1, maxSize);
        final PciConnection connection = listen(cluster, node);
        try
        {
            prepost(connection, slot, PREPOSTED);
            final PciBuffer out = connection.allocate(slot);
            final UnsafeBuffer bytes = out.buffer();
            for (int i = 0; i < slot; i++)
            {
                bytes.putByte(i, (byte)(i * 31 + 7));
            }
            final PeerProcess peer = connectPeer(connection, "pcicomm", cluster, peerNode, node, Integer.toString(maxSize));
            return new PciCommTransport(connection, peer, out, maxSize);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(connection);
            throw ex;
        }
    }

    /**
     * Launches the peer JVM in {@code mode} on {@code peerNode}, to connect to {@code connection}'s cid on
     * {@code node}, and waits until the connection is up and the peer ready; closes the peer if not.
     *
     * @param more the mode's arguments after the cid.
     */
    static PeerProcess connectPeer(final PciConnection connection, final String mode, final String cluster,
        final String peerNode, final String node, final String... more)
    {
        final String[] args = new String[5 + more.length];
        args[0] = mode;
        args[1] = cluster;
        args[2] = peerNode;
        args[3] = node;
        args[4] = Integer.toString(connection.cid());
        System.arraycopy(more, 0, args, 5, more.length);
        final PeerProcess peer = PeerProcess.launch(Map.of(), args);
        try
        {
            connection.awaitConnected(TIMEOUT_MS);
            peer.awaitReady();
            return peer;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            CloseHelper.quietClose(peer);
            throw new IllegalStateException("interrupted while the pcicomm peer connected", ex);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(peer);
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

    public void roundTrip(final int size)
    {
        final int length = Math.max(1, size);
        final UnsafeBuffer bytes = out.buffer();
        final long number = ++roundTrips;
        // The round trip's number in the first bytes: an echo from a buffer filled earlier differs there.
        for (int i = 0; i < Math.min(Long.BYTES, length); i++)
        {
            bytes.putByte(i, (byte)(number >>> (8 * i)));
        }
        try
        {
            connection.send(out, length);
            final PciBuffer echo = connection.recv(TIMEOUT_MS);
            if (null == echo)
            {
                throw new IllegalStateException("pcicomm: no echo of " + length + " bytes in " + TIMEOUT_MS + " ms");
            }
            check(echo, length);
            connection.prepostRecv(echo, echo.capacity());
            if (out != connection.sendRecycle(TIMEOUT_MS))
            {
                throw new IllegalStateException("pcicomm: the sent buffer did not come back from sendRecycle");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("pcicomm: interrupted in a round trip", ex);
        }
    }

    public void close()
    {
        // The disconnect ends the peer's recv with PEER_DISCONNECTED: it closes its end and exits.
        CloseHelper.quietCloseAll(connection, peer);
    }

    /** The echo side, in the peer JVM: connects from {@code node} to the benchmark JVM's cid. */
    static void echo(final String cluster, final String node, final String listenerNode, final int cid,
        final int maxSize) throws InterruptedException
    {
        try (PciConnection connection = connect(cluster, node, listenerNode, cid))
        {
            prepost(connection, Math.max(1, maxSize), PREPOSTED);
            BenchPeer.ready();
            while (true)
            {
                final PciBuffer message = nextMessage(connection);
                if (null == message)
                {
                    return;
                }
                // Back from the buffer it landed in: no copy on this side either.
                connection.send(message, message.length());
                final PciBuffer sent = connection.sendRecycle(TIMEOUT_MS);
                if (null == sent)
                {
                    throw new IllegalStateException("pcicomm peer: the echo was not written in " + TIMEOUT_MS + " ms");
                }
                connection.prepostRecv(sent, sent.capacity());
            }
        }
    }

    /** @return a listening connection on the first cid of {@link #CID_BASE} on that no other pair holds. */
    static PciConnection listen(final String cluster, final String node)
    {
        for (int i = 0; i < CID_TRIES; i++)
        {
            final int cid = CID_BASE + (INSTANCES.incrementAndGet() & 0xFFFF);
            try
            {
                return PciComm.options().cluster(cluster).listen(node, cid);
            }
            catch (final PciCommException ex)
            {
                if (PciCommException.Reason.CID_TAKEN != ex.reason())
                {
                    throw ex;
                }
            }
        }
        throw new IllegalStateException("pcicomm: " + CID_TRIES + " cids from 0x" + Integer.toHexString(CID_BASE) +
            " on node " + node + " are all taken");
    }

    /**
     * The peer's next message, waiting in {@code PEER_POLL_MS} slices.
     *
     * @return null once the benchmark JVM disconnected, died, or left this peer orphaned: the peer ends.
     */
    static PciBuffer nextMessage(final PciConnection connection) throws InterruptedException
    {
        while (true)
        {
            final PciBuffer message;
            try
            {
                message = connection.recv(PEER_POLL_MS);
            }
            catch (final PciCommException ex)
            {
                return null;
            }
            if (null != message || BenchPeer.orphaned())
            {
                return message;
            }
        }
    }

    /** The peer's end: from {@code node} to the benchmark JVM's cid. */
    static PciConnection connect(final String cluster, final String node, final String listenerNode, final int cid)
    {
        return PciComm.options().cluster(cluster).localNode(node).connectTimeoutMs(TIMEOUT_MS)
            .connect(listenerNode, cid);
    }

    /** Allocates {@code count} buffers of {@code slot} bytes and preposts each whole. */
    static void prepost(final PciConnection connection, final int slot, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final PciBuffer in = connection.allocate(slot);
            connection.prepostRecv(in, in.capacity());
        }
    }

    /** Every byte of the echo against the sent buffer, eight at a time. */
    private void check(final PciBuffer echo, final int length)
    {
        if (echo.length() != length)
        {
            throw new IllegalStateException("pcicomm: an echo of " + echo.length() + " bytes for " + length + " sent");
        }
        final UnsafeBuffer got = echo.buffer();
        final UnsafeBuffer sent = out.buffer();
        int i = 0;
        for (; i + Long.BYTES <= length; i += Long.BYTES)
        {
            if (got.getLong(i) != sent.getLong(i))
            {
                break;
            }
        }
        for (; i < length; i++)
        {
            if (got.getByte(i) != sent.getByte(i))
            {
                throw new IllegalStateException("pcicomm: byte " + i + " of round trip " + roundTrips + " (" + length +
                    " bytes) came back as " + got.getByte(i) + ", sent " + sent.getByte(i));
            }
        }
    }
}
