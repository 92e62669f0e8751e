package org.qnix.examples;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.MutableDirectBuffer;
import org.qnix.abi.ProcessName;
import org.qnix.host.DoorbellWait;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.ReceiveStatus;

/**
 * One-way latency (half the round trip) between two processes, per message size, through the whole
 * QNIX path: contexts, Command Queue, NIC scheduling, permission, DMA, doorbells. Messages up to the
 * short threshold go as Send_Short (programmed I/O from the Context Region), longer ones as Send from a
 * locked buffer, as the thesis does (3.2, Data Transfer). Run with {@code ./qnix run -n 2 -- PingPong}.
 *
 * <p>Options: {@code --sizes 0,8,1024,65536}, {@code --iterations N} (per size, after a warm-up of
 * N/10), {@code --wait busy|yield|backoff|sleep} (how both wait on doorbells, see {@link DoorbellWait}; the
 * default is sleep: spin, then futex). Rank 0 prints
 * one line per size, {@code PINGPONG size=... mode=... min_us=... median_us=... p99_us=...}, after
 * checking every byte of every reply.
 */
public final class PingPong
{
    private static final int TAG = 1;
    private static final long TIMEOUT_S = 60;

    private PingPong()
    {
    }

    /** What a run measures: its options, checked before anything starts. */
    public record Options(int[] sizes, int iterations, DoorbellWait doorbellWait)
    {
        private static final String USAGE =
            "PingPong [--sizes 0,8,1024] [--iterations N] [--wait busy|yield|backoff|sleep]";

        /** @throws IllegalArgumentException naming the bad option and value. */
        public static Options parse(final List<String> args)
        {
            int[] sizes = {0, 8, 64, 512, 1024, 4096, 65536};
            int iterations = 2000;
            DoorbellWait wait = DoorbellWait.SLEEP;
            final Arguments a = new Arguments(args);
            while (a.hasNext())
            {
                switch (a.next())
                {
                    case "--sizes":
                        sizes = a.sizes(0);
                        break;
                    case "--iterations":
                        iterations = a.intAtLeast(1);
                        break;
                    case "--wait":
                        final String text = a.value();
                        try
                        {
                            wait = DoorbellWait.parse(text);
                        }
                        catch (final IllegalArgumentException ex)
                        {
                            throw new IllegalArgumentException("--wait " + text + ": " + ex.getMessage());
                        }
                        break;
                    default:
                        throw a.unknown(USAGE);
                }
            }
            return new Options(sizes, iterations, wait);
        }
    }

    public static void main(final String[] args)
    {
        OneLineFailures.install("PingPong");
        final Options options = Arguments.parseOrExit("PingPong", Options::parse, args);
        final int[] sizes = options.sizes();
        final int iterations = options.iterations();
        final DoorbellWait wait = options.doorbellWait();

        try (Qnix qnix = Qnix.initFromEnvironment())
        {
            final int me = qnix.name().pi();
            if (me > 1)
            {
                return; // two players; extra ranks just register and leave
            }
            final ProcessName peer = new ProcessName(qnix.name().ai(), 1 - me);
            if (0 == me)
            {
                System.out.printf("%-9s %-10s %10s %10s %10s%n", "bytes", "mode", "min us", "median us", "p99 us");
            }
            for (final int size : sizes)
            {
                run(qnix, peer, me, size, iterations, wait);
            }
        }
    }

    private static void run(final Qnix qnix, final ProcessName peer, final int me, final int size, final int iterations,
        final DoorbellWait wait)
    {
        final boolean isShort = size <= qnix.parameters().shortThreshold();
        final int warmup = Math.max(10, iterations / 10);
        final long[] halfRoundTrips = new long[iterations];
        final ReceiveStatus status = new ReceiveStatus();
        try (QnixBuffer out = qnix.allocateBuffer(Math.max(1, size));
             QnixBuffer in = qnix.allocateBuffer(Math.max(1, size)))
        {
            out.lock();
            in.lock();
            final MutableDirectBuffer data = out.buffer();
            for (int i = 0; i < size; i++)
            {
                data.putByte(i, (byte)(i * 13 + me));
            }
            for (int round = 0; round < warmup + iterations; round++)
            {
                final long start = System.nanoTime();
                if (0 == me)
                {
                    final int rx = qnix.recvContext(peer, TAG, true, in, 0, size);
                    qnix.receive(rx);
                    send(qnix, peer, out, size, isShort, wait);
                    qnix.awaitReceive(rx, status, wait, TIMEOUT_S, TimeUnit.SECONDS);
                    if (round >= warmup)
                    {
                        halfRoundTrips[round - warmup] = (System.nanoTime() - start) / 2;
                    }
                    check(in.buffer(), size, 1);
                }
                else
                {
                    final int rx = qnix.recvContext(peer, TAG, true, in, 0, size);
                    qnix.receive(rx);
                    qnix.awaitReceive(rx, status, wait, TIMEOUT_S, TimeUnit.SECONDS);
                    send(qnix, peer, out, size, isShort, wait);
                }
            }
        }
        if (0 == me)
        {
            Arrays.sort(halfRoundTrips);
            System.out.printf("%-9d %-10s %10.2f %10.2f %10.2f%n", size, isShort ? "Send_Short" : "Send",
                halfRoundTrips[0] / 1e3, halfRoundTrips[iterations / 2] / 1e3,
                halfRoundTrips[Math.min(iterations - 1, (int)(iterations * 0.99))] / 1e3);
            System.out.printf("PINGPONG size=%d mode=%s min_us=%.2f median_us=%.2f p99_us=%.2f%n", size,
                isShort ? "Send_Short" : "Send", halfRoundTrips[0] / 1e3, halfRoundTrips[iterations / 2] / 1e3,
                halfRoundTrips[Math.min(iterations - 1, (int)(iterations * 0.99))] / 1e3);
        }
    }

    private static void send(final Qnix qnix, final ProcessName peer, final QnixBuffer out, final int size,
        final boolean isShort, final DoorbellWait wait)
    {
        final int tx;
        if (isShort)
        {
            tx = qnix.sendContextShort(peer, TAG, true, out.buffer(), 0, size);
            qnix.sendShort(tx);
        }
        else
        {
            tx = qnix.sendContext(peer, TAG, true, out, 0, size);
            qnix.send(tx);
        }
        qnix.awaitSend(tx, wait, TIMEOUT_S, TimeUnit.SECONDS);
    }

    private static void check(final MutableDirectBuffer in, final int size, final int from)
    {
        for (int i = 0; i < size; i++)
        {
            if (in.getByte(i) != (byte)(i * 13 + from))
            {
                throw new IllegalStateException("byte " + i + " of a " + size + "-byte reply is wrong");
            }
        }
    }
}
