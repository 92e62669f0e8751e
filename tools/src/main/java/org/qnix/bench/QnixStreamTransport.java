package org.qnix.bench;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ProcessName;
import org.qnix.host.DoorbellWait;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixPeerGoneException;
import org.qnix.lib.ReceiveStatus;

/**
 * Bandwidth of QNIX Send between two nodes, as the Stream example measures it: the peer keeps
 * {@code window} receives posted into locked buffers, this JVM keeps {@code window} sends in flight
 * from one locked buffer, zero-copy on both sides; each stream starts with a Send_Short telling the
 * peer its shape and the peer's answer that its receives are posted, and ends with its acknowledgement
 * of the last message.
 */
public final class QnixStreamTransport implements BandwidthTransport
{
    private static final int CONTROL = 1;
    private static final int DATA = 2;
    private static final int ACK = 3;
    private static final long TIMEOUT_S = 120;
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final Qnix qnix;
    private final QnixBuffer out;
    private final QnixBuffer small;
    private final ProcessName peerName;
    private final PeerProcess peer;
    private final DoorbellWait wait;
    private final int maxSize;
    private final int maxWindow;
    private final ReceiveStatus status = new ReceiveStatus();
    private final UnsafeBuffer control = new UnsafeBuffer(new byte[3 * Integer.BYTES]);
    private final int[] inFlight;

    private QnixStreamTransport(final Qnix qnix, final QnixBuffer out, final QnixBuffer small, final PeerProcess peer,
        final DoorbellWait wait, final int maxSize, final int maxWindow)
    {
        this.qnix = qnix;
        this.out = out;
        this.small = small;
        this.peerName = new ProcessName(qnix.name().ai(), 1);
        this.peer = peer;
        this.wait = wait;
        this.maxSize = maxSize;
        this.maxWindow = maxWindow;
        this.inFlight = new int[maxWindow];
    }

    /**
     * @param maxWindow the largest window a stream will use; the peer allocates that many buffers of
     *                  {@code maxSize} bytes, and it must leave a Send and a Receive Context free.
     */
    public static QnixStreamTransport start(final String cluster, final String node, final String peerNode,
        final DoorbellWait wait, final int maxSize, final int maxWindow)
    {
        final int ai = 0x5000_0000 | (int)(ProcessHandle.current().pid() & 0xF_FFFF) << 8 |
            INSTANCES.incrementAndGet() & 0xFF;
        final PeerProcess peer = PeerProcess.launch(Map.of(), "qnix-sink", cluster, peerNode, Integer.toString(ai),
            wait.label(), Integer.toString(maxSize), Integer.toString(maxWindow));
        Qnix qnix = null;
        QnixBuffer out = null;
        QnixBuffer small = null;
        try
        {
            qnix = Qnix.options().name(new ProcessName(ai, 0)).group(ai, 2).cluster(cluster).node(node).init();
            if (maxWindow < 1 || maxWindow > qnix.parameters().contextsPerProcess() - 1)
            {
                throw new IllegalArgumentException("window " + maxWindow + " is outside [1, " +
                    (qnix.parameters().contextsPerProcess() - 1) + "] (M - 1 contexts)");
            }
            out = qnix.allocateBuffer(Math.max(1, maxSize));
            small = qnix.allocateBuffer(64);
            out.lock();
            small.lock();
            peer.awaitReady();
            return new QnixStreamTransport(qnix, out, small, peer, wait, maxSize, maxWindow);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(out, small, qnix, peer);
            throw ex;
        }
    }

