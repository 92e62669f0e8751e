package org.qnix.examples;

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
 * Bandwidth through the VIPL from rank 0 (the server) to rank 1 (the client), per message size, with
 * {@code window} messages in flight; both sides take every completion, of sends and receives alike,
 * from a completion queue ({@code VipCQWait}, then {@code VipSendDone} or {@code VipRecvDone} on the
 * queue it names). Run with {@code ./qnix run -n 2 -- ViplStream}.
 *
 * <p>VIA has no flow control of its own: a message finding no receive posted is dropped (Unreliable) or
 * breaks the connection. So the receiver keeps {@code window} receives posted, one per receive area,
 * and gives credits back as it takes and re-posts them: a send with no data whose immediate data is the
 * count (the sender keeps receives with no data segment posted for them), every half window and at
 * the end of each size, the last one marked as the acknowledgement of the size's last message. The
 * sender sends while it holds credits. Payload MB/s is measured on the sender from the first send to
 * that acknowledgement.
 *
 * <p>Options: {@code --sizes 4096,65536,2097152} (1 byte to 2 MiB), {@code --bytes TOTAL} per size
 * (default 64 MiB), {@code --window W} (1 to 64, default 8),
 * {@code --reliability unreliable|reliable-delivery|reliable-reception}. The receiver checks every byte
 * of every message (a pattern of each size), its length and its number, carried as immediate data.
 * Rank 0 prints {@code VIPL_STREAM size=... messages=... window=... reliability=... MB_per_s=...}.
 */
public final class ViplStream
{
    private static final long TIMEOUT_MS = 120_000;
    private static final int MAX_WINDOW = 64;
    /** A credit message's immediate data: the count, and this bit on the acknowledgement of a size's last message. */
    private static final int ACK = 0x4000_0000;
    private static final int DESCRIPTOR = 64;

    private ViplStream()
    {
    }

    /** What a run measures: its options, checked before anything starts. */
    public record Options(int[] sizes, long total, int window, Reliability reliability)
    {
        private static final String USAGE = "ViplStream [--sizes 4096,65536] [--bytes TOTAL] [--window W] " +
            "[--reliability unreliable|reliable-delivery|reliable-reception]";

        /** @throws IllegalArgumentException naming the bad option and value. */
        public static Options parse(final List<String> args)
        {
            int[] sizes = {4096, 16384, 65536, 262144, 1048576, 2097152};
            long total = 64L << 20;
            int window = 8;
            Reliability reliability = Reliability.RELIABLE_DELIVERY;
            final Arguments a = new Arguments(args);
            while (a.hasNext())
            {
                switch (a.next())
                {
                    case "--sizes":
                        sizes = a.sizes(1);
                        ViplPair.checkSizes(sizes);
                        break;
                    case "--bytes":
                        total = a.longAtLeast(1);
                        break;
                    case "--window":
                        window = a.intAtLeast(1);
                        if (window > MAX_WINDOW)
                        {
                            throw new IllegalArgumentException("--window " + window + ": at most " + MAX_WINDOW);
                        }
                        break;
                    case "--reliability":
                        reliability = ViplPair.reliability(a);
                        break;
                    default:
                        throw a.unknown(USAGE);
                }
            }
            return new Options(sizes, total, window, reliability);
        }

        int messages(final int size)
        {
            return (int)Math.min(Integer.MAX_VALUE / 2, Math.max(2L * window, total / size));
        }
    }

    public static void main(final String[] args)
    {
        OneLineFailures.install("ViplStream");
        final Options options = Arguments.parseOrExit("ViplStream", Options::parse, args);
        try (ViplPair pair = ViplPair.join("stream"))
        {
            if (!pair.isExtra())
            {
                new Side(pair, options).run();
            }
        }
    }

