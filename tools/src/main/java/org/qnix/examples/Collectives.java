package org.qnix.examples;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.MutableDirectBuffer;
import org.qnix.abi.ProcessName;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.ReceiveStatus;

/**
 * The QNIX collectives on the whole application (every process of a {@code qnix run} is in the
 * group named by its AI): barrier latency, broadcast from rank 0, and an all-reduce (sum of vectors of
 * longs) built from Send, Receive and Broadcast. Run with {@code ./qnix run -n 4 -- Collectives}.
 *
 * <p>Options: {@code --barriers N} (default 1000), {@code --sizes 4096,65536,1048576} for the
 * broadcast, {@code --repeats R} per broadcast size and all-reduce (default 50), {@code --longs L} in the
 * all-reduce vector (default 1024). Rank 0 prints one {@code COLLECTIVES kind=...} line per measurement:
 * a barrier's mean time; a broadcast's mean time from posting it to its Send Doorbell (every copy sent,
 * receives already posted) and the payload rate summed over receivers; an all-reduce's mean time.
 */
public final class Collectives
{
    private static final long TIMEOUT_S = 120;
    private static final int BROADCAST_TAG = 1;
    private static final int CONTRIBUTION_TAG = 2;
    private static final int RESULT_TAG = 3;

    private Collectives()
    {
    }

    /** What a run measures: its options, checked before anything starts. */
    public record Options(int barriers, int[] sizes, int repeats, int longs)
    {
        private static final String USAGE = "Collectives [--barriers N] [--sizes 4096,65536] [--repeats R] [--longs L]";

        /** @throws IllegalArgumentException naming the bad option and value. */
        public static Options parse(final List<String> args)
        {
            int barriers = 1000;
            int[] sizes = {4096, 65536, 1048576};
            int repeats = 50;
            int longs = 1024;
            final Arguments a = new Arguments(args);
            while (a.hasNext())
            {
                switch (a.next())
                {
                    case "--barriers":
                        barriers = a.intAtLeast(0);
                        break;
                    case "--sizes":
                        sizes = a.sizes(0);
                        break;
                    case "--repeats":
                        repeats = a.intAtLeast(1);
                        break;
                    case "--longs":
                        // The vector is one message: its bytes must fit an int.
                        longs = a.intAtLeast(1);
                        if (longs > Integer.MAX_VALUE / Long.BYTES)
                        {
                            throw new IllegalArgumentException("--longs " + longs + ": at most " +
                                Integer.MAX_VALUE / Long.BYTES);
                        }
                        break;
                    default:
                        throw a.unknown(USAGE);
                }
            }
            return new Options(barriers, sizes, repeats, longs);
        }
    }

    public static void main(final String[] args)
    {
        OneLineFailures.install("Collectives");
        final Options options = Arguments.parseOrExit("Collectives", Options::parse, args);
        final int barriers = options.barriers();
        final int[] sizes = options.sizes();
        final int repeats = options.repeats();
        final int longs = options.longs();

        try (Qnix qnix = Qnix.initFromEnvironment())
        {
            final int group = qnix.name().ai();
            final int size = Integer.parseInt(System.getenv(Qnix.ENV_GROUP_SIZE));
            final boolean root = 0 == qnix.name().pi();
            if (size < 2)
            {
                System.err.println("Collectives needs at least 2 processes (qnix run -n 4 -- Collectives)");
                System.exit(2);
            }

            // Barrier latency: back to back, so each one measures a full round of the group.
            qnix.awaitBarrier(group, size, TIMEOUT_S, TimeUnit.SECONDS);
            long start = System.nanoTime();
            for (int i = 0; i < barriers; i++)
            {
                qnix.awaitBarrier(group, size, TIMEOUT_S, TimeUnit.SECONDS);
            }
            final double barrierUs = (System.nanoTime() - start) / 1e3 / Math.max(1, barriers);
            if (root)
            {
                System.out.printf("COLLECTIVES kind=barrier processes=%d iterations=%d mean_us=%.1f%n",
                    size, barriers, barrierUs);
            }

            for (final int bytes : sizes)
            {
                broadcast(qnix, group, size, root, bytes, repeats);
            }
            allReduce(qnix, group, size, root, longs, repeats);
        }
    }

