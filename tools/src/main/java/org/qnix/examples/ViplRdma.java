package org.qnix.examples;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ViplDescriptor;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;

/**
 * RDMA write and read through the VIPL: rank 0 (the server) exports a region, registered with RDMA
 * write and read enabled, and tells rank 1 (the client) its address and memory handle; the client
 * writes into it, or reads from it, at the address it chooses, without the server taking part, and
 * then says so. Run with {@code ./qnix run -n 2 -- ViplRdma}.
 *
 * <p>A write is done without immediate data ({@code write}), followed by a Send that tells the server
 * the write is done (a VI's work is carried and received in posting order, so the Send arrives after
 * the written bytes), or with immediate data ({@code write-imm}), whose arrival completes one of the
 * server's receives (a receive with no data segment) carrying the write's number: no second message.
 * The server checks every byte written, at an odd offset that changes from write to write, and that
 * the bytes around the target are untouched. For a {@code read} the server fills its region at that
 * offset with bytes that change from read to read; the client reads them into its own region (the
 * server's NIC answers without any descriptor of the server) and checks every byte and the bytes
 * around them. Its Send telling the server that the read is done carries QFENCE: posted right behind
 * the read, it starts only once the read's data has landed, so the server does not refill the bytes
 * while its NIC may still be reading them. VIA carries RDMA read on the reliable levels only.
 *
 * <p>Options: {@code --op write|write-imm|read|all} (default all: each of them, read only on a
 * reliable level), {@code --sizes 1,4096,65536} (0 to 2 MiB less 3 KiB, the guards), {@code
 * --iterations N} (operations per size and kind, default 100), {@code --reliability
 * unreliable|reliable-delivery|reliable-reception} (default reliable-reception: the client's write
 * completes once its bytes are in the server's memory). Rank 0 prints {@code VIPL_RDMA size=...
 * op=write|write-imm|read count=... reliability=... mean_us=...}, the mean time from asking for an
 * operation to hearing (read) or having checked (writes) that it was done.
 */
public final class ViplRdma
{
    private static final long TIMEOUT_MS = 60_000;
    private static final byte UNTOUCHED = (byte)0xA5;
    /** Where writes go: past a guard, at an odd offset that moves. */
    private static final int GUARD = 1024;
    private static final int RECEIVE = 0;
    private static final int SEND = 128;
    private static final int RDMA = 256;
    private static final int HELLO = 2048;

    private ViplRdma()
    {
    }

    /** The operations, as {@code --op} names them. */
    public enum Op
    {
        WRITE, WRITE_IMM, READ;

