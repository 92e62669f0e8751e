package org.qnix.tools;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.agrona.MutableDirectBuffer;
import org.agrona.collections.LongHashSet;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ProcessName;
import org.qnix.lib.BufferPool;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixProtectionException;
import org.qnix.lib.QnixTruncatedException;
import org.qnix.lib.ReceiveStatus;

/**
 * The user program of the multi-JVM messaging tests, one JVM per rank, started by
 * {@link ProgramLauncher}: {@code matrix}, {@code features} or {@code stress SEED MESSAGES}. Every
 * check failing throws, so the process exits non-zero and the test sees it; what passed is printed as
 * {@code OK ...} lines.
 */
public final class MessagingWorker
{
    private static final long TIMEOUT_S = 300;
    private static final int READY = 1_000_001;
    private static final int GO = 1_000_002;
    private static final int DONE = 1_000_003;
    private static final int[] OFFSETS = {0, 1, 4093};

    private MessagingWorker()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        try (Qnix qnix = Qnix.initFromEnvironment())
        {
            switch (args[0])
            {
                case "matrix":
                    matrix(qnix, Integer.parseInt(System.getenv(Qnix.ENV_GROUP_SIZE)));
                    break;
                case "features":
                    features(qnix);
                    break;
                case "stress":
                    stress(qnix, Long.parseLong(args[1]), Integer.parseInt(args[2]),
                        Integer.parseInt(System.getenv(Qnix.ENV_GROUP_SIZE)));
                    break;
                default:
                    throw new IllegalArgumentException(args[0]);
            }
        }
    }

    static byte pattern(final long seed, final int i)
    {
        return (byte)(seed * 131 + i * 7 + (i >> 9));
    }

    private static void fill(final MutableDirectBuffer buffer, final int offset, final int length, final long seed)
    {
        for (int i = 0; i < length; i++)
        {
            buffer.putByte(offset + i, pattern(seed, i));
        }
    }

    private static void check(final MutableDirectBuffer buffer, final int offset, final int length, final long seed,
        final String what)
    {
        for (int i = 0; i < length; i++)
        {
            if (buffer.getByte(offset + i) != pattern(seed, i))
            {
                throw new IllegalStateException(what + ": byte " + i + " of " + length + " is wrong");
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // matrix: rank 0 sends to every other rank every length, alignment and kind
    // ---------------------------------------------------------------------------------------------

    private static final int[] LENGTHS = {0, 1, 1023, 1024, 1025, 4095, 4096, 4097, 65536, 2 * 1024 * 1024};

    /** One case: what the sender uses and what the receiver uses. */
    private record Case(int length, String from, int senderOffset, String to, int receiverOffset)
    {
    }

    private static List<Case> cases(final int shortThreshold)
    {
        final List<Case> cases = new ArrayList<>();
        for (final int length : LENGTHS)
        {
            for (final int so : OFFSETS)
            {
                for (final int ro : OFFSETS)
                {
                    cases.add(new Case(length, "buffer", so, "buffer", ro));
                }
            }
            cases.add(new Case(length, "pool", 0, "pool", 0));
            cases.add(new Case(length, "buffer", 1, "pool", 0));
            cases.add(new Case(length, "pool", 0, "buffer", 4093));
            if (length <= shortThreshold)
            {
                for (final int ro : OFFSETS)
                {
                    cases.add(new Case(length, "short", 0, "buffer", ro));
                }
            }
        }
        return cases;
    }

    private static void matrix(final Qnix qnix, final int ranks) throws Exception
    {
        final int me = qnix.name().pi();
        final int ai = qnix.name().ai();
        final int max = 2 * 1024 * 1024;
        final int poolPages = 2 * (max / 4096 + 1);
        final BufferPool pool = qnix.bufferPool(poolPages);
        final List<Case> cases = cases(qnix.parameters().shortThreshold());
        final ReceiveStatus status = new ReceiveStatus();
        final QnixBuffer control = qnix.allocateBuffer(8);
        control.lock();
        // Each alignment gets its own scattered buffer, so that page tables matter.
        final QnixBuffer[] buffers = new QnixBuffer[OFFSETS.length];
        for (int i = 0; i < OFFSETS.length; i++)
        {
            buffers[i] = qnix.allocateBuffer(max, OFFSETS[i], false);
            buffers[i].lock();
        }
        int count = 0;
        for (int peerRank = 1; peerRank < ranks; peerRank++)
        {
            if (0 != me && peerRank != me)
            {
                continue;
            }
            final ProcessName peer = new ProcessName(ai, 0 == me ? peerRank : 0);
            for (int c = 0; c < cases.size(); c++)
            {
                final Case k = cases.get(c);
                final boolean staged = 1 == (c & 1);
                final long seed = peerRank * 100_000L + c;
                final int tag = c;
                final String what = "case " + c + " " + k + (staged ? " staged" : " direct") + " to rank " + peerRank;
                if (0 == me)
                {
                    if (!staged)
                    {
                        awaitControl(qnix, peer, READY, control, status);
                    }
                    final int tx;
                    if ("pool".equals(k.from))
                    {
                        fill(pool.buffer(), 0, k.length, seed);
                        tx = qnix.sendContext(peer, tag, true, pool, 0, k.length);
                        qnix.send(tx);
                    }
                    else if ("short".equals(k.from))
                    {
                        final UnsafeBuffer data = new UnsafeBuffer(new byte[Math.max(1, k.length)]);
                        fill(data, 0, k.length, seed);
                        tx = qnix.sendContextShort(peer, tag, true, data, 0, k.length);
                        qnix.sendShort(tx);
                    }
                    else
                    {
                        final QnixBuffer b = buffers[indexOf(k.senderOffset)];
                        fill(b.buffer(), 0, k.length, seed);
                        tx = qnix.sendContext(peer, tag, true, b, 0, k.length);
                        qnix.send(tx);
                    }
                    qnix.waitForSend(tx, TIMEOUT_S, TimeUnit.SECONDS);
                    if (staged)
                    {
                        sendControl(qnix, peer, GO, control);
                    }
                }
                else
                {
                    if (staged)
                    {
                        awaitControl(qnix, peer, GO, control, status);
                    }
                    final MutableDirectBuffer target;
                    final int rx;
                    if ("pool".equals(k.to))
                    {
                        final int firstPage = max / 4096 + 1;
                        rx = qnix.recvContext(peer, tag, true, pool, firstPage, k.length);
                        target = pool.slice(firstPage, Math.max(1, k.length));
                    }
                    else
                    {
                        final QnixBuffer b = buffers[indexOf(k.receiverOffset)];
                        rx = qnix.recvContext(peer, tag, true, b, 0, k.length);
                        target = b.buffer();
                    }
                    qnix.receive(rx);
                    if (!staged)
                    {
                        sendControl(qnix, peer, READY, control);
                    }
                    qnix.waitForReceive(rx, status, TIMEOUT_S, TimeUnit.SECONDS);
                    if (status.length() != k.length || status.tag() != tag || !status.source().equals(peer))
                    {
                        throw new IllegalStateException(what + ": completion says " + status);
                    }
                    check(target, 0, k.length, seed, what);
                    count++;
                }
            }
        }
        if (0 != me)
        {
            System.out.println("OK matrix rank " + me + " received " + count + " messages, every byte checked");
        }
    }

    private static int indexOf(final int offset)
    {
        for (int i = 0; i < OFFSETS.length; i++)
        {
            if (OFFSETS[i] == offset)
            {
                return i;
            }
        }
        throw new IllegalArgumentException("offset " + offset);
    }

    private static void sendControl(final Qnix qnix, final ProcessName peer, final int tag, final QnixBuffer control)
    {
        final int tx = qnix.sendContextShort(peer, tag, true, control.buffer(), 0, 0);
        qnix.sendShort(tx);
        qnix.waitForSend(tx, TIMEOUT_S, TimeUnit.SECONDS);
    }

    private static void awaitControl(final Qnix qnix, final ProcessName peer, final int tag, final QnixBuffer control,
        final ReceiveStatus status)
    {
        final int rx = qnix.recvContext(peer, tag, true, control, 0, 0);
        qnix.receive(rx);
        qnix.waitForReceive(rx, status, TIMEOUT_S, TimeUnit.SECONDS);
    }

    // ---------------------------------------------------------------------------------------------
    // features: ANY_PROC/ANY_TAG, 32 outstanding each way, truncation, protection
    // ---------------------------------------------------------------------------------------------

    private static void features(final Qnix qnix)
    {
        final int me = qnix.name().pi();
        final ProcessName peer = new ProcessName(qnix.name().ai(), 1 - me);
        final ReceiveStatus status = new ReceiveStatus();
        final int contexts = qnix.parameters().contextsPerProcess();
        final QnixBuffer control = qnix.allocateBuffer(8);
        control.lock();

        // M outstanding receives and M outstanding sends in each process at once.
        final int size = 5000;
        final QnixBuffer out = qnix.allocateBuffer(size * contexts, 7, false);
        final QnixBuffer in = qnix.allocateBuffer(size * contexts, 11, false);
        out.lock();
        in.lock();
        final int[] rx = new int[contexts];
        final int[] tx = new int[contexts];
        for (int i = 0; i < contexts; i++)
        {
            rx[i] = qnix.recvContext(peer, i, true, in, i * size, size);
            qnix.receive(rx[i]);
        }
        for (int i = 0; i < contexts; i++)
        {
            fill(out.buffer(), i * size, size, me * 1000 + i);
            tx[i] = qnix.sendContext(peer, i, true, out, i * size, size);
            qnix.send(tx[i]);
        }
        for (int i = 0; i < contexts; i++)
        {
            qnix.waitForSend(tx[i], TIMEOUT_S, TimeUnit.SECONDS);
        }
        for (int i = 0; i < contexts; i++)
        {
            qnix.waitForReceive(rx[i], status, TIMEOUT_S, TimeUnit.SECONDS);
            check(in.buffer(), i * size, size, (1 - me) * 1000 + i, "outstanding receive " + i);
        }
        System.out.println("OK rank " + me + ": " + contexts + " outstanding sends and " + contexts +
            " outstanding receives completed");

        if (0 == me)
        {
            // ANY_PROC / ANY_TAG report the real source and tag.
            final int any = qnix.recvContext(Qnix.ANY_PROC, Qnix.ANY_TAG, true, in, 0, 100);
            qnix.receive(any);
            sendControl(qnix, peer, READY, control);
            qnix.waitForReceive(any, status, TIMEOUT_S, TimeUnit.SECONDS);
            if (!status.source().equals(peer) || 777 != status.tag() || 50 != status.length())
            {
                throw new IllegalStateException("ANY_PROC/ANY_TAG completion: " + status);
            }
            check(in.buffer(), 0, 50, 777, "any");
            System.out.println("OK ANY_PROC/ANY_TAG reported source " + status.source() + " tag " + status.tag());

            // Truncation: 5000 bytes into a 100-byte buffer.
            in.buffer().putByte(100, (byte)0x5A);
            final int small = qnix.recvContext(peer, 778, true, in, 0, 100);
            qnix.receive(small);
            sendControl(qnix, peer, READY, control);
            try
            {
                qnix.waitForReceive(small, status, TIMEOUT_S, TimeUnit.SECONDS);
                throw new IllegalStateException("a 5000-byte message into 100 bytes was not truncated");
            }
            catch (final QnixTruncatedException ex)
            {
                if (5000 != ex.messageLength() || !ex.source().equals(peer) || 778 != ex.tag())
                {
                    throw new IllegalStateException("truncation reported " + ex.getMessage());
                }
                check(in.buffer(), 0, 100, 778, "truncated prefix");
                if (0x5A != in.buffer().getByte(100))
                {
                    throw new IllegalStateException("a byte beyond the receive buffer was written");
                }
                System.out.println("OK truncated: " + ex.getMessage());
            }

            // Protection: the peer's first send names pages it unlocked; only its second arrives.
            fill(in.buffer(), 0, 64, 4242);
            final int guarded = qnix.recvContext(peer, 779, true, in, 0, 4000);
            qnix.receive(guarded);
            sendControl(qnix, peer, READY, control);
            qnix.waitForReceive(guarded, status, TIMEOUT_S, TimeUnit.SECONDS);
            if (10 != status.length())
            {
                throw new IllegalStateException("protection: received " + status + ", expected the 10-byte message");
            }
            check(in.buffer(), 0, 10, 780, "after protection");
            for (int i = 10; i < 64; i++)
            {
                if (in.buffer().getByte(i) != pattern(4242, i))
                {
                    throw new IllegalStateException("byte " + i + " was written by the refused send");
                }
            }
            System.out.println("OK protection: the refused send moved no byte");
        }
        else
        {
            awaitControl(qnix, peer, READY, control, status);
            fill(out.buffer(), 0, 50, 777);
            final int any = qnix.sendContext(peer, 777, true, out, 0, 50);
            qnix.send(any);
            qnix.waitForSend(any, TIMEOUT_S, TimeUnit.SECONDS);

            awaitControl(qnix, peer, READY, control, status);
            fill(out.buffer(), 0, 5000, 778);
            final int big = qnix.sendContext(peer, 778, true, out, 0, 5000);
            qnix.send(big);
            qnix.waitForSend(big, TIMEOUT_S, TimeUnit.SECONDS);

            awaitControl(qnix, peer, READY, control, status);
            final QnixBuffer loose = qnix.allocateBuffer(4000, 3, false);
            loose.lock();
            fill(loose.buffer(), 0, 4000, 9999);
            final int refused = qnix.sendContext(peer, 779, true, loose, 0, 4000);
            loose.unlock();
            qnix.send(refused);
            try
            {
                qnix.waitForSend(refused, TIMEOUT_S, TimeUnit.SECONDS);
                throw new IllegalStateException("a send from unlocked pages was not refused");
            }
            catch (final QnixProtectionException ex)
            {
                System.out.println("OK protection: " + ex.getMessage());
            }
            fill(out.buffer(), 0, 10, 780);
            final int fine = qnix.sendContext(peer, 779, true, out, 0, 10);
            qnix.send(fine);
            qnix.waitForSend(fine, TIMEOUT_S, TimeUnit.SECONDS);
        }
        // Neither leaves before the other is done with it.
        if (0 == me)
        {
            sendControl(qnix, peer, DONE, control);
        }
        else
        {
            awaitControl(qnix, peer, DONE, control, status);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // stress: random lengths to random peers; every message exactly once, intact, at the right place
    // ---------------------------------------------------------------------------------------------

    private static final int STRESS_WINDOW = 12;
    private static final int STRESS_MAX = 96 * 1024;
    private static final int HEADER = 16;

    /** Length of message {@code seq} of sender {@code rank}, and its receiver: the same plan in every rank. */
    private static int[] plan(final long seed, final int rank, final int messages, final int ranks, final int[] lengths)
    {
        final Random random = new Random(seed * 7919 + rank);
        final int[] to = new int[messages];
        for (int m = 0; m < messages; m++)
        {
            int peer = random.nextInt(ranks - 1);
            to[m] = peer >= rank ? peer + 1 : peer;
            final int kind = random.nextInt(100);
            lengths[m] = HEADER + (kind < 60 ? random.nextInt(1024) : kind < 95 ? random.nextInt(16 * 1024) :
                random.nextInt(STRESS_MAX - HEADER));
        }
        return to;
    }

    private static void stress(final Qnix qnix, final long seed, final int messagesPerRank, final int ranks)
    {
        final int me = qnix.name().pi();
        final int ai = qnix.name().ai();
        int expected = 0;
        final int[][] lengths = new int[ranks][messagesPerRank];
        final int[][] targets = new int[ranks][];
        for (int r = 0; r < ranks; r++)
        {
            targets[r] = plan(seed, r, messagesPerRank, ranks, lengths[r]);
            for (int m = 0; m < messagesPerRank; m++)
            {
                expected += targets[r][m] == me ? 1 : 0;
            }
        }

        final QnixBuffer[] out = new QnixBuffer[STRESS_WINDOW];
        final QnixBuffer[] in = new QnixBuffer[STRESS_WINDOW];
        final int[] tx = new int[STRESS_WINDOW];
        final int[] rx = new int[STRESS_WINDOW];
        for (int w = 0; w < STRESS_WINDOW; w++)
        {
            out[w] = qnix.allocateBuffer(STRESS_MAX, w * 331 % 4096, w % 2 == 0);
            in[w] = qnix.allocateBuffer(STRESS_MAX, w * 577 % 4096, w % 2 == 1);
            out[w].lock();
            in[w].lock();
            tx[w] = -1;
            rx[w] = -1;
        }
        final ReceiveStatus status = new ReceiveStatus();
        final LongHashSet seen = new LongHashSet();
        int sent = 0;
        int received = 0;
        int posted = 0;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(400);
        while (sent < messagesPerRank || received < expected || anyPending(tx))
        {
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("rank " + me + " stuck: sent " + sent + "/" + messagesPerRank +
                    ", received " + received + "/" + expected);
            }
            boolean progress = false;
            for (int w = 0; w < STRESS_WINDOW; w++)
            {
                if (-1 == rx[w] && posted < expected)
                {
                    rx[w] = qnix.recvContext(Qnix.ANY_PROC, Qnix.ANY_TAG, true, in[w], 0, STRESS_MAX);
                    qnix.receive(rx[w]);
                    posted++;
                    progress = true;
                }
                if (-1 != rx[w] && qnix.pollForReceive(rx[w], status))
                {
                    rx[w] = -1;
                    final MutableDirectBuffer b = in[w].buffer();
                    final int from = b.getInt(0);
                    final int seq = b.getInt(4);
                    final int length = b.getInt(8);
                    final String what = "message " + seq + " from rank " + from + " at rank " + me;
                    if (from < 0 || from >= ranks || seq < 0 || seq >= messagesPerRank || targets[from][seq] != me ||
                        length != lengths[from][seq] || status.length() != length || status.sourcePi() != from ||
                        status.sourceAi() != ai || status.tag() != seq)
                    {
                        throw new IllegalStateException(what + ": wrong header or completion " + status);
                    }
                    if (!seen.add(((long)from << 32) | seq))
                    {
                        throw new IllegalStateException(what + " arrived twice");
                    }
                    check(b, HEADER, length - HEADER, seed * 1_000_003L + from * 100_000L + seq, what);
                    received++;
                    progress = true;
                }
                if (-1 != tx[w] && qnix.pollForSend(tx[w]))
                {
                    tx[w] = -1;
                    progress = true;
                }
                if (-1 == tx[w] && sent < messagesPerRank)
                {
                    final int length = lengths[me][sent];
                    final MutableDirectBuffer b = out[w].buffer();
                    b.putInt(0, me);
                    b.putInt(4, sent);
                    b.putInt(8, length);
                    fill(b, HEADER, length - HEADER, seed * 1_000_003L + me * 100_000L + sent);
                    tx[w] = qnix.sendContext(new ProcessName(ai, targets[me][sent]), sent, true, out[w], 0, length);
                    qnix.send(tx[w]);
                    sent++;
                    progress = true;
                }
            }
            if (!progress)
            {
                Thread.yield();
            }
        }
        System.out.println("OK stress rank " + me + " sent " + sent + " received " + received +
            " (every message once, intact)");
    }

    private static boolean anyPending(final int[] contexts)
    {
        for (final int c : contexts)
        {
            if (-1 != c)
            {
                return true;
            }
        }
        return false;
    }
}