    public String name()
    {
        return QnixTransport.apiName("qnix", wait);
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void stream(final int size, final int messages, final int window)
    {
        if (window < 1 || window > maxWindow)
        {
            throw new IllegalArgumentException("window " + window + " is outside [1, " + maxWindow + "]");
        }
        final int ready = qnix.recvContext(peerName, CONTROL, true, small, 0, 0);
        qnix.receive(ready);
        control.putInt(0, size);
        control.putInt(Integer.BYTES, messages);
        control.putInt(2 * Integer.BYTES, window);
        complete(sendShort(qnix, peerName, CONTROL, control, 3 * Integer.BYTES));
        await(ready);

        final int ack = qnix.recvContext(peerName, ACK, true, small, 0, 0);
        qnix.receive(ack);
        for (int m = 0; m < messages; m++)
        {
            final int slot = m % window;
            if (m >= window)
            {
                complete(inFlight[slot]);
            }
            inFlight[slot] = qnix.sendContext(peerName, DATA, true, out, 0, size);
            qnix.send(inFlight[slot]);
        }
        for (int m = Math.max(0, messages - window); m < messages; m++)
        {
            complete(inFlight[m % window]);
        }
        await(ack);
    }

    private void complete(final int sendContext)
    {
        qnix.awaitSend(sendContext, wait, TIMEOUT_S, TimeUnit.SECONDS);
    }

    private void await(final int receiveContext)
    {
        qnix.awaitReceive(receiveContext, status, wait, TIMEOUT_S, TimeUnit.SECONDS);
    }

    private static int sendShort(final Qnix qnix, final ProcessName to, final int tag, final UnsafeBuffer data,
        final int length)
    {
        final int tx = qnix.sendContextShort(to, tag, true, data, 0, length);
        qnix.sendShort(tx);
        return tx;
    }

    public void close()
    {
        CloseHelper.quietCloseAll(out, small, qnix);
        peer.close();
    }

    /** The receiving side, in the peer JVM, registered as (ai, 1). */
    static void sink(final String cluster, final String node, final int ai, final DoorbellWait wait, final int maxSize,
        final int maxWindow)
    {
        final QnixBuffer[] in = new QnixBuffer[maxWindow];
        try (Qnix qnix = Qnix.options().name(new ProcessName(ai, 1)).group(ai, 2).cluster(cluster).node(node).init();
             QnixBuffer small = qnix.allocateBuffer(64))
        {
            small.lock();
            for (int w = 0; w < maxWindow; w++)
            {
                in[w] = qnix.allocateBuffer(Math.max(1, maxSize));
                in[w].lock();
            }
            final ProcessName sender = new ProcessName(ai, 0);
            final ReceiveStatus status = new ReceiveStatus();
            final int[] posted = new int[maxWindow];
            final UnsafeBuffer empty = new UnsafeBuffer(new byte[1]);
            BenchPeer.ready();
            while (true)
            {
                final int control = qnix.recvContext(sender, CONTROL, true, small, 0, 64);
                qnix.receive(control);
                try
                {
                    qnix.awaitReceive(control, status, wait, TimeUnit.DAYS.toSeconds(1), TimeUnit.SECONDS);
                }
                catch (final QnixPeerGoneException ex)
                {
                    return;
                }
                final int size = small.buffer().getInt(0);
                final int messages = small.buffer().getInt(Integer.BYTES);
                final int window = small.buffer().getInt(2 * Integer.BYTES);
                if (size < 0 || size > maxSize || messages < 0 || window < 1 || window > maxWindow)
                {
                    throw new IllegalStateException("stream of " + messages + " x " + size + " window " + window);
                }
                for (int m = 0; m < Math.min(window, messages); m++)
                {
                    posted[m] = qnix.recvContext(sender, DATA, true, in[m], 0, size);
                    qnix.receive(posted[m]);
                }
                qnix.awaitSend(sendShort(qnix, sender, CONTROL, empty, 0), wait, TIMEOUT_S, TimeUnit.SECONDS);
                for (int m = 0; m < messages; m++)
                {
                    final int slot = m % window;
                    qnix.awaitReceive(posted[slot], status, wait, TIMEOUT_S, TimeUnit.SECONDS);
                    if (m + window < messages)
                    {
                        posted[slot] = qnix.recvContext(sender, DATA, true, in[slot], 0, size);
                        qnix.receive(posted[slot]);
                    }
                }
                qnix.awaitSend(sendShort(qnix, sender, ACK, empty, 0), wait, TIMEOUT_S, TimeUnit.SECONDS);
            }
        }
        finally
        {
            CloseHelper.quietCloseAll(in);
        }
    }
}
