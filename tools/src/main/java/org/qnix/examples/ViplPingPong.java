package org.qnix.examples;

import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ViplDescriptor;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;

/**
 * One-way latency (half the round trip) between two processes through the VIPL, per message size: a
 * VI of rank 1 (the client) connected to one of rank 0 (the server), each message described by a
 * descriptor in registered memory, posted on the VI's send queue, completed in the receiver's posted
 * receive. Run with {@code ./qnix run -n 2 -- ViplPingPong}.
 *
 * <p>Options: {@code --op send|rdma-imm} (a Send into the peer's posted receive, or an RDMA write with
 * immediate data straight into the peer's registered memory, whose immediate data completes a receive
 * with no data segment), {@code --reliability unreliable|reliable-delivery|reliable-reception},
 * {@code --sizes 0,8,1024,65536} (at most 2 MiB), {@code --iterations N} (per size, after a warm-up of
 * N/10). Rank 0 prints one line per size, {@code VIPL_PINGPONG size=... op=... reliability=...
 * min_us=... median_us=... p99_us=...}, after checking every byte of every reply; rank 1 checks every
 * byte of every request. The bytes follow a pattern per direction, with the message's number at both
 * ends of it, so that a message that did not land shows.
 *
 * <p>Each side keeps a receive posted before the message it waits for can be sent: the first before
 * the VI connects (VIA takes receives on an Idle VI), each next one before the message that makes the
 * peer answer. At the reliable levels a message finding no receive breaks the connection; Unreliable
 * drops it.
 */
public final class ViplPingPong
{
    private static final long TIMEOUT_MS = 60_000;
    /** Descriptor slots in the control memory, 128 bytes apart (64-byte aligned, room for an address segment). */
    private static final int RECEIVE_0 = 0;
    private static final int SEND = 256;
    private static final int HELLO_RECEIVE = 384;
    private static final int HELLO_SEND = 512;
    /** The hello messages: each side's two receive areas, address and handle, for RDMA. */
    private static final int HELLO_IN = 1024;
    private static final int HELLO_OUT = 1088;
    private static final int HELLO_LENGTH = 2 * (Long.BYTES + Integer.BYTES);

    private ViplPingPong()
    {
    }

    /** What a run measures: its options, checked before anything starts. */
    public record Options(boolean rdma, Reliability reliability, int[] sizes, int iterations)
    {
        private static final String USAGE = "ViplPingPong [--op send|rdma-imm] " +
            "[--reliability unreliable|reliable-delivery|reliable-reception] [--sizes 0,8,1024] [--iterations N]";

        /** @throws IllegalArgumentException naming the bad option and value. */
        public static Options parse(final List<String> args)
        {
            boolean rdma = false;
            Reliability reliability = Reliability.RELIABLE_DELIVERY;
            int[] sizes = {0, 8, 64, 512, 1024, 4096, 65536};
            int iterations = 2000;
            final Arguments a = new Arguments(args);
            while (a.hasNext())
            {
                switch (a.next())
                {
                    case "--op":
                        rdma = "rdma-imm".equals(a.oneOf("send", "rdma-imm"));
                        break;
                    case "--reliability":
                        reliability = ViplPair.reliability(a);
                        break;
                    case "--sizes":
                        sizes = a.sizes(0);
                        ViplPair.checkSizes(sizes);
                        break;
                    case "--iterations":
                        iterations = a.intAtLeast(1);
                        break;
                    default:
                        throw a.unknown(USAGE);
                }
            }
            return new Options(rdma, reliability, sizes, iterations);
        }
    }

    public static void main(final String[] args)
    {
        OneLineFailures.install("ViplPingPong");
        final Options options = Arguments.parseOrExit("ViplPingPong", Options::parse, args);
        try (ViplPair pair = ViplPair.join("pingpng"))
        {
            if (!pair.isExtra())
            {
                new Player(pair, options).run();
            }
        }
    }

    /** One side: its VI, its memory and descriptors, and the count of messages each way. */
    private static final class Player
    {
        private final ViplPair pair;
        private final Options options;
        private final boolean server;
        private final int from;
        private final int slot;
        private final int total;
        private final MemoryRegion control;
        private final MemoryRegion out;
        private final MemoryRegion[] in = new MemoryRegion[2];
        private final Descriptor[] receive = new Descriptor[2];
        private final Descriptor send;
        private final Vi vi;
        /** Both queues of the VI report to it: the waits sleep on it (see {@link ViplCompletions#await}). */
        private final CompletionQueue cq;
        /** The peer's receive areas, where RDMA writes go. */
        private final long[] peerAddress = new long[2];
        private final int[] peerHandle = new int[2];
        /** Messages received so far: the next one's number (both sides count the same messages). */
        private int received;
        /** Receives posted so far, the hello's not counted. */
        private int postedReceives;
        /** The size the out buffer's ends carry a number for. */
        private int stamped;

