package org.qnix.tools;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.CountersLayout;
import org.qnix.abi.MappedFile;
import org.qnix.abi.ProcessName;
import org.qnix.firmware.NicCounters;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.ReceiveStatus;

/**
 * The user program of the multi-JVM collectives tests, one JVM per rank, started by
 * {@link ProgramLauncher}: {@code barriers FILE COUNT SEED}, {@code casts}, {@code groups}, or
 * {@code victim GROUP SIZE} (joins, says so, and waits to be killed). A check
 * that fails throws, so the process exits non-zero; what passed is printed as {@code OK ...} lines.
 */
public final class CollectivesWorker
{
    private static final long TIMEOUT_S = 300;
    /** Bytes between two ranks' counters in the shared file: one cache line each. */
    static final int COUNTER_STRIDE = 64;

    private CollectivesWorker()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        try (Qnix qnix = Qnix.initFromEnvironment())
        {
            final int size = Integer.parseInt(System.getenv(Qnix.ENV_GROUP_SIZE));
            switch (args[0])
            {
                case "barriers":
                    barriers(qnix, size, Path.of(args[1]), Integer.parseInt(args[2]), Long.parseLong(args[3]));
                    break;
                case "casts":
                    casts(qnix, size);
                    break;
                case "groups":
                    groups(qnix, size);
                    break;
                case "victim":
                    qnix.awaitJoinGroup(Integer.parseInt(args[1]), Integer.parseInt(args[2]), TIMEOUT_S, TimeUnit.SECONDS);
                    System.out.println("VICTIM READY pid=" + ProcessHandle.current().pid());
                    Thread.sleep(TimeUnit.SECONDS.toMillis(TIMEOUT_S));
                    break;
                default:
                    throw new IllegalArgumentException(args[0]);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // barriers: back to back, random delays, checked with per-rank counters in a shared file
    // ---------------------------------------------------------------------------------------------

    /**
     * Before barrier k each rank publishes "entered k" in its counter; after it, every counter must be
     * at least k (nobody left before everybody entered) and at most k + 1 (nobody got past the next
     * barrier, which this rank has not entered).
     */
    private static void barriers(final Qnix qnix, final int size, final Path file, final int count, final long seed)
    {
        final int me = qnix.name().pi();
        final Random random = new Random(seed * 31 + me);
        try (MappedFile shared = MappedFile.mapExisting(file, 0, (long)size * COUNTER_STRIDE))
        {
            final UnsafeBuffer counters = shared.buffer();
            final int group = qnix.name().ai();
            for (int k = 1; k <= count; k++)
            {
                final int delayUs = random.nextInt(300);
                if (delayUs > 150)
                {
                    LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(delayUs));
                }
                // Readers: the other ranks, after their barrier k.
                counters.putLongVolatile(me * COUNTER_STRIDE, k);
                qnix.awaitBarrier(group, size, TIMEOUT_S, TimeUnit.SECONDS);
                for (int r = 0; r < size; r++)
                {
                    final long entered = counters.getLongVolatile(r * COUNTER_STRIDE);
                    if (entered < k || entered > k + 1)
                    {
                        throw new IllegalStateException("rank " + me + " left barrier " + k + " while rank " + r +
                            " had entered barrier " + entered);
                    }
                }
            }
        }
        System.out.println("OK barriers rank " + me + ": " + count);
    }

    // ---------------------------------------------------------------------------------------------
    // casts: broadcast and multicast of every length, the data read once from the sender's memory
    // ---------------------------------------------------------------------------------------------

    private static final int[] LENGTHS = {0, 1, 1024, 4097, 2 * 1024 * 1024};

    static byte pattern(final long seed, final int i)
    {
        return (byte)(seed * 131 + i * 7 + (i >> 9));
    }

    private static void casts(final Qnix qnix, final int size) throws Exception
    {
        final int me = qnix.name().pi();
        final int group = qnix.name().ai();
        final ReceiveStatus status = new ReceiveStatus();
        final int maxLength = 2 * 1024 * 1024;
        int checked = 0;
        try (QnixBuffer buffer = qnix.allocateBuffer(maxLength))
        {
            buffer.lock();
            final MutableDirectBuffer data = buffer.buffer();
            int seed = 0;
            for (final String kind : List.of("broadcast", "broadcastShort", "multicast", "multicastShort"))
            {
                final boolean isShort = kind.endsWith("Short");
                for (int l = 0; l < LENGTHS.length; l++)
                {
                    final int length = LENGTHS[l];
                    if (isShort && length > qnix.parameters().shortThreshold())
                    {
                        continue;
                    }
                    seed++;
                    // Roots on different nodes; multicast to a subset with two ranks of one node.
                    final int root = 0 == l % 2 ? 0 : 3;
                    final List<Integer> receivers = new ArrayList<>();
                    for (int r = 0; r < size; r++)
                    {
                        if (r != root && (kind.startsWith("broadcast") || r == 1 || r == 2 || r == size - 1))
                        {
                            receivers.add(r);
                        }
                    }
                    final String what = kind + " of " + length + " bytes from rank " + root;
                    int receive = -1;
                    if (receivers.contains(me))
                    {
                        data.setMemory(0, Math.min(length + 1, maxLength), (byte)0x5A);
                        receive = qnix.recvContext(new ProcessName(group, root), seed, true, buffer, 0, length);
                        qnix.receive(receive);
                    }
                    qnix.awaitBarrier(group, size, TIMEOUT_S, TimeUnit.SECONDS);
                    if (me == root)
                    {
                        for (int i = 0; i < length; i++)
                        {
                            data.putByte(i, pattern(seed, i));
                        }
                        final long readBefore = counter(qnix, NicCounters.HOST_BYTES_READ);
                        final long copiesBefore = counter(qnix, NicCounters.CAST_COPIES);
                        final int send = isShort ?
                            qnix.broadcastContextShort(seed, true, data, 0, length) :
                            qnix.broadcastContext(seed, true, buffer, 0, length);
                        final ProcessName[] names = receivers.stream().map(r -> new ProcessName(group, r))
                            .toArray(ProcessName[]::new);
                        switch (kind)
                        {
                            case "broadcast" -> qnix.broadcast(send, group);
                            case "broadcastShort" -> qnix.broadcastShort(send, group);
                            case "multicast" -> qnix.multicast(send, names);
                            default -> qnix.multicastShort(send, names);
                        }
                        qnix.waitForSend(send, TIMEOUT_S, TimeUnit.SECONDS);
                        final long read = counter(qnix, NicCounters.HOST_BYTES_READ) - readBefore;
                        final long copies = counter(qnix, NicCounters.CAST_COPIES) - copiesBefore;
                        final long expectedRead = isShort ? 0 : length;
                        final long expectedCopies = isShort || 0 == length ? 0 : 1;
                        if (read != expectedRead || copies != expectedCopies)
                        {
                            throw new IllegalStateException(what + " to " + receivers.size() + " processes: the NIC read " +
                                read + " bytes in " + copies + " copies from host memory, expected " + expectedRead +
                                " in " + expectedCopies);
                        }
                        System.out.println("OK " + what + " to " + receivers.size() + " processes: " + read +
                            " bytes read from host memory in " + copies + " DMA copies");
                    }
                    if (receive >= 0)
                    {
                        qnix.waitForReceive(receive, status, TIMEOUT_S, TimeUnit.SECONDS);
                        if (status.length() != length || status.tag() != seed ||
                            !status.source().equals(new ProcessName(group, root)))
                        {
                            throw new IllegalStateException(what + ": completion " + status);
                        }
                        for (int i = 0; i < length; i++)
                        {
                            if (data.getByte(i) != pattern(seed, i))
                            {
                                throw new IllegalStateException(what + ": byte " + i + " is wrong at rank " + me);
                            }
                        }
                        if (length < maxLength && data.getByte(length) != (byte)0x5A)
                        {
                            throw new IllegalStateException(what + ": the byte after the message was overwritten");
                        }
                        checked++;
                    }
                    qnix.awaitBarrier(group, size, TIMEOUT_S, TimeUnit.SECONDS);
                }
            }
        }
        System.out.println("OK casts rank " + me + ": " + checked + " messages received intact");
    }

    /** A counter of this process's NIC, from {@code node-X-Y/counters}. */
    private static long counter(final Qnix qnix, final String label)
    {
        try (MappedFile file = MappedFile.mapExisting(ClusterDirectory.of(qnix.clusterName()).counters(qnix.node())))
        {
            final CountersReader reader = new CountersReader(
                new UnsafeBuffer(file.buffer(), CountersLayout.METADATA_OFFSET, CountersLayout.METADATA_LENGTH),
                new UnsafeBuffer(file.buffer(), CountersLayout.VALUES_OFFSET, CountersLayout.VALUES_LENGTH));
            final long[] value = { -1 };
            reader.forEach((id, type, key, l) ->
            {
                if (l.equals(label))
                {
                    value[0] = reader.getCounterValue(id);
                }
            });
            return value[0];
        }
    }

    // ---------------------------------------------------------------------------------------------
    // groups: joined at run time by subsets, two of them overlapping
    // ---------------------------------------------------------------------------------------------

    /**
     * Ranks 0-3 join group A, ranks 2-5 group B, so ranks 2 and 3 are in both. Each group then runs
     * barriers and a broadcast concurrently with the other.
     */
    private static void groups(final Qnix qnix, final int size) throws Exception
    {
        if (size != 6)
        {
            throw new IllegalArgumentException("groups runs on 6 processes");
        }
        final int me = qnix.name().pi();
        final int app = qnix.name().ai();
        final int groupA = app ^ 0x4000_0000;
        final int groupB = app ^ 0x2000_0000;
        final boolean inA = me <= 3;
        final boolean inB = me >= 2;
        if (inA)
        {
            qnix.awaitJoinGroup(groupA, 4, TIMEOUT_S, TimeUnit.SECONDS);
        }
        if (inB)
        {
            qnix.awaitJoinGroup(groupB, 4, TIMEOUT_S, TimeUnit.SECONDS);
        }
        final List<String> membersA = qnix.groupMembers(groupA).stream().map(m -> m.name().toString()).toList();
        if (inA && membersA.size() != 4)
        {
            throw new IllegalStateException("group A as this NIC knows it: " + membersA);
        }
        System.out.println("OK rank " + me + " joined" + (inA ? " A" : "") + (inB ? " B" : ""));

        for (int k = 0; k < 50; k++)
        {
            if (inA)
            {
                qnix.awaitBarrier(groupA, 4, TIMEOUT_S, TimeUnit.SECONDS);
            }
            if (inB)
            {
                qnix.awaitBarrier(groupB, 4, TIMEOUT_S, TimeUnit.SECONDS);
            }
        }

        // A broadcast in each group: rank 0 to A (a member), rank 0 to B (not a member of B).
        final ReceiveStatus status = new ReceiveStatus();
        try (QnixBuffer buffer = qnix.allocateBuffer(8192))
        {
            buffer.lock();
            final MutableDirectBuffer data = buffer.buffer();
            final int fromA = inA && me != 0 ? post(qnix, app, 11, buffer, 0) : -1;
            final int fromB = inB ? post(qnix, app, 12, buffer, 4096) : -1;
            qnix.awaitBarrier(app, size, TIMEOUT_S, TimeUnit.SECONDS);
            if (0 == me)
            {
                for (int i = 0; i < 4096; i++)
                {
                    data.putByte(i, pattern(11, i));
                    data.putByte(4096 + i, pattern(12, i));
                }
                final int a = qnix.broadcastContext(11, true, buffer, 0, 4096);
                qnix.broadcast(a, groupA);
                final int b = qnix.broadcastContext(12, true, buffer, 4096, 4096);
                qnix.broadcast(b, groupB);
                qnix.waitForSend(a, TIMEOUT_S, TimeUnit.SECONDS);
                qnix.waitForSend(b, TIMEOUT_S, TimeUnit.SECONDS);
            }
            for (final int[] receive : new int[][] {{fromA, 11, 0}, {fromB, 12, 4096}})
            {
                if (receive[0] < 0)
                {
                    continue;
                }
                qnix.waitForReceive(receive[0], status, TIMEOUT_S, TimeUnit.SECONDS);
                for (int i = 0; i < 4096; i++)
                {
                    if (data.getByte(receive[2] + i) != pattern(receive[1], i))
                    {
                        throw new IllegalStateException("broadcast " + receive[1] + ": byte " + i + " wrong at " + me);
                    }
                }
            }
        }
        qnix.awaitBarrier(app, size, TIMEOUT_S, TimeUnit.SECONDS);
        System.out.println("OK rank " + me + ": 50 barriers and a broadcast in each of its groups");
    }

    private static int post(final Qnix qnix, final int app, final int tag, final QnixBuffer buffer, final int offset)
    {
        final int context = qnix.recvContext(new ProcessName(app, 0), tag, true, buffer, offset, 4096);
        qnix.receive(context);
        return context;
    }
}
