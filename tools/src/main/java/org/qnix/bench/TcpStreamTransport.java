package org.qnix.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * Bandwidth over loopback TCP between two JVMs ({@link TcpLink}): a header (size, messages), then the
 * messages back to back; the peer reads them all and answers one byte. The socket buffers are the
 * window.
 */
public final class TcpStreamTransport implements BandwidthTransport
{
    private final TcpLink link;
    private final ByteBuffer message;
    private final ByteBuffer control = ByteBuffer.allocateDirect(2 * Integer.BYTES);
    private final int maxSize;

    private TcpStreamTransport(final TcpLink link, final int maxSize)
    {
        this.link = link;
        this.maxSize = maxSize;
        this.message = ByteBuffer.allocateDirect(Math.max(1, maxSize));
    }

    public static TcpStreamTransport start(final int maxSize)
    {
        return new TcpStreamTransport(TcpLink.start("tcp-sink", maxSize), maxSize);
    }

    public String name()
    {
        return "tcp";
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void stream(final int size, final int messages, final int window)
    {
        try
        {
            control.clear();
            control.putInt(size).putInt(messages).flip();
            TcpLink.writeFully(link.channel, control);
            for (int m = 0; m < messages; m++)
            {
                message.clear().limit(size);
                TcpLink.writeFully(link.channel, message);
            }
            control.clear().limit(1);
            if (!TcpLink.readFully(link.channel, control))
            {
                throw new IllegalStateException("the TCP peer closed the connection");
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("TCP stream of " + messages + " x " + size + " bytes", ex);
        }
    }

    public void close()
    {
        link.close();
    }

    /** The receiving side, in the peer JVM. */
    static void sink(final int port, final int maxSize) throws IOException
    {
        try (SocketChannel channel = TcpLink.connect(port))
        {
            final ByteBuffer control = ByteBuffer.allocateDirect(2 * Integer.BYTES);
            final ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
            BenchPeer.ready();
            while (true)
            {
                control.clear();
                if (!TcpLink.readFully(channel, control))
                {
                    return;
                }
                final int size = control.getInt(0);
                final int messages = control.getInt(Integer.BYTES);
                if (size < 0 || size > maxSize || messages < 0)
                {
                    throw new IllegalStateException("stream of " + messages + " x " + size + " bytes");
                }
                long remaining = (long)size * messages;
                while (remaining > 0)
                {
                    chunk.clear().limit((int)Math.min(chunk.capacity(), remaining));
                    if (!TcpLink.readFully(channel, chunk))
                    {
                        return;
                    }
                    remaining -= chunk.limit();
                }
                control.clear().limit(1);
                TcpLink.writeFully(channel, control);
            }
        }
    }
}