        Player(final ViplPair pair, final Options options)
        {
            this.pair = pair;
            this.options = options;
            this.server = pair.isServer();
            this.from = server ? 0 : 1;
            final int maxSize = Arrays.stream(options.sizes()).max().orElse(0);
            final int maxTransfer = pair.nic().query().maxTransferSize();
            if (maxSize > maxTransfer)
            {
                throw new IllegalArgumentException("--sizes: " + maxSize + " bytes is more than the NIC's largest " +
                    "transfer, " + maxTransfer);
            }
            this.slot = Math.max(1, maxSize);
            this.total = options.sizes().length * (warmup(options.iterations()) + options.iterations());
            final boolean rdma = options.rdma();
            control = pair.register(4096, false);
            out = pair.register(slot, false);
            in[0] = pair.register(slot, rdma);
            in[1] = pair.register(slot, rdma);
            receive[0] = control.memory().descriptor(RECEIVE_0);
            receive[1] = control.memory().descriptor(RECEIVE_0 + 128);
            send = control.memory().descriptor(SEND);
            final UnsafeBuffer data = out.memory().buffer();
            for (int i = 0; i < slot; i++)
            {
                data.putByte(i, pattern(i, from));
            }
            cq = pair.nic().createCq(16);
            vi = pair.nic().createVi(new ViAttributes(options.reliability(), slot, pair.ptag(), rdma, false), cq, cq);
        }

        void run()
        {
            // Posted on the Idle VI: the hello, then the first message, can arrive as soon as it connects.
            final Descriptor helloIn = control.memory().descriptor(HELLO_RECEIVE);
            helloIn.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, control.memory().address(HELLO_IN), control.handle(), HELLO_LENGTH);
            vi.postRecv(helloIn, control);
            postReceive();
            pair.connect(vi, TIMEOUT_MS);

            // The hello: where this side's receive areas are, for the peer's RDMA writes.
            final UnsafeBuffer c = control.memory().buffer();
            for (int k = 0; k < 2; k++)
            {
                c.putLong(HELLO_OUT + k * 12, in[k].address());
                c.putInt(HELLO_OUT + k * 12 + Long.BYTES, in[k].handle());
            }
            final Descriptor helloOut = control.memory().descriptor(HELLO_SEND);
            helloOut.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(HELLO_LENGTH)
                .dataSegment(0, control.memory().address(HELLO_OUT), control.handle(), HELLO_LENGTH);
            vi.postSend(helloOut, control);
            ViplCompletions.expectDone(ViplCompletions.await(vi, cq, true, TIMEOUT_MS), "the hello sent");
            ViplCompletions.expectDone(ViplCompletions.await(vi, cq, false, TIMEOUT_MS), "the hello received");
            for (int k = 0; k < 2; k++)
            {
                peerAddress[k] = c.getLong(HELLO_IN + k * 12);
                peerHandle[k] = c.getInt(HELLO_IN + k * 12 + Long.BYTES);
            }

            if (server)
            {
                System.out.printf("%-9s %-9s %-19s %10s %10s %10s%n", "bytes", "op", "reliability", "min us",
                    "median us", "p99 us");
            }
            for (final int size : options.sizes())
            {
                measure(size);
            }
            pair.finish();
            vi.disconnect();
        }

        private void measure(final int size)
        {
            final int iterations = options.iterations();
            final int warmup = warmup(iterations);
            final long[] halfRoundTrips = new long[iterations];
            for (int round = 0; round < warmup + iterations; round++)
            {
                final int number = received;
                if (server)
                {
                    // The pinger: its round trip is timed, the check comes after it.
                    final long start = System.nanoTime();
                    sendMessage(size, number);
                    sent();
                    awaitMessage(size);
                    final long end = System.nanoTime();
                    postReceive();
                    check(number & 1, size, number);
                    if (round >= warmup)
                    {
                        halfRoundTrips[round - warmup] = (end - start) / 2;
                    }
                }
                else
                {
                    // The echo: the next receive is posted before the reply that lets the pinger send again,
                    // and the request is checked while the reply travels.
                    awaitMessage(size);
                    postReceive();
                    sendMessage(size, number);
                    check(number & 1, size, number);
                    sent();
                }
            }
            if (server)
            {
                Arrays.sort(halfRoundTrips);
                final double min = halfRoundTrips[0] / 1e3;
                final double median = halfRoundTrips[iterations / 2] / 1e3;
                final double p99 = halfRoundTrips[Math.min(iterations - 1, (int)(iterations * 0.99))] / 1e3;
                final String op = options.rdma() ? "rdma-imm" : "send";
                final String level = ViplPair.name(options.reliability());
                System.out.printf(Locale.ROOT, "%-9d %-9s %-19s %10.2f %10.2f %10.2f%n", size, op, level, min, median,
                    p99);
                System.out.printf(Locale.ROOT, "VIPL_PINGPONG size=%d op=%s reliability=%s min_us=%.2f median_us=%.2f " +
                    "p99_us=%.2f%n", size, op, level, min, median, p99);
            }
        }

