package org.qnix.bench;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.CloseHelper;
import org.qnix.abi.ViplDescriptor;
import org.qnix.examples.ViplCompletions;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ViplException;

/**
 * Bandwidth of VIPL Send between two nodes, as the ViplStream example measures it: the peer keeps
 * {@code maxWindow} receives posted into registered memory and gives credits back as it takes and
 * re-posts them (a send with no data whose immediate data is the count, every half window); this JVM
 * keeps up to {@code window} sends in flight from one registered buffer, while it holds credits. The
 * last message of a stream carries a mark in its immediate data, and the peer's credit for it is the
 * stream's acknowledgement. Both sides take their completions from a CQ ({@code VipCQWait}: spin,
 * then sleep, as QNIX's stream waits by default).
 */
public final class ViplStreamTransport implements BandwidthTransport
{
    private static final long TIMEOUT_MS = 120_000;
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /** Immediate data: on a data message, the last of its stream; on a credit, its acknowledgement. */
    private static final int LAST = 0x4000_0000;
    private static final int DESCRIPTOR = 64;
    /** The most receives the peer keeps posted: its credit descriptors must fit the control memory too. */
    public static final int MAX_WINDOW = 64;

    private final ViplLink link;
    private final MemoryRegion out;
    private final PeerProcess peer;
    private final int maxSize;
    private final int maxWindow;
    /** The send descriptors, one per message in flight: made once, so that a stream allocates nothing. */
    private final Descriptor[] sends;
    private int credits;

    private ViplStreamTransport(final ViplLink link, final MemoryRegion out, final PeerProcess peer, final int maxSize,
        final int maxWindow)
    {
        this.link = link;
        this.out = out;
        this.peer = peer;
        this.maxSize = maxSize;
        this.maxWindow = maxWindow;
        this.credits = maxWindow;
        this.sends = new Descriptor[maxWindow];
        for (int k = 0; k < maxWindow; k++)
        {
            sends[k] = link.descriptor(k * DESCRIPTOR);
        }
    }

    /** @param maxWindow the largest window a stream will use: the peer keeps that many receives posted. */
    public static ViplStreamTransport start(final String cluster, final String node, final String peerNode,
        final int maxSize, final int maxWindow)
    {
        if (maxWindow < 1 || maxWindow > MAX_WINDOW)
        {
            throw new IllegalArgumentException("window " + maxWindow + " is outside [1, " + MAX_WINDOW + "]");
        }
        final byte[] discriminator = ViplLink.discriminator("bw", INSTANCES.incrementAndGet());
        ViplLink link = null;
        PeerProcess peer = null;
        try
        {
            link = ViplLink.open(cluster, node, maxSize, false, 4 * (maxWindow + 1));
            final MemoryRegion out = link.register(maxSize, false);
            final ViplLink server = link;
            for (int k = 0; k <= maxWindow; k++)
            {
                postCreditReceive(server, server.descriptor((MAX_WINDOW + k) * DESCRIPTOR));
            }
            peer = PeerProcess.launch(Map.of(), "vipl-sink", cluster, peerNode, node,
                new String(discriminator, StandardCharsets.US_ASCII), Integer.toString(maxSize),
                Integer.toString(maxWindow));
            link.accept(discriminator);
            peer.awaitReady();
            return new ViplStreamTransport(link, out, peer, maxSize, maxWindow);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(link, peer);
            throw ex;
        }
    }

