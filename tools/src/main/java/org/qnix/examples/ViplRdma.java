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
 * RDMA write through the VIPL: rank 0 (the server) exports a region, registered with RDMA write
 * enabled, and tells rank 1 (the client) its address and memory handle; the client writes into it at
 * the address it chooses, without the server taking part, and then says so. Run with
 * {@code ./qnix run -n 2 -- ViplRdma}.
 *
 * <p>Each write is done twice: without immediate data, followed by a Send that tells the server the
 * write is done (a VI's work is carried and received in posting order, so the Send arrives after the
 * written bytes), and with immediate data, whose arrival completes one of the server's receives (a
 * receive with no data segment) carrying the write's number: no second message. The server checks
 * every byte written, at an odd offset that changes from write to write, and that the bytes around
 * the target are untouched. RDMA read is not shown: the NIC does not carry it yet.
 *
 * <p>Options: {@code --sizes 1,4096,65536} (0 to 2 MiB), {@code --iterations N} (writes per size and
 * kind, default 100), {@code --reliability unreliable|reliable-delivery|reliable-reception} (default
 * reliable-reception: the client's write completes once its bytes are in the server's memory). Rank 0
 * prints {@code VIPL_RDMA size=... immediate=no|yes writes=... reliability=... mean_us=...}, the
 * mean time from asking for a write to having checked it.
 */
public final class ViplRdma
{
    private static final long TIMEOUT_MS = 60_000;
    private static final byte UNTOUCHED = (byte)0xA5;
    /** Where writes go: past a guard, at an odd offset that moves. */
    private static final int GUARD = 1024;
    private static final int RECEIVE = 0;
    private static final int SEND = 128;
    private static final int WRITE = 256;
    private static final int HELLO = 2048;

    private ViplRdma()
    {
    }

    /** What a run does: its options, checked before anything starts. */
    public record Options(int[] sizes, int iterations, Reliability reliability)
    {
        private static final String USAGE = "ViplRdma [--sizes 1,4096,65536] [--iterations N] " +
            "[--reliability unreliable|reliable-delivery|reliable-reception]";

        /** @throws IllegalArgumentException naming the bad option and value. */
        public static Options parse(final List<String> args)
        {
            int[] sizes = {1, 100, 4096, 65536, 1048576};
            int iterations = 100;
            Reliability reliability = Reliability.RELIABLE_RECEPTION;
            final Arguments a = new Arguments(args);
            while (a.hasNext())
            {
                switch (a.next())
                {
                    case "--sizes":
                        sizes = a.sizes(0);
                        ViplPair.checkSizes(sizes);
                        break;
                    case "--iterations":
                        iterations = a.intAtLeast(1);
                        break;
                    case "--reliability":
                        reliability = ViplPair.reliability(a);
                        break;
                    default:
                        throw a.unknown(USAGE);
                }
            }
            return new Options(sizes, iterations, reliability);
        }
    }

    public static void main(final String[] args)
    {
        final Options options = Arguments.parseOrExit("ViplRdma", Options::parse, args);
        try (ViplPair pair = ViplPair.join("rdma"))
        {
            if (!pair.isExtra())
            {
                new Side(pair, options).run();
            }
        }
    }

    private static final class Side
    {
        private final ViplPair pair;
        private final Options options;
        private final int maxSize;
        private final MemoryRegion control;
        /** The server's exported region, or the client's source buffer. */
        private final MemoryRegion data;
        private final Descriptor receive;
        private final Descriptor send;
        private final Descriptor write;
        private final Vi vi;
        /** Both queues of the VI report to it: the waits sleep on it (see {@link ViplPair#await}). */
        private final CompletionQueue cq;
        private long targetAddress;
        private int targetHandle;
        /** Writes so far, over every size and kind: the next one's number. */
        private int number;

