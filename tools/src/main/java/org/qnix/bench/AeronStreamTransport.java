package org.qnix.bench;

import java.nio.ByteBuffer;
import java.nio.file.Path;

import io.aeron.FragmentAssembler;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Bandwidth over Aeron IPC between two JVMs ({@link AeronLink}): a header message (size, messages),
 * then the messages, which the publication's flow control paces; the peer counts them and acknowledges
 * the last on the other stream.
 */
public final class AeronStreamTransport implements BandwidthTransport
{
    private final AeronLink link;
    private final UnsafeBuffer message;
    private final UnsafeBuffer header = new UnsafeBuffer(new byte[2 * Integer.BYTES]);
    private final int maxSize;
    private final FragmentAssembler assembler;
    private boolean acknowledged;

    private AeronStreamTransport(final AeronLink link, final int maxSize)
    {
        this.link = link;
        this.maxSize = maxSize;
        this.message = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(1, maxSize)));
        this.assembler = new FragmentAssembler((buffer, offset, length, h) -> acknowledged = true);
    }

    public static AeronStreamTransport start(final int maxSize)
    {
        return new AeronStreamTransport(AeronLink.start("aeron-sink"), maxSize);
    }

    public String name()
    {
        return "aeron-ipc";
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void stream(final int size, final int messages, final int window)
    {
        header.putInt(0, size);
        header.putInt(Integer.BYTES, messages);
        link.offer(header, 2 * Integer.BYTES);
        for (int m = 0; m < messages; m++)
        {
            link.offer(message, size);
        }
        acknowledged = false;
        link.pollOne(assembler, () -> acknowledged);
    }

    public void close()
    {
        link.close();
    }

    /** The receiving side, in the peer JVM. */
    static void sink(final Path directory)
    {
        final UnsafeBuffer ack = new UnsafeBuffer(new byte[1]);
        final long[] expected = {-1};
        AeronLink.serve(directory, answers -> (buffer, offset, length, header) ->
        {
            // The first message of a stream is its header; the rest are counted down to the last.
            expected[0] = expected[0] < 0 ? buffer.getInt(offset + Integer.BYTES) : expected[0] - 1;
            if (0 == expected[0])
            {
                expected[0] = -1;
                AeronLink.answer(answers, ack, 0, 1);
            }
        });
    }
}