    public String name()
    {
        return "vipl";
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
        int sent = 0;
        int completed = 0;
        boolean acknowledged = false;
        while (completed < messages || !acknowledged)
        {
            while (credits > 0 && sent < messages && sent - completed < window)
            {
                final Descriptor d = sends[sent % window];
                d.fields().reset().control(ViplDescriptor.OP_SEND | ViplDescriptor.CONTROL_IMMEDIATE)
                    .segmentCount(1).length(size).immediateData(sent + 1 == messages ? LAST : 0)
                    .dataSegment(0, out.address(), out.handle(), size);
                link.vi.postSend(d, link.control);
                sent++;
                credits--;
            }
            final CompletionQueue.Completion c = link.cq.await(TIMEOUT_MS);
            if (c.sendQueue())
            {
                ViplCompletions.expectDone(link.vi.sendDone(), "a message sent");
                completed++;
            }
            else
            {
                final Descriptor credit = ViplCompletions.expectDone(link.vi.recvDone(), "a credit received");
                credits += credit.immediateData() & ~LAST;
                acknowledged = 0 != (credit.immediateData() & LAST);
                postCreditReceive(link, credit);
            }
        }
    }

    public void close()
    {
        CloseHelper.quietCloseAll(link, peer);
    }

    /** The receiving side, in the peer JVM: the client of the benchmark JVM's VI. */
    static void sink(final String cluster, final String node, final String serverNode, final byte[] discriminator,
        final int maxSize, final int maxWindow)
    {
        try (ViplLink link = ViplLink.open(cluster, node, maxSize, false, 4 * (maxWindow + 1)))
        {
            final int slot = (Math.max(1, maxSize) + DESCRIPTOR - 1) / DESCRIPTOR * DESCRIPTOR;
            final MemoryRegion[] areas = new MemoryRegion[maxWindow];
            for (int k = 0; k < maxWindow; k++)
            {
                areas[k] = link.register(slot, false);
            }
            final Descriptor[] receives = new Descriptor[maxWindow];
            final Descriptor[] creditSends = new Descriptor[maxWindow + 1];
            for (int k = 0; k < maxWindow; k++)
            {
                receives[k] = link.descriptor(k * DESCRIPTOR);
                postReceive(link, receives[k], areas[k], slot);
            }
            for (int k = 0; k <= maxWindow; k++)
            {
                creditSends[k] = link.descriptor((MAX_WINDOW + k) * DESCRIPTOR);
            }
            link.request(serverNode, discriminator);
            BenchPeer.ready();
            final int batch = Math.max(1, maxWindow / 2);
            long received = 0;
            int credits = 0;
            long creditsSent = 0;
            long creditsCompleted = 0;
            while (true)
            {
                final CompletionQueue.Completion c;
                try
                {
                    c = link.cq.await(TimeUnit.DAYS.toMillis(1));
                    if (c.sendQueue())
                    {
                        ViplCompletions.expectDone(link.vi.sendDone(), "a credit sent");
                        creditsCompleted++;
                        continue;
                    }
                    final int k = (int)(received++ % maxWindow);
                    final Descriptor d = ViplCompletions.expectDone(link.vi.recvDone(), "a message received");
                    final boolean last = 0 != (d.immediateData() & LAST);
                    postReceive(link, receives[k], areas[k], slot);
                    credits++;
                    if (credits >= batch || last)
                    {
                        if (creditsSent - creditsCompleted == creditSends.length)
                        {
                            throw new IllegalStateException("every credit descriptor is still posted");
                        }
                        final Descriptor credit = creditSends[(int)(creditsSent++ % creditSends.length)];
                        credit.fields().reset().control(ViplDescriptor.OP_SEND | ViplDescriptor.CONTROL_IMMEDIATE)
                            .segmentCount(0).length(0).immediateData(credits | (last ? LAST : 0));
                        link.vi.postSend(credit, link.control);
                        credits = 0;
                    }
                }
                catch (final ViplException | IllegalStateException ex)
                {
                    return; // the benchmark closed its NIC: what was posted completed flushed
                }
            }
        }
    }

    private static void postReceive(final ViplLink link, final Descriptor d, final MemoryRegion area, final int slot)
    {
        d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, area.address(), area.handle(), slot);
        link.vi.postRecv(d, link.control);
    }

    private static void postCreditReceive(final ViplLink link, final Descriptor d)
    {
        d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0);
        link.vi.postRecv(d, link.control);
    }
}