        Side(final ViplPair pair, final Options options)
        {
            this.pair = pair;
            this.options = options;
            this.maxSize = Arrays.stream(options.sizes()).max().orElse(0);
            final int maxTransfer = pair.nic().query().maxTransferSize();
            if (maxSize > maxTransfer)
            {
                throw new IllegalArgumentException("--sizes: " + maxSize + " bytes is more than the NIC's largest " +
                    "transfer, " + maxTransfer);
            }
            final boolean server = pair.isServer();
            control = pair.register(4096, false);
            // The target: the largest write at the furthest offset, and a guard on each side.
            final int length = server ? Math.min(maxSize + 3 * GUARD, pair.nic().parameters().maxMessageBytes()) :
                Math.max(1, maxSize);
            data = pair.register(length, server);
            receive = control.memory().descriptor(RECEIVE);
            send = control.memory().descriptor(SEND);
            write = control.memory().descriptor(WRITE);
            // Only the server's VI takes RDMA writes; the region's enable and the VI's are both needed.
            cq = pair.nic().createCq(16);
            vi = pair.nic().createVi(new ViAttributes(options.reliability(), Math.max(1, maxSize), pair.ptag(), server,
                false), cq, cq);
        }

        void run()
        {
            final boolean server = pair.isServer();
            final int total = options.sizes().length * 2 * options.iterations();
            // The first message each side expects is posted before the VI connects: the server's the
            // notice of write 0, the client's the server's region.
            postReceive(server ? 0 : HELLO_LENGTH);
            pair.connect(vi, TIMEOUT_MS);
            if (server)
            {
                data.memory().buffer().setMemory(0, (int)data.length(), UNTOUCHED);
                // The export: the region's address and handle, for the client's writes; the go-ahead of write 0.
                final UnsafeBuffer c = control.memory().buffer();
                c.putLong(HELLO, data.address());
                c.putInt(HELLO + Long.BYTES, data.handle());
                sendMessage(HELLO_LENGTH, 0);
                ViplPair.expectDone(ViplPair.await(vi, cq, true, TIMEOUT_MS), "the region sent");
                System.out.printf("%-9s %-9s %7s %-19s %10s%n", "bytes", "immediate", "writes", "reliability",
                    "mean us");
            }
            else
            {
                final Descriptor hello = ViplPair.expectDone(ViplPair.await(vi, cq, false, TIMEOUT_MS), "the server's region");
                targetAddress = control.memory().buffer().getLong(HELLO);
                targetHandle = control.memory().buffer().getInt(HELLO + Long.BYTES);
                if (hello.length() != HELLO_LENGTH)
                {
                    throw new IllegalStateException("the server's region came as " + hello.length() + " bytes");
                }
                final UnsafeBuffer source = data.memory().buffer();
                for (int i = 0; i < Math.max(1, maxSize); i++)
                {
                    source.putByte(i, (byte)(i * 11 + 3));
                }
            }
            for (final int size : options.sizes())
            {
                for (final boolean immediate : new boolean[] {false, true})
                {
                    final long start = System.nanoTime();
                    for (int i = 0; i < options.iterations(); i++)
                    {
                        final boolean last = number + 1 == total;
                        if (server)
                        {
                            serve(size, immediate, last);
                        }
                        else
                        {
                            write(size, immediate, last);
                        }
                        number++;
                    }
                    if (server)
                    {
                        final double meanUs = (System.nanoTime() - start) / 1e3 / options.iterations();
                        final String level = ViplPair.name(options.reliability());
                        System.out.printf(Locale.ROOT, "%-9d %-9s %7d %-19s %10.2f%n", size, immediate ? "yes" : "no",
                            options.iterations(), level, meanUs);
                        System.out.printf(Locale.ROOT, "VIPL_RDMA size=%d immediate=%s writes=%d reliability=%s " +
                            "mean_us=%.2f%n", size, immediate ? "yes" : "no", options.iterations(), level, meanUs);
                    }
                }
            }
            pair.finish();
            vi.disconnect();
        }

