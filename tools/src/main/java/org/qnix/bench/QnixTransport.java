package org.qnix.bench;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.CloseHelper;
import org.qnix.abi.ProcessName;
import org.qnix.host.DoorbellWait;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixPeerGoneException;
import org.qnix.lib.ReceiveStatus;

/**
 * QNIX point-to-point between this JVM, registered as (AI, 0) on one node of a running cluster, and a
 * peer JVM registered as (AI, 1) on another: a Receive posted first, then Send_Short up to the short
 * threshold and Send above it (or Send for every size), zero-copy from and into locked buffers; the
 * peer echoes. Both programs wait on their doorbells the same way: busy, yield, backoff or sleep
 * ({@link DoorbellWait}).
 */
public final class QnixTransport implements LatencyTransport
{
    private static final int TAG = 77;
    private static final long TIMEOUT_S = 60;
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final Qnix qnix;
    private final QnixBuffer out;
    private final QnixBuffer in;
    private final ProcessName peerName;
    private final PeerProcess peer;
    private final DoorbellWait wait;
    private final boolean useShort;
    private final int maxSize;
    private final ReceiveStatus status = new ReceiveStatus();

    private QnixTransport(final Qnix qnix, final QnixBuffer out, final QnixBuffer in, final PeerProcess peer,
        final DoorbellWait wait, final boolean useShort, final int maxSize)
    {
        this.useShort = useShort;
        this.qnix = qnix;
        this.out = out;
        this.in = in;
        this.peerName = new ProcessName(qnix.name().ai(), 1);
        this.peer = peer;
        this.wait = wait;
        this.maxSize = maxSize;
    }

    /**
     * @param cluster  a cluster that is up.
     * @param node     this JVM's node, e.g. {@code 0-0}.
     * @param peerNode the peer's node.
     * @param wait     how both programs wait on their doorbells.
     * @param useShort true to send messages up to the short threshold with Send_Short, false to use Send
     *                 for every size.
     */
    public static QnixTransport start(final String cluster, final String node, final String peerNode,
        final DoorbellWait wait, final boolean useShort, final int maxSize)
    {
        // A name of its own per transport: a previous one's peer may still be de-registering.
        final int ai = 0x4000_0000 | (int)(ProcessHandle.current().pid() & 0xF_FFFF) << 8 |
            INSTANCES.incrementAndGet() & 0xFF;
        final PeerProcess peer = PeerProcess.launch(Map.of(), "qnix", cluster, peerNode, Integer.toString(ai),
            wait.label(), Integer.toString(maxSize), useShort ? "short" : "send");
        Qnix qnix = null;
        QnixBuffer out = null;
        QnixBuffer in = null;
        try
        {
            // Returns once the peer has registered too: the group is the two of them.
            qnix = Qnix.options().name(new ProcessName(ai, 0)).group(ai, 2).cluster(cluster).node(node).init();
            out = qnix.allocateBuffer(Math.max(1, maxSize));
            in = qnix.allocateBuffer(Math.max(1, maxSize));
            out.lock();
            in.lock();
            peer.awaitReady();
            return new QnixTransport(qnix, out, in, peer, wait, useShort, maxSize);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(out, in, qnix, peer);
            throw ex;
        }
    }

    public String name()
    {
        return apiName(useShort ? "qnix" : "qnix-send", wait);
    }

    /**
     * @param api qnix or qnix-send.
     * @return how reports name QNIX measured with this doorbell wait: {@code qnix} when sleeping (the
     * default), {@code qnix-busy} and so on otherwise.
     */
    public static String apiName(final String api, final DoorbellWait wait)
    {
        return DoorbellWait.SLEEP == wait ? api : api + "-" + wait.label();
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void roundTrip(final int size)
    {
        final int rx = qnix.recvContext(peerName, TAG, true, in, 0, size);
        qnix.receive(rx);
        final int tx = send(qnix, peerName, out, size, useShort);
        qnix.awaitSend(tx, wait, TIMEOUT_S, TimeUnit.SECONDS);
        qnix.awaitReceive(rx, status, wait, TIMEOUT_S, TimeUnit.SECONDS);
    }

    private static int send(final Qnix qnix, final ProcessName to, final QnixBuffer out, final int size,
        final boolean useShort)
    {
        if (useShort && size <= qnix.parameters().shortThreshold())
        {
            final int tx = qnix.sendContextShort(to, TAG, true, out.buffer(), 0, size);
            qnix.sendShort(tx);
            return tx;
        }
        final int tx = qnix.sendContext(to, TAG, true, out, 0, size);
        qnix.send(tx);
        return tx;
    }

    public void close()
    {
        // De-registering ends the peer's posted receive with PeerGone, and the peer with it.
        CloseHelper.quietCloseAll(out, in, qnix);
        peer.close();
    }

    /**
     * The echo side, in the peer JVM, registered as (ai, 1). Like the VIPL echo ({@link ViplTransport}),
     * it posts the receive for the next message before it sends the reply, into the other of two
     * buffers, so that the next message always finds its receive posted and the two APIs are measured
     * with the same loop.
     */
    static void echo(final String cluster, final String node, final int ai, final DoorbellWait wait, final int maxSize,
        final boolean useShort)
    {
        try (Qnix qnix = Qnix.options().name(new ProcessName(ai, 1)).group(ai, 2).cluster(cluster).node(node).init();
             QnixBuffer first = qnix.allocateBuffer(Math.max(1, maxSize));
             QnixBuffer second = qnix.allocateBuffer(Math.max(1, maxSize)))
        {
            first.lock();
            second.lock();
            final QnixBuffer[] buffers = {first, second};
            final ProcessName pinger = new ProcessName(ai, 0);
            final ReceiveStatus status = new ReceiveStatus();
            int k = 0;
            int rx = qnix.recvContext(pinger, TAG, true, buffers[k], 0, maxSize);
            qnix.receive(rx);
            BenchPeer.ready();
            while (true)
            {
                try
                {
                    qnix.awaitReceive(rx, status, wait, TimeUnit.DAYS.toSeconds(1), TimeUnit.SECONDS);
                }
                catch (final QnixPeerGoneException ex)
                {
                    return;
                }
                final QnixBuffer received = buffers[k];
                k ^= 1;
                rx = qnix.recvContext(pinger, TAG, true, buffers[k], 0, maxSize);
                qnix.receive(rx);
                final int tx = send(qnix, pinger, received, (int)status.length(), useShort);
                qnix.awaitSend(tx, wait, TIMEOUT_S, TimeUnit.SECONDS);
            }
        }
    }
}