    /** One side: the sender (rank 0) or the receiver (rank 1). */
    private static final class Side
    {
        private final ViplPair pair;
        private final Options options;
        private final int window;
        private final int slot;
        private final MemoryRegion control;
        /** The sender's one buffer, or the receiver's areas, several to a region. */
        private final MemoryRegion[] data;
        private final int areasPerRegion;
        private final CompletionQueue cq;
        private final Vi vi;
        /** The sender's data sends and credit receives; the receiver's data receives and credit sends. */
        private final Descriptor[] dataRing;
        private final Descriptor[] creditRing;
        private final UnsafeBuffer expected;
        /** Messages so far, over every size: the next one's number. */
        private int number;

        Side(final ViplPair pair, final Options options)
        {
            this.pair = pair;
            this.options = options;
            this.window = options.window();
            final int maxSize = Arrays.stream(options.sizes()).max().orElse(1);
            final int maxTransfer = pair.nic().query().maxTransferSize();
            if (maxSize > maxTransfer)
            {
                throw new IllegalArgumentException("--sizes: " + maxSize + " bytes is more than the NIC's largest " +
                    "transfer, " + maxTransfer);
            }
            this.slot = (maxSize + DESCRIPTOR - 1) / DESCRIPTOR * DESCRIPTOR;
            final int largestMemory = pair.nic().parameters().maxMessageBytes();
            this.areasPerRegion = pair.isServer() ? 1 : Math.max(1, largestMemory / slot);
            final int regions = pair.isServer() ? 1 : (window + areasPerRegion - 1) / areasPerRegion;
            control = pair.register(2 * (MAX_WINDOW + 1) * DESCRIPTOR, false);
            data = new MemoryRegion[regions];
            for (int r = 0; r < regions; r++)
            {
                data[r] = pair.register(pair.isServer() ? slot : Math.min(window - r * areasPerRegion, areasPerRegion) *
                    slot, false);
            }
            dataRing = new Descriptor[window];
            creditRing = new Descriptor[window + 1];
            for (int k = 0; k < window; k++)
            {
                dataRing[k] = control.memory().descriptor(k * DESCRIPTOR);
            }
            for (int k = 0; k <= window; k++)
            {
                creditRing[k] = control.memory().descriptor((MAX_WINDOW + k) * DESCRIPTOR);
            }
            expected = new UnsafeBuffer(new byte[slot]);
            // Room for every completion that can be waiting: a window of each kind and the credits.
            cq = pair.nic().createCq(4 * (window + 1));
            vi = pair.nic().createVi(new ViAttributes(options.reliability(), slot, pair.ptag(), false, false), cq, cq);
        }

        void run()
        {
            if (pair.isServer())
            {
                for (final Descriptor credit : creditRing)
                {
                    postCreditReceive(credit);
                }
                System.out.printf("%-9s %9s %7s %-19s %10s%n", "bytes", "messages", "window", "reliability", "MB/s");
            }
            else
            {
                for (int k = 0; k < window; k++)
                {
                    postDataReceive(k);
                }
            }
            // The receives are with the NIC before the VI connects: nothing can arrive unexpected.
            pair.connect(vi, TIMEOUT_MS);
            for (final int size : options.sizes())
            {
                for (int i = 0; i < size; i++)
                {
                    expected.putByte(i, pattern(i, size));
                }
                if (pair.isServer())
                {
                    data[0].memory().buffer().putBytes(0, expected, 0, size);
                    send(size);
                }
                else
                {
                    receive(size);
                }
            }
            pair.finish();
            vi.disconnect();
        }

