package org.qnix.bench;

import java.nio.file.Path;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.MappedFile;

/**
 * The physical floor: the message is copied into a shared mapping, one cache line carries the
 * sequence number to the peer JVM, which copies the message into the other area and answers the same
 * way. Both sides busy-spin. Nothing a messaging system between two processes on this machine can do
 * is cheaper.
 */
public final class FloorTransport implements LatencyTransport
{
    private final Path file;
    private final MappedFile mapping;
    private final UnsafeBuffer shared;
    private final UnsafeBuffer message;
    private final int maxSize;
    private final PeerProcess peer;
    private long sequence;

    private FloorTransport(final Path file, final MappedFile mapping, final int maxSize, final PeerProcess peer)
    {
        this.file = file;
        this.mapping = mapping;
        this.shared = mapping.buffer();
        this.maxSize = maxSize;
        this.message = new UnsafeBuffer(new byte[Math.max(1, maxSize)]);
        this.peer = peer;
    }

    public static FloorTransport start(final int maxSize)
    {
        final Path file = BenchFiles.newFile("floor");
        MappedFile mapping = null;
        try
        {
            mapping = MappedFile.create(file, FloorLayout.length(maxSize));
            final PeerProcess peer = PeerProcess.start("floor", file.toString(), Integer.toString(maxSize));
            return new FloorTransport(file, mapping, maxSize, peer);
        }
        catch (final RuntimeException ex)
        {
            if (null != mapping)
            {
                mapping.close();
            }
            BenchFiles.delete(file);
            throw ex;
        }
    }

    public String name()
    {
        return "floor";
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void roundTrip(final int size)
    {
        shared.putBytes(FloorLayout.PING_AREA_OFFSET, message, 0, size);
        shared.putInt(FloorLayout.LENGTH_OFFSET, size);
        final long next = ++sequence;
        // Reader: the peer JVM, spinning on this sequence; the bytes above are published with it.
        shared.putLongRelease(FloorLayout.PING_SEQUENCE_OFFSET, next);
        long spins = 0;
        // Writer: the peer JVM, after it copied the message into the pong area.
        while (shared.getLongVolatile(FloorLayout.PONG_SEQUENCE_OFFSET) != next)
        {
            Thread.onSpinWait();
            if ((++spins & 0xF_FFFF) == 0 && !peer.isAlive())
            {
                throw new IllegalStateException("the floor peer JVM died");
            }
        }
        shared.getBytes(FloorLayout.pongAreaOffset(maxSize), message, 0, size);
    }

    public void close()
    {
        shared.putLongRelease(FloorLayout.PING_SEQUENCE_OFFSET, FloorLayout.STOP);
        peer.close();
        mapping.close();
        BenchFiles.delete(file);
    }

    /** The echo side, in the peer JVM. */
    static void echo(final Path file, final int maxSize)
    {
        try (MappedFile mapping = MappedFile.mapExisting(file))
        {
            final UnsafeBuffer shared = mapping.buffer();
            final int pongArea = FloorLayout.pongAreaOffset(maxSize);
            BenchPeer.ready();
            long last = 0;
            long spins = 0;
            while (true)
            {
                // Writer: the pinger, with release after the message and its length.
                final long sequence = shared.getLongVolatile(FloorLayout.PING_SEQUENCE_OFFSET);
                if (FloorLayout.STOP == sequence)
                {
                    return;
                }
                if (sequence == last)
                {
                    Thread.onSpinWait();
                    if ((++spins & 0xF_FFFF) == 0 && BenchPeer.orphaned())
                    {
                        return;
                    }
                    continue;
                }
                final int size = shared.getInt(FloorLayout.LENGTH_OFFSET);
                if (size < 0 || size > maxSize)
                {
                    throw new IllegalStateException("message length " + size + " outside [0, " + maxSize + "]");
                }
                shared.putBytes(pongArea, shared, FloorLayout.PING_AREA_OFFSET, size);
                last = sequence;
                // Reader: the pinger, spinning on this sequence.
                shared.putLongRelease(FloorLayout.PONG_SEQUENCE_OFFSET, sequence);
            }
        }
    }
}
