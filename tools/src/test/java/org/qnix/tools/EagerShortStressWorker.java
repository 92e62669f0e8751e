package org.qnix.tools;

import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.agrona.MutableDirectBuffer;
import org.agrona.collections.LongHashSet;
import org.qnix.abi.ProcessName;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.ReceiveStatus;

/**
 * One rank of {@link EagerShortStressTest}, started by {@link ProgramLauncher} with {@code SEED MESSAGES
 * [any-order]}:
 * random lengths either side of the short threshold (Send_Short below it, Send above), random peers,
 * a few random tags so that messages of one pair often share one; every message once, intact, with its
 * completion fields, and the short messages of one sender with one tag matched in the order they were
 * sent (to Any_Proc/Any_Tag receives, the receive posted earlier gets the message sent earlier), unless
 * {@code any-order} is given (the permission protocol does not promise it when a message waited for staging).
 * Anything wrong throws, so the process exits non-zero; what passed is printed as an {@code OK} line.
 */
public final class EagerShortStressWorker
{
    private static final int WINDOW = 12;
    private static final int TAGS = 3;
    /** from, seq, length, tag. */
    private static final int HEADER = 16;

    private EagerShortStressWorker()
    {
    }

    public static void main(final String[] args)
    {
        try (Qnix qnix = Qnix.initFromEnvironment())
        {
            run(qnix, Long.parseLong(args[0]), Integer.parseInt(args[1]),
                Integer.parseInt(System.getenv(Qnix.ENV_GROUP_SIZE)), !(args.length > 2 && "any-order".equals(args[2])));
        }
    }

    private static byte pattern(final long seed, final int i)
    {
        return (byte)(seed * 131 + i * 7 + (i >> 9));
    }

    /** The same plan in every rank: receiver, length and tag of each message of {@code rank}. */
    private static int[] plan(final long seed, final int rank, final int ranks, final int threshold,
        final int[] lengths, final int[] tags)
    {
        final Random random = new Random(seed * 7919 + rank);
        final int[] to = new int[lengths.length];
        for (int m = 0; m < lengths.length; m++)
        {
            final int peer = random.nextInt(ranks - 1);
            to[m] = peer >= rank ? peer + 1 : peer;
            lengths[m] = HEADER + random.nextInt(2 * threshold - HEADER + 1);
            tags[m] = random.nextInt(TAGS);
        }
        return to;
    }