        /** The sender's side of one size. */
        private void send(final int size)
        {
            final int messages = options.messages(size);
            int credits = window;
            int sent = 0;
            int completed = 0;
            boolean acknowledged = false;
            final long start = System.nanoTime();
            while (completed < messages || !acknowledged)
            {
                while (credits > 0 && sent < messages && sent - completed < window)
                {
                    final Descriptor d = dataRing[sent % window];
                    d.fields().reset().control(ViplDescriptor.OP_SEND | ViplDescriptor.CONTROL_IMMEDIATE)
                        .segmentCount(1).length(size).immediateData(number + sent)
                        .dataSegment(0, data[0].address(), data[0].handle(), size);
                    vi.postSend(d, control);
                    sent++;
                    credits--;
                }
                final CompletionQueue.Completion c = cq.await(TIMEOUT_MS);
                if (c.sendQueue())
                {
                    ViplCompletions.expectDone(vi.sendDone(), "a data message sent");
                    completed++;
                }
                else
                {
                    final Descriptor credit = ViplCompletions.expectDone(vi.recvDone(), "a credit received");
                    credits += credit.immediateData() & ~ACK;
                    acknowledged = 0 != (credit.immediateData() & ACK);
                    postCreditReceive(credit);
                }
            }
            final long ns = System.nanoTime() - start;
            number += messages;
            final double mbPerS = (double)size * messages / (ns / 1e9) / 1e6;
            final String level = ViplPair.name(options.reliability());
            System.out.printf(Locale.ROOT, "%-9d %9d %7d %-19s %10.1f%n", size, messages, window, level, mbPerS);
            System.out.printf(Locale.ROOT, "VIPL_STREAM size=%d messages=%d window=%d reliability=%s MB_per_s=%.1f%n",
                size, messages, window, level, mbPerS);
        }

        /** The receiver's side of one size: every message checked, its receive posted again, credits given back. */
        private void receive(final int size)
        {
            final int messages = options.messages(size);
            final int batch = Math.max(1, window / 2);
            int received = 0;
            int credits = 0;
            int creditsSent = 0;
            int creditsCompleted = 0;
            while (received < messages || creditsCompleted < creditsSent)
            {
                final CompletionQueue.Completion c = cq.await(TIMEOUT_MS);
                if (c.sendQueue())
                {
                    ViplCompletions.expectDone(vi.sendDone(), "a credit sent");
                    creditsCompleted++;
                    continue;
                }
                final int k = number % window;
                final Descriptor d = vi.recvDone();
                ViplCompletions.expectDone(d, "message %d received", number);
                if (d != dataRing[k] || d.length() != size || d.immediateData() != number ||
                    0 == (d.status() & ViplDescriptor.STATUS_IMMEDIATE))
                {
                    throw new IllegalStateException("message " + number + " of " + size + " bytes arrived as " +
                        d.length() + " bytes numbered " + d.immediateData() + " in receive area " +
                        (d.offset() / DESCRIPTOR));
                }
                check(k, size);
                postDataReceive(k);
                number++;
                received++;
                credits++;
                if (credits >= batch || received == messages)
                {
                    if (creditsSent - creditsCompleted == creditRing.length)
                    {
                        throw new IllegalStateException("every credit descriptor is still posted");
                    }
                    final Descriptor credit = creditRing[creditsSent % creditRing.length];
                    credit.fields().reset().control(ViplDescriptor.OP_SEND | ViplDescriptor.CONTROL_IMMEDIATE)
                        .segmentCount(0).length(0).immediateData(credits | (received == messages ? ACK : 0));
                    vi.postSend(credit, control);
                    creditsSent++;
                    credits = 0;
                }
            }
        }

        private void postDataReceive(final int k)
        {
            final MemoryRegion region = data[k / areasPerRegion];
            final long at = (long)(k % areasPerRegion) * slot;
            dataRing[k].fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, region.address() + at, region.handle(), slot);
            vi.postRecv(dataRing[k], control);
        }

        private void postCreditReceive(final Descriptor credit)
        {
            credit.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0);
            vi.postRecv(credit, control);
        }

        /** Every byte of the message in area {@code k}, eight at a time. */
        private void check(final int k, final int size)
        {
            final UnsafeBuffer got = data[k / areasPerRegion].memory().buffer();
            final int at = (k % areasPerRegion) * slot;
            int i = 0;
            for (; i + Long.BYTES <= size; i += Long.BYTES)
            {
                if (got.getLong(at + i) != expected.getLong(i))
                {
                    break;
                }
            }
            for (; i < size; i++)
            {
                if (got.getByte(at + i) != expected.getByte(i))
                {
                    throw new IllegalStateException("byte " + i + " of message " + number + " (" + size +
                        " bytes) is " + got.getByte(at + i) + ", not " + expected.getByte(i));
                }
            }
        }
    }

    private static byte pattern(final int i, final int size)
    {
        return (byte)(i * 7 + size * 3 + 1);
    }
}
