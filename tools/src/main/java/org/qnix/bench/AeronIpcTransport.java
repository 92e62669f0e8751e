package org.qnix.bench;

import java.nio.file.Path;

import io.aeron.FragmentAssembler;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The best-known Java inter-process messaging: Aeron IPC between two JVMs ({@link AeronLink}); the
 * peer echoes every message on the other stream.
 */
public final class AeronIpcTransport implements LatencyTransport
{
    private final AeronLink link;
    private final UnsafeBuffer message;
    private final int maxSize;
    private final FragmentAssembler assembler;
    private boolean echoed;

    private AeronIpcTransport(final AeronLink link, final int maxSize)
    {
        this.link = link;
        this.maxSize = maxSize;
        this.message = new UnsafeBuffer(new byte[Math.max(1, maxSize)]);
        this.assembler = new FragmentAssembler((buffer, offset, length, header) -> echoed = true);
    }

    public static AeronIpcTransport start(final int maxSize)
    {
        return new AeronIpcTransport(AeronLink.start("aeron"), maxSize);
    }

    public String name()
    {
        return "aeron-ipc";
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void roundTrip(final int size)
    {
        link.offer(message, size);
        echoed = false;
        link.pollOne(assembler, () -> echoed);
    }

    public void close()
    {
        link.close();
    }

    /** The echo side, in the peer JVM. */
    static void echo(final Path directory)
    {
        AeronLink.serve(directory, answers ->
            (buffer, offset, length, header) -> AeronLink.answer(answers, buffer, offset, length));
    }
}
