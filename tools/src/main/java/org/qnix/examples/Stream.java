package org.qnix.examples;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.ProcessName;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.ReceiveStatus;

/**
 * Bandwidth from rank 0 to rank 1 with a window of outstanding sends, per message size: zero-copy from
 * one locked buffer on the sender into {@code window} locked buffers on the receiver, which keeps a
 * receive posted for each. Payload bytes per second are measured on the sender from the first send to
 * the receiver's acknowledgement of the last message. Run with {@code ./qnix run -n 2 -- Stream}.
 *
 * <p>Options: {@code --sizes 4096,65536,2097152}, {@code --bytes TOTAL} per size (default 64 MiB),
 * {@code --window W} (default 8). Rank 0 prints {@code STREAM size=... messages=... MB_per_s=...}.
 */
public final class Stream
{
    private static final int DATA = 1;
    private static final int ACK = 2;
    private static final long TIMEOUT_S = 120;

    private Stream()
    {
    }

    /** What a run measures: its options, checked before anything starts. */
    public record Options(int[] sizes, long total, int window)
    {
        private static final String USAGE = "Stream [--sizes 4096,65536] [--bytes TOTAL] [--window W]";

        /** @throws IllegalArgumentException naming the bad option and value. */
        public static Options parse(final List<String> args)
        {
            int[] sizes = {4096, 16384, 65536, 262144, 1048576, 2097152};
            long total = 64L << 20;
            int window = 8;
            final Arguments a = new Arguments(args);
            while (a.hasNext())
            {
                switch (a.next())
                {
                    case "--sizes":
                        sizes = a.sizes(1);
                        break;
                    case "--bytes":
                        total = a.longAtLeast(1);
                        break;
                    case "--window":
                        window = a.intAtLeast(1);
                        break;
                    default:
                        throw a.unknown(USAGE);
                }
            }
            return new Options(sizes, total, window);
        }
    }

    public static void main(final String[] args)
    {
        OneLineFailures.install("Stream");
        final Options options = Arguments.parseOrExit("Stream", Options::parse, args);
        final int[] sizes = options.sizes();
        final long total = options.total();
        int window = options.window();

        try (Qnix qnix = Qnix.initFromEnvironment())
        {
            final int me = qnix.name().pi();
            if (me > 1)
            {
                return;
            }
            window = Math.min(window, qnix.parameters().contextsPerProcess() - 1);
            if (window < 1)
            {
                throw new IllegalArgumentException("Stream needs at least 2 contexts per process; cluster '" +
                    qnix.clusterName() + "' has " + qnix.parameters().contextsPerProcess() +
                    " (cluster up --contexts)");
            }
            final ProcessName peer = new ProcessName(qnix.name().ai(), 1 - me);
            if (0 == me)
            {
                System.out.printf("%-9s %9s %7s %10s%n", "bytes", "messages", "window", "MB/s");
            }
            for (final int size : sizes)
            {
                final int messages = (int)Math.min(Integer.MAX_VALUE / 2, Math.max(2L * window, total / size));
                if (0 == me)
                {
                    send(qnix, peer, size, messages, window);
                }
                else
                {
                    receive(qnix, peer, size, messages, window);
                }
            }
        }
    }

    private static void send(final Qnix qnix, final ProcessName peer, final int size, final int messages,
        final int window)
    {
        final ReceiveStatus status = new ReceiveStatus();
        final int[] inFlight = new int[window];
        try (QnixBuffer out = qnix.allocateBuffer(size); QnixBuffer ack = qnix.allocateBuffer(1))
        {
            out.lock();
            ack.lock();
            for (int i = 0; i < size; i++)
            {
                out.buffer().putByte(i, (byte)i);
            }
            final int ackContext = qnix.recvContext(peer, ACK, true, ack, 0, 0);
            qnix.receive(ackContext);
            final long start = System.nanoTime();
            for (int m = 0; m < messages; m++)
            {
                final int slot = m % window;
                if (m >= window)
                {
                    qnix.waitForSend(inFlight[slot], TIMEOUT_S, TimeUnit.SECONDS);
                }
                inFlight[slot] = qnix.sendContext(peer, DATA, true, out, 0, size);
                qnix.send(inFlight[slot]);
            }
            for (int m = Math.max(0, messages - window); m < messages; m++)
            {
                qnix.waitForSend(inFlight[m % window], TIMEOUT_S, TimeUnit.SECONDS);
            }
            qnix.waitForReceive(ackContext, status, TIMEOUT_S, TimeUnit.SECONDS);
            final double seconds = (System.nanoTime() - start) / 1e9;
            final double mbPerS = (double)size * messages / seconds / 1e6;
            System.out.printf("%-9d %9d %7d %10.1f%n", size, messages, window, mbPerS);
            System.out.printf("STREAM size=%d messages=%d window=%d MB_per_s=%.1f%n", size, messages, window, mbPerS);
        }
    }

    private static void receive(final Qnix qnix, final ProcessName peer, final int size, final int messages,
        final int window)
    {
        final ReceiveStatus status = new ReceiveStatus();
        final QnixBuffer[] in = new QnixBuffer[window];
        final int[] posted = new int[window];
        try (QnixBuffer ack = qnix.allocateBuffer(1))
        {
            ack.lock();
            for (int w = 0; w < window; w++)
            {
                in[w] = qnix.allocateBuffer(size);
                in[w].lock();
            }
            for (int m = 0; m < Math.min(window, messages); m++)
            {
                posted[m] = qnix.recvContext(peer, DATA, true, in[m], 0, size);
                qnix.receive(posted[m]);
            }
            for (int m = 0; m < messages; m++)
            {
                final int slot = m % window;
                qnix.waitForReceive(posted[slot], status, TIMEOUT_S, TimeUnit.SECONDS);
                if (status.length() != size || in[slot].buffer().getByte(size - 1) != (byte)(size - 1))
                {
                    throw new IllegalStateException("message " + m + " arrived wrong: " + status);
                }
                if (m + window < messages)
                {
                    posted[slot] = qnix.recvContext(peer, DATA, true, in[slot], 0, size);
                    qnix.receive(posted[slot]);
                }
            }
            final int ackContext = qnix.sendContextShort(peer, ACK, true, ack.buffer(), 0, 0);
            qnix.sendShort(ackContext);
            qnix.waitForSend(ackContext, TIMEOUT_S, TimeUnit.SECONDS);
        }
        finally
        {
            for (final QnixBuffer buffer : in)
            {
                if (null != buffer)
                {
                    buffer.close();
                }
            }
        }
    }
}
