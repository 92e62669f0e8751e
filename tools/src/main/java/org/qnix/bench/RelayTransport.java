package org.qnix.bench;

import java.nio.file.Path;

import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicProcessor;

/**
 * The relay baseline (issue 13): the least a path with one agent in the middle costs on this machine.
 * Three JVMs share a mapping: this one (A) copies the message in and yields while it waits; a relay JVM
 * busy-spins, copying each message on to B and each answer back to A; B yields, copies the message
 * into its answer and sends it back. QNIX with shared firmware has the same shape: program, one thread
 * of control programs, program; and the same placement: the relay JVM runs on the CPU a default cluster
 * gives its NICs, A and B keep off it.
 */
public final class RelayTransport implements LatencyTransport
{
    /**
     * Where a default cluster puts its NICs' control programs: the relay stands in for them there, and
     * the ends keep off it, as programs keep off the NICs' CPU.
     */
    private static final int RELAY_CPU = NicProcessor.resolve("auto", ClusterProperties.FIRMWARE_SHARED);

    private final Path file;
    private final MappedFile mapping;
    private final UnsafeBuffer shared;
    private final UnsafeBuffer message;
    private final int maxSize;
    private final PeerProcess relay;
    private final PeerProcess echo;
    /** The measuring JVM keeps off the relay's CPU, as a program keeps off the NICs' CPU (NicProcessor). */
    private final NicProcessor.Placement offRelayCpu;
    private long sequence;

    private RelayTransport(final Path file, final MappedFile mapping, final int maxSize, final PeerProcess relay,
        final PeerProcess echo)
    {
        this.file = file;
        this.mapping = mapping;
        this.shared = mapping.buffer();
        this.maxSize = maxSize;
        this.message = new UnsafeBuffer(new byte[Math.max(1, maxSize)]);
        this.relay = relay;
        this.echo = echo;
        this.offRelayCpu = NicProcessor.avoid(RELAY_CPU, "relay");
    }

    public static RelayTransport start(final int maxSize)
    {
        final Path file = BenchFiles.newFile("relay");
        MappedFile mapping = null;
        PeerProcess relay = null;
        try
        {
            mapping = MappedFile.create(file, RelayLayout.length(maxSize));
            relay = PeerProcess.start("relay", file.toString(), Integer.toString(maxSize));
            final PeerProcess echo = PeerProcess.start("relay-echo", file.toString(), Integer.toString(maxSize));
            return new RelayTransport(file, mapping, maxSize, relay, echo);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(relay, mapping);
            BenchFiles.delete(file);
            throw ex;
        }
    }

    public String name()
    {
        return "relay";
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void roundTrip(final int size)
    {
        final long next = ++sequence;
        send(shared, RelayLayout.A_TO_RELAY, message, 0, size, next, maxSize);
        long looks = 0;
        // Writer: the relay, after it copied B's answer into its area.
        while (shared.getLongVolatile(RelayLayout.sequenceOffset(RelayLayout.RELAY_TO_A)) != next)
        {
            Thread.yield();
            if ((++looks & 0xFFFF) == 0 && (!relay.isAlive() || !echo.isAlive()))
            {
                throw new IllegalStateException("a relay baseline peer JVM died");
            }
        }
        shared.getBytes(RelayLayout.areaOffset(RelayLayout.RELAY_TO_A, maxSize), message, 0, size);
    }

    public void close()
    {
        shared.putLongRelease(RelayLayout.sequenceOffset(RelayLayout.A_TO_RELAY), RelayLayout.STOP);
        CloseHelper.quietCloseAll(relay, echo, mapping, offRelayCpu);
        BenchFiles.delete(file);
    }

    private static void send(final UnsafeBuffer shared, final int hop, final UnsafeBuffer from, final int fromOffset,
        final int size, final long sequence, final int maxSize)
    {
        shared.putBytes(RelayLayout.areaOffset(hop, maxSize), from, fromOffset, size);
        shared.putInt(RelayLayout.lengthOffset(hop), size);
        // Reader: the next party on the path, watching this sequence; the bytes above are published with it.
        shared.putLongRelease(RelayLayout.sequenceOffset(hop), sequence);
    }

    /** The relay, in a peer JVM: busy-spins, copying A's messages on to B and B's answers back to A. */
    static void relay(final Path file, final int maxSize)
    {
        NicProcessor.bindProcess(RELAY_CPU);
        try (MappedFile mapping = MappedFile.mapExisting(file))
        {
            final UnsafeBuffer shared = mapping.buffer();
            BenchPeer.ready();
            long fromA = 0;
            long fromB = 0;
            long spins = 0;
            while (true)
            {
                // Writers: A (its messages, or STOP) and B (its answers), each with release after the bytes.
                final long a = shared.getLongVolatile(RelayLayout.sequenceOffset(RelayLayout.A_TO_RELAY));
                if (RelayLayout.STOP == a)
                {
                    shared.putLongRelease(RelayLayout.sequenceOffset(RelayLayout.RELAY_TO_B), RelayLayout.STOP);
                    return;
                }
                if (a != fromA)
                {
                    forward(shared, RelayLayout.A_TO_RELAY, RelayLayout.RELAY_TO_B, a, maxSize);
                    fromA = a;
                }
                final long b = shared.getLongVolatile(RelayLayout.sequenceOffset(RelayLayout.B_TO_RELAY));
                if (b != fromB)
                {
                    forward(shared, RelayLayout.B_TO_RELAY, RelayLayout.RELAY_TO_A, b, maxSize);
                    fromB = b;
                }
                Thread.onSpinWait();
                if ((++spins & 0xF_FFFF) == 0 && BenchPeer.orphaned())
                {
                    return;
                }
            }
        }
    }

    private static void forward(final UnsafeBuffer shared, final int in, final int out, final long sequence,
        final int maxSize)
    {
        final int size = shared.getInt(RelayLayout.lengthOffset(in));
        if (size < 0 || size > maxSize)
        {
            throw new IllegalStateException("message length " + size + " outside [0, " + maxSize + "]");
        }
        send(shared, out, shared, RelayLayout.areaOffset(in, maxSize), size, sequence, maxSize);
    }

    /** B, in a peer JVM: yields until the relay brings a message, answers it with the same bytes. */
    static void echo(final Path file, final int maxSize)
    {
        NicProcessor.avoid(RELAY_CPU, "relay-echo");
        try (MappedFile mapping = MappedFile.mapExisting(file))
        {
            final UnsafeBuffer shared = mapping.buffer();
            BenchPeer.ready();
            long last = 0;
            long looks = 0;
            while (true)
            {
                // Writer: the relay, with release after the bytes.
                final long sequence = shared.getLongVolatile(RelayLayout.sequenceOffset(RelayLayout.RELAY_TO_B));
                if (RelayLayout.STOP == sequence)
                {
                    return;
                }
                if (sequence == last)
                {
                    Thread.yield();
                    if ((++looks & 0xFFFF) == 0 && BenchPeer.orphaned())
                    {
                        return;
                    }
                    continue;
                }
                forward(shared, RelayLayout.RELAY_TO_B, RelayLayout.B_TO_RELAY, sequence, maxSize);
                last = sequence;
            }
        }
    }
}
