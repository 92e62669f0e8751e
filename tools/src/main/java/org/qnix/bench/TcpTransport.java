package org.qnix.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * What a Java user without this system would write: blocking TCP over loopback with
 * {@code TCP_NODELAY} ({@link TcpLink}), each message a 4-byte length and the bytes, echoed by the peer
 * JVM.
 */
public final class TcpTransport implements LatencyTransport
{
    private final TcpLink link;
    private final ByteBuffer buffer;
    private final int maxSize;

    private TcpTransport(final TcpLink link, final int maxSize)
    {
        this.link = link;
        this.maxSize = maxSize;
        this.buffer = ByteBuffer.allocateDirect(Integer.BYTES + maxSize);
    }

    public static TcpTransport start(final int maxSize)
    {
        return new TcpTransport(TcpLink.start("tcp", maxSize), maxSize);
    }

    public String name()
    {
        return "tcp";
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void roundTrip(final int size)
    {
        try
        {
            buffer.clear();
            buffer.putInt(size);
            buffer.position(Integer.BYTES + size).flip();
            TcpLink.writeFully(link.channel, buffer);
            buffer.clear().limit(Integer.BYTES + size);
            if (!TcpLink.readFully(link.channel, buffer))
            {
                throw new IllegalStateException("the TCP peer closed the connection");
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("TCP round trip of " + size + " bytes", ex);
        }
    }

    public void close()
    {
        link.close();
    }

    /** The echo side, in the peer JVM. */
    static void echo(final int port, final int maxSize) throws IOException
    {
        try (SocketChannel channel = TcpLink.connect(port))
        {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(Integer.BYTES + maxSize);
            BenchPeer.ready();
            while (true)
            {
                buffer.clear().limit(Integer.BYTES);
                if (!TcpLink.readFully(channel, buffer))
                {
                    return;
                }
                final int size = buffer.getInt(0);
                if (size < 0 || size > maxSize)
                {
                    throw new IllegalStateException("message length " + size + " outside [0, " + maxSize + "]");
                }
                buffer.limit(Integer.BYTES + size);
                if (!TcpLink.readFully(channel, buffer))
                {
                    return;
                }
                buffer.flip();
                TcpLink.writeFully(channel, buffer);
            }
        }
    }
}