    private static void run(final Qnix qnix, final long seed, final int messages, final int ranks,
        final boolean checkOrder)
    {
        final int me = qnix.name().pi();
        final int ai = qnix.name().ai();
        final int threshold = qnix.parameters().shortThreshold();
        final int max = 2 * threshold;
        final int[][] lengths = new int[ranks][messages];
        final int[][] tags = new int[ranks][messages];
        final int[][] targets = new int[ranks][];
        int expected = 0;
        for (int r = 0; r < ranks; r++)
        {
            targets[r] = plan(seed, r, ranks, threshold, lengths[r], tags[r]);
            for (int m = 0; m < messages; m++)
            {
                expected += targets[r][m] == me ? 1 : 0;
            }
        }

        final QnixBuffer[] out = new QnixBuffer[WINDOW];
        final QnixBuffer[] in = new QnixBuffer[WINDOW];
        final int[] tx = new int[WINDOW];
        final int[] rx = new int[WINDOW];
        final int[] postedAs = new int[WINDOW];
        for (int w = 0; w < WINDOW; w++)
        {
            out[w] = qnix.allocateBuffer(max, w * 331 % 4096, w % 2 == 0);
            in[w] = qnix.allocateBuffer(max, w * 577 % 4096, w % 2 == 1);
            out[w].lock();
            in[w].lock();
            tx[w] = -1;
            rx[w] = -1;
        }
        // For each message received: the posting number of the receive that took it (-1: not yet).
        final int[][] takenBy = new int[ranks][messages];
        for (final int[] row : takenBy)
        {
            Arrays.fill(row, -1);
        }
        final ReceiveStatus status = new ReceiveStatus();
        final LongHashSet seen = new LongHashSet();
        int sent = 0;
        int shortSent = 0;
        int received = 0;
        int posted = 0;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
        while (sent < messages || received < expected || pending(tx))
        {
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("rank " + me + " stuck: sent " + sent + "/" + messages +
                    ", received " + received + "/" + expected);
            }
            boolean progress = false;
            for (int w = 0; w < WINDOW; w++)
            {
                if (-1 == rx[w] && posted < expected)
                {
                    rx[w] = qnix.recvContext(Qnix.ANY_PROC, Qnix.ANY_TAG, true, in[w], 0, max);
                    qnix.receive(rx[w]);
                    postedAs[w] = posted++;
                    progress = true;
                }
                if (-1 != rx[w] && qnix.pollForReceive(rx[w], status))
                {
                    rx[w] = -1;
                    final MutableDirectBuffer b = in[w].buffer();
                    final int from = b.getInt(0);
                    final int seq = b.getInt(4);
                    final int length = b.getInt(8);
                    final int tag = b.getInt(12);
                    final String what = "message " + seq + " from rank " + from + " at rank " + me;
                    if (from < 0 || from >= ranks || seq < 0 || seq >= messages || targets[from][seq] != me ||
                        length != lengths[from][seq] || tag != tags[from][seq] || status.length() != length ||
                        status.sourcePi() != from || status.sourceAi() != ai || status.tag() != tag)
                    {
                        throw new IllegalStateException(what + ": wrong header or completion " + status);
                    }
                    if (!seen.add(((long)from << 32) | seq))
                    {
                        throw new IllegalStateException(what + " arrived twice");
                    }
                    final long dataSeed = seed * 1_000_003L + from * 100_000L + seq;
                    for (int i = HEADER; i < length; i++)
                    {
                        if (b.getByte(i) != pattern(dataSeed, i))
                        {
                            throw new IllegalStateException(what + ": byte " + i + " of " + length + " is wrong");
                        }
                    }
                    takenBy[from][seq] = postedAs[w];
                    received++;
                    progress = true;
                }
                if (-1 != tx[w] && qnix.pollForSend(tx[w]))
                {
                    tx[w] = -1;
                    progress = true;
                }
                if (-1 == tx[w] && sent < messages)
                {
                    final int length = lengths[me][sent];
                    final MutableDirectBuffer b = out[w].buffer();
                    b.putInt(0, me);
                    b.putInt(4, sent);
                    b.putInt(8, length);
                    b.putInt(12, tags[me][sent]);
                    final long dataSeed = seed * 1_000_003L + me * 100_000L + sent;
                    for (int i = HEADER; i < length; i++)
                    {
                        b.putByte(i, pattern(dataSeed, i));
                    }
                    final ProcessName to = new ProcessName(ai, targets[me][sent]);
                    if (length <= threshold)
                    {
                        tx[w] = qnix.sendContextShort(to, tags[me][sent], true, b, 0, length);
                        qnix.sendShort(tx[w]);
                        shortSent++;
                    }
                    else
                    {
                        tx[w] = qnix.sendContext(to, tags[me][sent], true, out[w], 0, length);
                        qnix.send(tx[w]);
                    }
                    sent++;
                    progress = true;
                }
            }
            if (!progress)
            {
                Thread.yield();
            }
        }
        if (checkOrder)
        {
            checkShortOrder(me, ranks, messages, threshold, lengths, tags, targets, takenBy);
        }
        System.out.println("OK eager stress rank " + me + " sent " + sent + " (" + shortSent + " short) received " +
            received + " (every message once, intact" + (checkOrder ? ", short ones in order per sender and tag)" : ")"));
    }

    /** Short messages of one sender with one tag: the one sent earlier was taken by the receive posted earlier. */
    private static void checkShortOrder(final int me, final int ranks, final int messages, final int threshold,
        final int[][] lengths, final int[][] tags, final int[][] targets, final int[][] takenBy)
    {
        for (int from = 0; from < ranks; from++)
        {
            final int[] last = new int[TAGS];
            final int[] lastSeq = new int[TAGS];
            Arrays.fill(last, -1);
            for (int seq = 0; seq < messages; seq++)
            {
                if (targets[from][seq] != me || lengths[from][seq] > threshold)
                {
                    continue;
                }
                final int tag = tags[from][seq];
                if (takenBy[from][seq] <= last[tag])
                {
                    throw new IllegalStateException("rank " + me + ": short message " + seq + " from rank " + from +
                        " with tag " + tag + " was matched before message " + lastSeq[tag] + " sent earlier");
                }
                last[tag] = takenBy[from][seq];
                lastSeq[tag] = seq;
            }
        }
    }

    private static boolean pending(final int[] contexts)
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