    /** Rank 0 broadcasts {@code bytes} to the others {@code repeats} times; every receiver checks them. */
    private static void broadcast(final Qnix qnix, final int group, final int size, final boolean root,
        final int bytes, final int repeats)
    {
        final ReceiveStatus status = new ReceiveStatus();
        final ProcessName source = new ProcessName(group, 0);
        try (QnixBuffer buffer = qnix.allocateBuffer(bytes))
        {
            buffer.lock();
            final MutableDirectBuffer data = buffer.buffer();
            long elapsed = 0;
            for (int r = 0; r < repeats; r++)
            {
                int receive = -1;
                if (root)
                {
                    for (int i = 0; i < bytes; i++)
                    {
                        data.putByte(i, (byte)(r + i));
                    }
                }
                else
                {
                    receive = qnix.recvContext(source, BROADCAST_TAG, true, buffer, 0, bytes);
                    qnix.receive(receive);
                }
                // Every receive is posted: the broadcast goes straight into the receivers' buffers.
                qnix.awaitBarrier(group, size, TIMEOUT_S, TimeUnit.SECONDS);
                if (root)
                {
                    final long start = System.nanoTime();
                    final int send = qnix.broadcastContext(BROADCAST_TAG, true, buffer, 0, bytes);
                    qnix.broadcast(send, group);
                    qnix.waitForSend(send, TIMEOUT_S, TimeUnit.SECONDS);
                    elapsed += System.nanoTime() - start;
                }
                else
                {
                    qnix.waitForReceive(receive, status, TIMEOUT_S, TimeUnit.SECONDS);
                    for (int i = 0; i < bytes; i++)
                    {
                        if (data.getByte(i) != (byte)(r + i))
                        {
                            throw new IllegalStateException("broadcast " + r + " of " + bytes + " bytes: byte " + i +
                                " is wrong");
                        }
                    }
                }
                // The next round's data is written only once everybody has checked this one.
                qnix.awaitBarrier(group, size, TIMEOUT_S, TimeUnit.SECONDS);
            }
            if (root)
            {
                final double us = elapsed / 1e3 / repeats;
                System.out.printf("COLLECTIVES kind=broadcast size=%d processes=%d mean_us=%.1f MB_per_s=%.1f%n",
                    bytes, size, us, (double)bytes * (size - 1) / us);
            }
        }
    }

    /**
     * Sum of every rank's vector, known to every rank: the others send their vector to rank 0, which
     * adds them up and broadcasts the result. Rank r's element i is {@code r * 1000 + i}.
     */
    private static void allReduce(final Qnix qnix, final int group, final int size, final boolean root,
        final int longs, final int repeats)
    {
        final int bytes = longs * Long.BYTES;
        final ReceiveStatus status = new ReceiveStatus();
        final ProcessName rootName = new ProcessName(group, 0);
        try (QnixBuffer mine = qnix.allocateBuffer(bytes);
             QnixBuffer incoming = qnix.allocateBuffer(bytes);
             QnixBuffer result = qnix.allocateBuffer(bytes))
        {
            mine.lock();
            incoming.lock();
            result.lock();
            for (int i = 0; i < longs; i++)
            {
                mine.buffer().putLong(i * Long.BYTES, qnix.name().pi() * 1000L + i);
            }
            qnix.awaitBarrier(group, size, TIMEOUT_S, TimeUnit.SECONDS);
            final long start = System.nanoTime();
            for (int r = 0; r < repeats; r++)
            {
                if (root)
                {
                    result.buffer().putBytes(0, mine.buffer(), 0, bytes);
                    for (int k = 1; k < size; k++)
                    {
                        final int receive = qnix.recvContext(Qnix.ANY_PROC, CONTRIBUTION_TAG, true, incoming, 0, bytes);
                        qnix.receive(receive);
                        qnix.waitForReceive(receive, status, TIMEOUT_S, TimeUnit.SECONDS);
                        for (int i = 0; i < longs; i++)
                        {
                            final int at = i * Long.BYTES;
                            result.buffer().putLong(at, result.buffer().getLong(at) + incoming.buffer().getLong(at));
                        }
                    }
                    final int send = qnix.broadcastContext(RESULT_TAG, true, result, 0, bytes);
                    qnix.broadcast(send, group);
                    qnix.waitForSend(send, TIMEOUT_S, TimeUnit.SECONDS);
                }
                else
                {
                    final int receive = qnix.recvContext(rootName, RESULT_TAG, true, result, 0, bytes);
                    qnix.receive(receive);
                    final int send = qnix.sendContext(rootName, CONTRIBUTION_TAG, true, mine, 0, bytes);
                    qnix.send(send);
                    qnix.waitForSend(send, TIMEOUT_S, TimeUnit.SECONDS);
                    qnix.waitForReceive(receive, status, TIMEOUT_S, TimeUnit.SECONDS);
                }
                final long ranks = size * (size - 1L) / 2;
                for (int i = 0; i < longs; i++)
                {
                    final long expected = ranks * 1000L + (long)size * i;
                    final long got = result.buffer().getLong(i * Long.BYTES);
                    if (got != expected)
                    {
                        throw new IllegalStateException("all-reduce " + r + ": element " + i + " is " + got +
                            ", expected " + expected);
                    }
                }
            }
            final double us = (System.nanoTime() - start) / 1e3 / repeats;
            qnix.awaitBarrier(group, size, TIMEOUT_S, TimeUnit.SECONDS);
            if (root)
            {
                System.out.printf("COLLECTIVES kind=allreduce longs=%d processes=%d mean_us=%.1f result=ok%n",
                    longs, size, us);
            }
        }
    }
}