        /** Takes the send's completion; the buffer's stamp is undone once the NIC has read it. */
        private void sent()
        {
            ViplCompletions.expectDone(ViplCompletions.await(vi, cq, true, TIMEOUT_MS), "a message sent");
        }

        /** Posts the receive for message number {@code received + (posted so far)}: areas alternate. */
        private void postReceive()
        {
            // Receives complete in posting order; the one to post is for the message after the last posted.
            final int number = postedReceives;
            if (number >= total)
            {
                return;
            }
            postedReceives++;
            final int k = number & 1;
            final Descriptor d = receive[k];
            if (options.rdma())
            {
                d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0);
            }
            else
            {
                d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                    .dataSegment(0, in[k].address(), in[k].handle(), slot);
            }
            vi.postRecv(d, control);
        }

        /** Sends message {@code number} of {@code size} bytes: the pattern with the number at both ends. */
        private void sendMessage(final int size, final int number)
        {
            stamp(size, number);
            final int k = number & 1;
            if (options.rdma())
            {
                send.fields().reset()
                    .control(ViplDescriptor.OP_RDMA_WRITE | ViplDescriptor.CONTROL_IMMEDIATE)
                    .segmentCount(size > 0 ? 1 : 0).length(size).immediateData(number)
                    .addressSegment(peerAddress[k], peerHandle[k]);
                if (size > 0)
                {
                    send.fields().dataSegment(0, out.address(), out.handle(), size);
                }
            }
            else
            {
                send.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(size > 0 ? 1 : 0).length(size);
                if (size > 0)
                {
                    send.fields().dataSegment(0, out.address(), out.handle(), size);
                }
            }
            vi.postSend(send, control);
        }

        private Descriptor awaitMessage(final int size)
        {
            final Descriptor d = ViplCompletions.await(vi, cq, false, TIMEOUT_MS);
            final int number = received++;
            if (d != receive[number & 1])
            {
                throw new IllegalStateException("message " + number + " completed another receive");
            }
            final int expected = options.rdma() ?
                ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_REMOTE_RDMA_WRITE | ViplDescriptor.STATUS_IMMEDIATE :
                ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE;
            if (expected != d.status())
            {
                throw new IllegalStateException("message " + number + " of " + size + " bytes completed with status 0x" +
                    Integer.toHexString(d.status()) + ", not 0x" + Integer.toHexString(expected));
            }
            if (options.rdma() ? d.immediateData() != number : d.length() != size)
            {
                throw new IllegalStateException("message " + number + ": immediate data " + d.immediateData() +
                    ", length " + d.length() + " (" + size + " bytes sent)");
            }
            return d;
        }

        /** The message's number at the start and the end of the message (as far as it is long enough). */
        private void stamp(final int size, final int number)
        {
            final UnsafeBuffer data = out.memory().buffer();
            // The previous size's ends back to the pattern (its send completed).
            for (int i = 0; i < Math.min(stamped, Integer.BYTES); i++)
            {
                data.putByte(i, pattern(i, from));
            }
            for (int i = Math.max(0, stamped - Integer.BYTES); i < stamped; i++)
            {
                data.putByte(i, pattern(i, from));
            }
            if (size >= Integer.BYTES)
            {
                data.putInt(0, number, ByteOrder.LITTLE_ENDIAN);
            }
            if (size >= 2 * Integer.BYTES)
            {
                data.putInt(size - Integer.BYTES, number, ByteOrder.LITTLE_ENDIAN);
            }
            stamped = size;
        }

        /** Every byte of message {@code number} in receive area {@code k}: the peer's pattern and the number. */
        private void check(final int k, final int size, final int number)
        {
            final UnsafeBuffer got = in[k].memory().buffer();
            final int peer = 1 - from;
            for (int i = 0; i < size; i++)
            {
                if (got.getByte(i) != expected(i, size, number, peer))
                {
                    throw new IllegalStateException("byte " + i + " of message " + number + " (" + size +
                        " bytes) is " + got.getByte(i) + ", not " + expected(i, size, number, peer));
                }
            }
        }
    }

    static int warmup(final int iterations)
    {
        return Math.max(10, iterations / 10);
    }

    private static byte pattern(final int i, final int from)
    {
        return (byte)(i * 13 + from);
    }

    private static byte expected(final int i, final int size, final int number, final int from)
    {
        if (size >= Integer.BYTES && i < Integer.BYTES)
        {
            return (byte)(number >>> (8 * i));
        }
        if (size >= 2 * Integer.BYTES && i >= size - Integer.BYTES)
        {
            return (byte)(number >>> (8 * (i - size + Integer.BYTES)));
        }
        return pattern(i, from);
    }
}
