package org.qnix.tools;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplDescriptor;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplAddress;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * One of the 8 processes of {@link ViplStressTest}, launched by {@code qnix run} (rank in
 * {@code QNIX_PI}, node in {@code QNIX_NODE}). Ranks 0-3 are clients, rank r paired with server
 * {@code 4 + (r + 1) % 4} on the next node. A pair holds three VIs, one per reliability level, and
 * plays {@code args[1]} rounds of ping-pong: each message goes on a random one of the three VIs, as a
 * send, a send with immediate data or an RDMA write with immediate data into the peer's slot for that
 * VI, of a random size up to {@link #MAX} bytes. The choices come from generators seeded with
 * {@code args[0]} and the pair, the sender's and the receiver's alike, so the receiver knows exactly
 * which message must come next, on which VI, how long, and with which bytes: a lost, repeated,
 * misplaced or corrupted message fails the process.
 *
 * <p>Before every message it sends, a process has reposted the receive it consumed: that post is
 * before the send on its own Command Queue, so its NIC has it before the peer can answer.
 */
public final class ViplStressWorker
{
    static final int MAX = 256 * 1024;
    private static final long TIMEOUT_MS = 60_000;
    private static final Reliability[] LEVELS = Reliability.values();
    private static final int SEND = 0;
    private static final int SEND_IMMEDIATE = 1;
    private static final int RDMA_IMMEDIATE = 2;

    // Data memory: per VI a receive buffer and an RDMA slot, then the send buffer, then the hello.
    private static final int RECEIVE_AT = 0;
    private static final int SLOT_AT = 3 * MAX;
    private static final int SEND_AT = 6 * MAX;
    private static final int HELLO_AT = 7 * MAX;
    private static final int MEMORY = 7 * MAX + 4096;

    private final ViplNic nic;
    private final ViplMemory memory;
    private final MemoryRegion region;
    private final ViplMemory descriptorMemory;
    private final MemoryRegion descriptorRegion;
    private final CompletionQueue cq;
    private final Vi[] vis = new Vi[LEVELS.length];
    private final Descriptor[] receives = new Descriptor[LEVELS.length];
    private final Descriptor send;
    private final long[] peerSlot = new long[LEVELS.length];
    private int peerHandle;
    private long bytes;
    private int rank;
    /** Sends and receives this process's library took back, per VI: to set beside the NIC's counts. */
    private final int[] sendsTaken = new int[LEVELS.length];
    private final int[] receivesTaken = new int[LEVELS.length];

    private ViplStressWorker(final ViplNic nic)
    {
        this.nic = nic;
        final ProtectionTag ptag = nic.createPtag();
        memory = nic.allocate(MEMORY);
        region = nic.registerMem(memory, 0, MEMORY, new MemoryAttributes(ptag, true, false));
        descriptorMemory = nic.allocate(8192);
        descriptorRegion = nic.registerMem(descriptorMemory, 0, 8192, new MemoryAttributes(ptag, false, false));
        cq = nic.createCq(64);
        for (int l = 0; l < LEVELS.length; l++)
        {
            vis[l] = nic.createVi(new ViAttributes(LEVELS[l], MAX, ptag, true, false), null, cq);
            receives[l] = descriptorMemory.descriptor(l * 256);
            postReceive(l);
        }
        send = descriptorMemory.descriptor(1024);
    }

    public static void main(final String[] args) throws Exception
    {
        final long seed = Long.parseLong(args[0]);
        final int rounds = Integer.parseInt(args[1]);
        final int rank = Integer.parseInt(System.getenv("QNIX_PI"));
        final boolean client = rank < 4;
        final int clientRank = client ? rank : (rank - 1) % 4;
        final int partner = client ? 4 + (rank + 1) % 4 : clientRank;
        try (ViplNic nic = Vipl.openNic(System.getenv("QNIX_NODE"), System.getenv("QNIX_CLUSTER")))
        {
            final int width = nic.parameters().torusWidth();
            if (!nic.node().equals(NicCoordinates.ofIndex(rank % 4, width)))
            {
                throw new IllegalStateException("rank " + rank + " placed on " + nic.node());
            }
            final ViplStressWorker w = new ViplStressWorker(nic);
            for (int l = 0; l < LEVELS.length; l++)
            {
                final byte[] key = ("st" + clientRank + "-" + l).getBytes(StandardCharsets.US_ASCII);
                if (client)
                {
                    nic.connectRequest(w.vis[l], new ViplAddress(NicCoordinates.ofIndex(partner % 4, width), key),
                        TIMEOUT_MS);
                }
                else
                {
                    nic.connectWait(key, TIMEOUT_MS).accept(w.vis[l]);
                }
            }
            // Each side tells the other where its RDMA slots are, the client first.
            if (client)
            {
                w.sendHello();
                w.awaitHello();
            }
            else
            {
                w.awaitHello();
                w.sendHello();
            }
            final SplittableRandom clientChoices = new SplittableRandom(seed * 31 + clientRank);
            final SplittableRandom serverChoices = new SplittableRandom(seed * 37 + clientRank + 1000);
            int received = 0;
            w.rank = rank;
            try
            {
                for (int k = 0; k < rounds; k++)
                {
                    if (client)
                    {
                        w.sendMessage(clientChoices, seed, rank, k);
                        w.receiveMessage(serverChoices, seed, partner, k);
                    }
                    else
                    {
                        w.receiveMessage(clientChoices, seed, partner, k);
                        w.sendMessage(serverChoices, seed, rank, k);
                    }
                    received++;
                }
            }
            catch (final RuntimeException ex)
            {
                w.describe(rank);
                throw ex;
            }
            for (final Vi vi : w.vis)
            {
                vi.disconnect();
            }
            System.out.println("OK stress rank " + rank + ": " + received + " messages from rank " + partner +
                " received once each, in order, " + w.bytes + " bytes checked");
        }
    }

    /**
     * What this process's VIs, its descriptors and the NICs' VI tables say, for a failure's report: a
     * descriptor done that the library did not take back, counts of the NIC beside the library's.
     */
    private void describe(final int rank)
    {
        for (final Vi vi : vis)
        {
            System.out.println("rank " + rank + " VI " + vi.index() + ": " + vi.query());
        }
        final ClusterDirectory dir = ClusterDirectory.of(System.getenv("QNIX_CLUSTER"));
        for (final ClusterStatus.ViplVi v : ClusterStatus.read(dir).vipl().vis())
        {
            System.out.println("rank " + rank + " sees " + v);
        }
        for (int l = 0; l < LEVELS.length; l++)
        {
            System.out.println("rank " + rank + " VI " + vis[l].index() + " took back " + sendsTaken[l] + " sends, " +
                receivesTaken[l] + " receives");
        }
        System.out.println("rank " + rank + " send descriptor status 0x" + Integer.toHexString(send.status()) +
            " length " + send.length() + " control " + send.fields().control());
        for (int l = 0; l < LEVELS.length; l++)
        {
            System.out.println("rank " + rank + " receive " + l + " status 0x" + Integer.toHexString(receives[l].status()));
        }
        final ClusterParameters params = nic.parameters();
        final NicSdramLayout layout = new NicSdramLayout(params);
        for (int n = 0; n < params.nodeCount(); n++)
        {
            final NicCoordinates node = NicCoordinates.ofIndex(n, params.torusWidth());
            try (MappedFile f = MappedFile.mapExisting(dir.nicSdram(node), 0,
                layout.managedMemoryOffset()))
            {
                for (int v = 0; v < layout.via().viEntries(); v++)
                {
                    final ViTableEntry e =
                        new ViTableEntry().wrap(f.buffer(), (int)layout.via().viOffset(v));
                    if (0 != e.state())
                    {
                        String counts = "";
                        if (node.equals(nic.node()))
                        {
                            try (MappedFile h = MappedFile.mapExisting(dir.hostMemory(node), 0,
                                params.hostMemoryBytes()))
                            {
                                counts = " completed sends " + h.buffer().getIntVolatile((int)e.sendCompletion()) +
                                    " receives " + h.buffer().getIntVolatile((int)e.receiveCompletion());
                            }
                        }
                        System.out.println("rank " + rank + " " + node + " VI " + v + " state " + e.state() +
                            " owner " + e.owner() + " send sequence " + e.sendSequence() + " receive sequence " +
                            e.receiveSequence() + " dropped " + e.dropped() + counts);
                    }
                }
            }
        }
        NicStatistics.counters(dir, nic.node()).forEach((k, v) ->
        {
            if (k.startsWith("VIA") || k.startsWith("process commands") || k.startsWith("data packets"))
            {
                System.out.println("rank " + rank + " NIC " + nic.node() + " " + k + " = " + v);
            }
        });
    }

    private void postReceive(final int l)
    {
        receives[l].fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, memory.address(RECEIVE_AT + l * MAX), region.handle(), MAX);
        vis[l].postRecv(receives[l], descriptorRegion);
    }

    private void sendHello()
    {
        final UnsafeBuffer b = memory.buffer();
        b.putInt(HELLO_AT, region.handle());
        for (int l = 0; l < LEVELS.length; l++)
        {
            b.putLong(HELLO_AT + 8 + 8 * l, memory.address(SLOT_AT + l * MAX));
        }
        send.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(32)
            .dataSegment(0, memory.address(HELLO_AT), region.handle(), 32);
        final Vi vi = vis[Reliability.RELIABLE_RECEPTION.ordinal()];
        vi.postSend(send, descriptorRegion);
        expect(vi.sendWait(TIMEOUT_MS) == send && send.status() == (ViplDescriptor.STATUS_DONE |
            ViplDescriptor.STATUS_OP_SEND), "hello sent");
        sendsTaken[Reliability.RELIABLE_RECEPTION.ordinal()]++;
    }

    private void awaitHello()
    {
        final int l = Reliability.RELIABLE_RECEPTION.ordinal();
        final CompletionQueue.Completion c = cq.await(TIMEOUT_MS);
        expect(c.vi() == vis[l] && !c.sendQueue(), "the hello on the Reliable Reception VI");
        final Descriptor d = vis[l].recvDone();
        receivesTaken[l]++;
        expect(d == receives[l] && d.status() == (ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE) &&
            32 == d.length(), "hello received");
        final UnsafeBuffer b = memory.buffer();
        peerHandle = b.getInt(RECEIVE_AT + l * MAX);
        for (int i = 0; i < LEVELS.length; i++)
        {
            peerSlot[i] = b.getLong(RECEIVE_AT + l * MAX + 8 + 8 * i);
        }
        postReceive(l);
    }

    /** Message {@code k} of {@code sender}: the next choice of {@code choices}. */
    private void sendMessage(final SplittableRandom choices, final long seed, final int sender, final int k)
    {
        final int l = choices.nextInt(LEVELS.length);
        final int op = choices.nextInt(3);
        final int length = size(choices);
        final long identity = identity(seed, sender, k);
        final UnsafeBuffer b = memory.buffer();
        for (int i = 0; i < length; i++)
        {
            b.putByte(SEND_AT + i, ViplEnd.pattern(identity, i));
        }
        send.fields().reset();
        if (RDMA_IMMEDIATE == op)
        {
            send.fields().control(ViplDescriptor.OP_RDMA_WRITE | ViplDescriptor.CONTROL_IMMEDIATE)
                .addressSegment(peerSlot[l], peerHandle);
        }
        else
        {
            send.fields().control(ViplDescriptor.OP_SEND | (SEND == op ? 0 : ViplDescriptor.CONTROL_IMMEDIATE));
        }
        send.fields().segmentCount(1).length(length).immediateData(SEND == op ? 0 : k)
            .dataSegment(0, memory.address(SEND_AT), region.handle(), length);
        vis[l].postSend(send, descriptorRegion);
        final Descriptor done = vis[l].sendWait(TIMEOUT_MS);
        sendsTaken[l]++;
        expect(done == send && send.status() == (ViplDescriptor.STATUS_DONE |
            (RDMA_IMMEDIATE == op ? ViplDescriptor.STATUS_OP_RDMA_WRITE : ViplDescriptor.STATUS_OP_SEND)),
            "message " + k + " sent on the " + LEVELS[l] + " VI: status 0x" + Integer.toHexString(send.status()));
    }

    /** Message {@code k} of {@code sender} must be the next to complete, as {@code choices} says. */
    private void receiveMessage(final SplittableRandom choices, final long seed, final int sender, final int k)
    {
        final int l = choices.nextInt(LEVELS.length);
        final int op = choices.nextInt(3);
        final int length = size(choices);
        final String what = "message " + k + " of rank " + sender + " (" + LEVELS[l] + ", op " + op + ", " + length +
            " B)";
        final CompletionQueue.Completion c = cq.await(TIMEOUT_MS);
        expect(c.vi() == vis[l] && !c.sendQueue(), what + ": completed on " + c.vi().attributes().reliability());
        final Descriptor d = vis[l].recvDone();
        receivesTaken[l] += null == d ? 0 : 1;
        final int status = ViplDescriptor.STATUS_DONE | (SEND == op ? 0 : ViplDescriptor.STATUS_IMMEDIATE) |
            (RDMA_IMMEDIATE == op ? ViplDescriptor.STATUS_OP_REMOTE_RDMA_WRITE : ViplDescriptor.STATUS_OP_RECEIVE);
        expect(d == receives[l] && d.status() == status, what + ": status 0x" + Integer.toHexString(d.status()));
        expect(length == d.length(), what + ": length " + d.length());
        expect(SEND == op || k == d.immediateData(), what + ": immediate data " + d.immediateData());
        final int at = (RDMA_IMMEDIATE == op ? SLOT_AT : RECEIVE_AT) + l * MAX;
        final long identity = identity(seed, sender, k);
        final UnsafeBuffer b = memory.buffer();
        for (int i = 0; i < length; i++)
        {
            if (b.getByte(at + i) != ViplEnd.pattern(identity, i))
            {
                expect(false, what + ": byte " + i);
            }
        }
        bytes += length;
        postReceive(l);
    }

    /** Mostly small messages, some of several pages, a few up to {@link #MAX}. */
    private static int size(final SplittableRandom choices)
    {
        final int kind = choices.nextInt(10);
        return kind < 4 ? choices.nextInt(65) : kind < 8 ? choices.nextInt(8 * 1024 + 1) : choices.nextInt(MAX + 1);
    }

    private static long identity(final long seed, final int sender, final int k)
    {
        return seed * 1_000_003L + sender * 100_003L + k;
    }

    private static void expect(final boolean condition, final String what)
    {
        if (!condition)
        {
            throw new IllegalStateException(what);
        }
    }
}