        /**
         * The server's side of one write: takes its notice, checks it and the bytes around it, and (unless
         * it was the last) posts the next notice's receive and sends the next go-ahead.
         */
        private void serve(final int size, final boolean immediate, final boolean last)
        {
            final Descriptor notice = ViplPair.expectDone(ViplPair.await(vi, cq, false, TIMEOUT_MS), "write " + number);
            final int status = immediate ?
                ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_REMOTE_RDMA_WRITE | ViplDescriptor.STATUS_IMMEDIATE :
                ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE | ViplDescriptor.STATUS_IMMEDIATE;
            if (notice.status() != status || notice.immediateData() != number)
            {
                throw new IllegalStateException("write " + number + ": its notice completed with status 0x" +
                    Integer.toHexString(notice.status()) + " and immediate data " + notice.immediateData());
            }
            final UnsafeBuffer target = data.memory().buffer();
            final int at = offset(number);
            for (int i = 0; i < size; i++)
            {
                if (target.getByte(at + i) != (byte)(i * 11 + 3))
                {
                    throw new IllegalStateException("byte " + i + " of write " + number + " (" + size + " bytes at " +
                        at + ") is " + target.getByte(at + i));
                }
            }
            for (int i = at - GUARD; i < at + size + GUARD; i++)
            {
                if ((i < at || i >= at + size) && target.getByte(i) != UNTOUCHED)
                {
                    throw new IllegalStateException("byte " + i + " of the region, outside write " + number + " (" +
                        size + " bytes at " + at + "), was written");
                }
            }
            target.setMemory(at, size, UNTOUCHED);
            if (!last)
            {
                postReceive(0);
                sendMessage(0, number + 1);
                ViplPair.expectDone(ViplPair.await(vi, cq, true, TIMEOUT_MS), "the go-ahead of write " + (number + 1));
            }
        }

        /** The client's side of one write: waits for the go-ahead (the region was write 0's), writes, tells the server. */
        private void write(final int size, final boolean immediate, final boolean last)
        {
            if (number > 0)
            {
                final Descriptor go = ViplPair.expectDone(ViplPair.await(vi, cq, false, TIMEOUT_MS), "the go-ahead of write " + number);
                if (go.immediateData() != number)
                {
                    throw new IllegalStateException("the go-ahead of write " + go.immediateData() + " came for " +
                        number);
                }
            }
            if (!last)
            {
                // The next go-ahead's receive, before this write lets the server send it.
                postReceive(0);
            }
            write.fields().reset()
                .control(ViplDescriptor.OP_RDMA_WRITE | (immediate ? ViplDescriptor.CONTROL_IMMEDIATE : 0))
                .segmentCount(size > 0 ? 1 : 0).length(size).immediateData(immediate ? number : 0)
                .addressSegment(targetAddress + offset(number), targetHandle);
            if (size > 0)
            {
                write.fields().dataSegment(0, data.address(), data.handle(), size);
            }
            vi.postSend(write, control);
            if (!immediate)
            {
                // Carried after the write's bytes, as the VI sends in posting order.
                sendMessage(0, number);
            }
            ViplPair.expectDone(ViplPair.await(vi, cq, true, TIMEOUT_MS), "write " + number);
            if (!immediate)
            {
                ViplPair.expectDone(ViplPair.await(vi, cq, true, TIMEOUT_MS), "the notice of write " + number);
            }
        }

        private void postReceive(final int bytes)
        {
            receive.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(bytes > 0 ? 1 : 0);
            if (bytes > 0)
            {
                receive.fields().dataSegment(0, control.memory().address(HELLO), control.handle(), bytes);
            }
            vi.postRecv(receive, control);
        }

        /** A Send of {@code bytes} of the hello area (0: none) with immediate data. */
        private void sendMessage(final int bytes, final int immediateData)
        {
            send.fields().reset().control(ViplDescriptor.OP_SEND | ViplDescriptor.CONTROL_IMMEDIATE)
                .segmentCount(bytes > 0 ? 1 : 0).length(bytes).immediateData(immediateData);
            if (bytes > 0)
            {
                send.fields().dataSegment(0, control.memory().address(HELLO), control.handle(), bytes);
            }
            vi.postSend(send, control);
        }
    }

    private static final int HELLO_LENGTH = Long.BYTES + Integer.BYTES;

    /** Write {@code number}'s offset in the server's region: odd, moving, after the guard. */
    private static int offset(final int number)
    {
        return GUARD + 1 + 2 * (number % (GUARD / 2));
    }
}