        /** @return the name {@code --op} and the rows give it. */
        public String label()
        {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /**
     * What a run does: its options, checked before anything starts.
     *
     * @param ops the operations done at each size, in this order.
     */
    public record Options(List<Op> ops, int[] sizes, int iterations, Reliability reliability)
    {
        private static final String USAGE = "ViplRdma [--op write|write-imm|read|all] [--sizes 1,4096,65536] " +
            "[--iterations N] [--reliability unreliable|reliable-delivery|reliable-reception]";

        /** @throws IllegalArgumentException naming the bad option and value. */
        public static Options parse(final List<String> args)
        {
            String op = "all";
            int[] sizes = {1, 100, 4096, 65536, 1048576};
            int iterations = 100;
            Reliability reliability = Reliability.RELIABLE_RECEPTION;
            final Arguments a = new Arguments(args);
            while (a.hasNext())
            {
                switch (a.next())
                {
                    case "--op":
                        op = a.oneOf("write", "write-imm", "read", "all");
                        break;
                    case "--sizes":
                        sizes = a.sizes(0);
                        ViplPair.checkSizes(sizes);
                        checkGuarded(sizes);
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
            final boolean reliable = Reliability.UNRELIABLE != reliability;
            if ("read".equals(op) && !reliable)
            {
                throw new IllegalArgumentException("--op read: VIA carries RDMA read on reliable VIs only; use " +
                    "--reliability reliable-delivery or reliable-reception");
            }
            final List<Op> ops = "all".equals(op) ?
                (reliable ? List.of(Op.WRITE, Op.WRITE_IMM, Op.READ) : List.of(Op.WRITE, Op.WRITE_IMM)) :
                List.of(Op.valueOf(op.toUpperCase(Locale.ROOT).replace('-', '_')));
            return new Options(ops, sizes, iterations, reliability);
        }

        /** The region a size is checked in holds it at its furthest offset and a guard on each side. */
        private static void checkGuarded(final int[] sizes)
        {
            for (final int size : sizes)
            {
                if (size > ViplPair.MAX_SIZE - 3 * GUARD)
                {
                    throw new IllegalArgumentException("--sizes: " + size + " is more than " +
                        (ViplPair.MAX_SIZE - 3 * GUARD) + " bytes (2 MiB less the guards around each operation)");
                }
            }
        }
    }

    public static void main(final String[] args)
    {
        OneLineFailures.install("ViplRdma");
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
        /** The client's region its reads land in (null on the server or without reads). */
        private final MemoryRegion landing;
        private final Descriptor receive;
        private final Descriptor send;
        private final Descriptor rdma;
        private final Vi vi;
        /** Both queues of the VI report to it: the waits sleep on it (see {@link ViplCompletions#await}). */
        private final CompletionQueue cq;
        private long targetAddress;
        private int targetHandle;
        /** Operations so far, over every size and kind: the next one's number. */
        private int number;
        /** Operation {@code n}'s kind and size, in the order both sides do them. */
        private final Op[] opOf;
        private final int[] sizeOf;

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
            final boolean reads = options.ops().contains(Op.READ);
            if (reads && !pair.nic().query().rdmaReadSupport().contains(options.reliability()))
            {
                throw new IllegalArgumentException("--op read: the NIC carries no RDMA read at " +
                    ViplPair.name(options.reliability()));
            }
            control = pair.register(4096, false);
            // The target (or a read's landing): the largest at the furthest offset, and a guard on each side.
            final int guarded = maxSize + 3 * GUARD;
            if (guarded > pair.nic().parameters().maxMessageBytes())
            {
                throw new IllegalArgumentException("--sizes: " + maxSize + " bytes and the guards around them are " +
                    "more than the NIC's largest region, " + pair.nic().parameters().maxMessageBytes());
            }
            data = register(server ? guarded : Math.max(1, maxSize), server, server && reads);
            landing = !server && reads ? register(guarded, false, false) : null;
            receive = control.memory().descriptor(RECEIVE);
            send = control.memory().descriptor(SEND);
            rdma = control.memory().descriptor(RDMA);
            // Only the server's VI takes RDMA writes and answers reads; the region's enable and the VI's are
            // both needed. The reader needs neither: its own region is written by its own NIC.
            cq = pair.nic().createCq(16);
            // The region's export is a message too: the VI's largest transfer is never below it.
            vi = pair.nic().createVi(new ViAttributes(options.reliability(), Math.max(HELLO_LENGTH, maxSize),
                pair.ptag(), server, server && reads), cq, cq);
            final int total = options.sizes().length * options.ops().size() * options.iterations();
            opOf = new Op[total];
            sizeOf = new int[total];
            int n = 0;
            for (final int size : options.sizes())
            {
                for (final Op op : options.ops())
                {
                    for (int i = 0; i < options.iterations(); i++, n++)
                    {
                        opOf[n] = op;
                        sizeOf[n] = size;
                    }
                }
            }
        }

        /** @return {@code bytes} of memory registered whole under the pair's ptag, with the RDMA enables given. */
        private MemoryRegion register(final int bytes, final boolean rdmaWrite, final boolean rdmaRead)
        {
            return pair.nic().registerMem(pair.nic().allocate(bytes), 0, bytes,
                new MemoryAttributes(pair.ptag(), rdmaWrite, rdmaRead));
        }

        void run()
        {
            final boolean server = pair.isServer();
            final int total = opOf.length;
            // The first message each side expects is posted before the VI connects: the server's the
            // notice of operation 0, the client's the server's region.
            postReceive(server ? 0 : HELLO_LENGTH);
            pair.connect(vi, TIMEOUT_MS);
            if (server)
            {
                data.memory().buffer().setMemory(0, (int)data.length(), UNTOUCHED);
                prepare(0);
                // The export: the region's address and handle, for the client's writes; the go-ahead of operation 0.
                final UnsafeBuffer c = control.memory().buffer();
                c.putLong(HELLO, data.address());
                c.putInt(HELLO + Long.BYTES, data.handle());
                sendMessage(HELLO_LENGTH, 0, 0);
                ViplCompletions.expectDone(ViplCompletions.await(vi, cq, true, TIMEOUT_MS), "the region sent");
                System.out.printf("%-9s %-9s %7s %-19s %10s%n", "bytes", "op", "count", "reliability",
                    "mean us");
            }
            else
            {
                final Descriptor hello = ViplCompletions.expectDone(ViplCompletions.await(vi, cq, false, TIMEOUT_MS), "the server's region");
                targetAddress = control.memory().buffer().getLong(HELLO);
                targetHandle = control.memory().buffer().getInt(HELLO + Long.BYTES);
                if (hello.length() != HELLO_LENGTH)
                {
                    throw new IllegalStateException("the server's region came as " + hello.length() + " bytes");
                }
                final UnsafeBuffer source = data.memory().buffer();
                for (int i = 0; i < Math.max(1, maxSize); i++)
                {
                    source.putByte(i, pattern(i, 0));
                }
                if (null != landing)
                {
                    landing.memory().buffer().setMemory(0, (int)landing.length(), UNTOUCHED);
                }
            }
            for (final int size : options.sizes())
            {
                for (final Op op : options.ops())
                {
                    final long start = System.nanoTime();
                    for (int i = 0; i < options.iterations(); i++)
                    {
                        final boolean last = number + 1 == total;
                        if (server)
                        {
                            serve(size, op, last);
                        }
                        else if (Op.READ == op)
                        {
                            read(size, last);
                        }
                        else
                        {
                            write(size, Op.WRITE_IMM == op, last);
                        }
                        number++;
                    }
                    if (server)
                    {
                        final double meanUs = (System.nanoTime() - start) / 1e3 / options.iterations();
                        final String level = ViplPair.name(options.reliability());
                        System.out.printf(Locale.ROOT, "%-9d %-9s %7d %-19s %10.2f%n", size, op.label(),
                            options.iterations(), level, meanUs);
                        System.out.printf(Locale.ROOT, "VIPL_RDMA size=%d op=%s count=%d reliability=%s " +
                            "mean_us=%.2f%n", size, op.label(), options.iterations(), level, meanUs);
                    }
                }
            }
            pair.finish();
            vi.disconnect();
        }

        /**
         * The server's side of one operation: takes its notice, checks a write and the bytes around it (or
         * clears what a read took), and (unless it was the last) posts the next notice's receive, readies
         * the next operation and sends its go-ahead.
         */
        private void serve(final int size, final Op op, final boolean last)
        {
            final Descriptor notice = ViplCompletions.expectDone(ViplCompletions.await(vi, cq, false, TIMEOUT_MS),
                op.label() + " " + number);
            final boolean immediate = Op.WRITE_IMM == op;
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
            if (Op.READ != op)
            {
                check(target, at, size, 0, "write " + number);
            }
            // After a read's notice the NIC has sent every byte: QFENCE held the notice until they landed.
            target.setMemory(at, size, UNTOUCHED);
            if (!last)
            {
                postReceive(0);
                prepare(number + 1);
                sendMessage(0, number + 1, 0);
                ViplCompletions.expectDone(ViplCompletions.await(vi, cq, true, TIMEOUT_MS), "the go-ahead of " +
                    opOf[number + 1].label() + " " + (number + 1));
            }
        }

        /** Before operation {@code n}'s go-ahead: a read's bytes in the server's region, different for each read. */
        private void prepare(final int n)
        {
            if (n < opOf.length && Op.READ == opOf[n])
            {
                final UnsafeBuffer source = data.memory().buffer();
                final int at = offset(n);
                for (int i = 0; i < sizeOf[n]; i++)
                {
                    source.putByte(at + i, pattern(i, n));
                }
            }
        }

        /**
         * The client's side of one read: waits for the go-ahead, reads the bytes the server readied into
         * its own region at the same offset, tells the server with a fenced Send, and checks them.
         */
        private void read(final int size, final boolean last)
        {
            awaitGoAhead();
            if (!last)
            {
                postReceive(0);
            }
            final int at = offset(number);
            rdma.fields().reset().control(ViplDescriptor.OP_RDMA_READ).segmentCount(size > 0 ? 1 : 0).length(size)
                .addressSegment(targetAddress + at, targetHandle);
            if (size > 0)
            {
                rdma.fields().dataSegment(0, landing.memory().address(at), landing.handle(), size);
            }
            vi.postSend(rdma, control);
            // Posted at once, but not started before the read's data has landed (VIA's QFENCE).
            sendMessage(0, number, ViplDescriptor.CONTROL_QFENCE);
            final Descriptor done =
                ViplCompletions.expectDone(ViplCompletions.await(vi, cq, true, TIMEOUT_MS), "read %d", number);
            if (done.status() != (ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ) ||
                done.length() != size)
            {
                throw new IllegalStateException("read " + number + ": completed with status 0x" +
                    Integer.toHexString(done.status()) + " and " + done.length() + " bytes, not " + size);
            }
            ViplCompletions.expectDone(ViplCompletions.await(vi, cq, true, TIMEOUT_MS), "the notice of read %d",
                number);
            final UnsafeBuffer target = landing.memory().buffer();
            check(target, at, size, number, "read " + number);
            target.setMemory(at, size, UNTOUCHED);
        }

        private void awaitGoAhead()
        {
            if (number > 0)
            {
                final Descriptor go = ViplCompletions.expectDone(ViplCompletions.await(vi, cq, false, TIMEOUT_MS),
                    "the go-ahead of " + opOf[number].label() + " " + number);
                if (go.immediateData() != number)
                {
                    throw new IllegalStateException("the go-ahead of operation " + go.immediateData() + " came for " +
                        number);
                }
            }
        }

        /**
         * The client's side of one write: waits for the go-ahead (the region was operation 0's), writes,
         * tells the server.
         */
        private void write(final int size, final boolean immediate, final boolean last)
        {
            awaitGoAhead();
            if (!last)
            {
                // The next go-ahead's receive, before this write lets the server send it.
                postReceive(0);
            }
            rdma.fields().reset()
                .control(ViplDescriptor.OP_RDMA_WRITE | (immediate ? ViplDescriptor.CONTROL_IMMEDIATE : 0))
                .segmentCount(size > 0 ? 1 : 0).length(size).immediateData(immediate ? number : 0)
                .addressSegment(targetAddress + offset(number), targetHandle);
            if (size > 0)
            {
                rdma.fields().dataSegment(0, data.address(), data.handle(), size);
            }
            vi.postSend(rdma, control);
            if (!immediate)
            {
                // Carried after the write's bytes, as the VI sends in posting order.
                sendMessage(0, number, 0);
            }
            ViplCompletions.expectDone(ViplCompletions.await(vi, cq, true, TIMEOUT_MS), "write %d", number);
            if (!immediate)
            {
                ViplCompletions.expectDone(ViplCompletions.await(vi, cq, true, TIMEOUT_MS), "the notice of write %d",
                    number);
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

        /** A Send of {@code bytes} of the hello area (0: none) with immediate data, and {@code flags} (QFENCE). */
        private void sendMessage(final int bytes, final int immediateData, final int flags)
        {
            send.fields().reset().control(ViplDescriptor.OP_SEND | ViplDescriptor.CONTROL_IMMEDIATE | flags)
                .segmentCount(bytes > 0 ? 1 : 0).length(bytes).immediateData(immediateData);
            if (bytes > 0)
            {
                send.fields().dataSegment(0, control.memory().address(HELLO), control.handle(), bytes);
            }
            vi.postSend(send, control);
        }
    }

    private static final int HELLO_LENGTH = Long.BYTES + Integer.BYTES;

    /** Byte {@code i} a write carries (number 0) or read {@code number} finds: a read never finds an earlier one's. */
    private static byte pattern(final int i, final int number)
    {
        return (byte)(i * 11 + 3 + number);
    }

    /**
     * @throws IllegalStateException naming {@code what} unless {@code size} bytes at {@code at} are the
     * pattern of {@code number} and the guard on each side of them is untouched.
     */
    private static void check(final UnsafeBuffer b, final int at, final int size, final int number, final String what)
    {
        for (int i = 0; i < size; i++)
        {
            if (b.getByte(at + i) != pattern(i, number))
            {
                throw new IllegalStateException("byte " + i + " of " + what + " (" + size + " bytes at " + at +
                    ") is " + b.getByte(at + i));
            }
        }
        for (int i = at - GUARD; i < at + size + GUARD; i++)
        {
            if ((i < at || i >= at + size) && b.getByte(i) != UNTOUCHED)
            {
                throw new IllegalStateException("byte " + i + " of the region, outside " + what + " (" + size +
                    " bytes at " + at + "), was written");
            }
        }
    }

    /**
     * Operation {@code number}'s offset in the server's region (and a read's in the client's): odd,
     * moving, after the guard.
     */
    private static int offset(final int number)
    {
        return GUARD + 1 + 2 * (number % (GUARD / 2));
    }
}
