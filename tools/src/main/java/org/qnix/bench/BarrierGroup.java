package org.qnix.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.CloseHelper;
import org.qnix.abi.ProcessName;
import org.qnix.host.DoorbellWait;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixPeerGoneException;

/**
 * A group of {@code size} processes doing back-to-back QNIX barriers: this JVM as (AI, 0) on the first
 * node and one peer JVM per other member on the next nodes, each looping on its barrier until this
 * process leaves. {@link #barrier()} is one barrier of the whole group.
 *
 * <pre>{@code
 * try (BarrierGroup group = BarrierGroup.start("bench", List.of("0-0", "1-0", "0-1", "1-1"), DoorbellWait.SLEEP))
 * {
 *     group.barrier();
 * }
 * }</pre>
 */
public final class BarrierGroup implements AutoCloseable
{
    private static final long TIMEOUT_S = 60;
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final Qnix qnix;
    private final List<PeerProcess> peers;
    private final int size;
    private final DoorbellWait wait;

    private BarrierGroup(final Qnix qnix, final List<PeerProcess> peers, final DoorbellWait wait)
    {
        this.qnix = qnix;
        this.peers = peers;
        this.size = peers.size() + 1;
        this.wait = wait;
    }

    /** @param nodes one node per member, this JVM's first. */
    public static BarrierGroup start(final String cluster, final List<String> nodes, final DoorbellWait wait)
    {
        final int ai = 0x6000_0000 | (int)(ProcessHandle.current().pid() & 0xF_FFFF) << 8 |
            INSTANCES.incrementAndGet() & 0xFF;
        final List<PeerProcess> peers = new ArrayList<>();
        Qnix qnix = null;
        try
        {
            for (int pi = 1; pi < nodes.size(); pi++)
            {
                peers.add(PeerProcess.launch(Map.of(), "qnix-barrier", cluster, nodes.get(pi), Integer.toString(ai),
                    Integer.toString(pi), Integer.toString(nodes.size()), wait.label()));
            }
            qnix = Qnix.options().name(new ProcessName(ai, 0)).group(ai, nodes.size()).cluster(cluster)
                .node(nodes.get(0)).init();
            for (final PeerProcess peer : peers)
            {
                peer.awaitReady();
            }
            return new BarrierGroup(qnix, peers, wait);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(qnix);
            CloseHelper.quietCloseAll(peers);
            throw ex;
        }
    }

    /** One barrier of the whole group. */
    public void barrier()
    {
        final int context = qnix.groupContext();
        qnix.barrier(context, qnix.name().ai(), size);
        qnix.awaitSend(context, wait, TIMEOUT_S, TimeUnit.SECONDS);
    }

    public int size()
    {
        return size;
    }

    public void close()
    {
        // Leaving breaks the group: the peers' barriers end with PeerGone, and the peers with them.
        CloseHelper.quietClose(qnix);
        CloseHelper.quietCloseAll(peers);
    }

    /** A member in a peer JVM: barriers until the group breaks. */
    static void member(final String cluster, final String node, final int ai, final int pi, final int size,
        final DoorbellWait wait)
    {
        try (Qnix qnix = Qnix.options().name(new ProcessName(ai, pi)).group(ai, size).cluster(cluster).node(node)
            .init())
        {
            BenchPeer.ready();
            while (true)
            {
                final int context = qnix.groupContext();
                qnix.barrier(context, ai, size);
                try
                {
                    qnix.awaitSend(context, wait, TimeUnit.DAYS.toSeconds(1), TimeUnit.SECONDS);
                }
                catch (final QnixPeerGoneException ex)
                {
                    return;
                }
            }
        }
    }
}
