package org.qnix.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * Bandwidth over loopback TCP between two JVMs: a header (size, messages), then the messages back to
 * back; the peer reads them all and answers one byte. The socket buffers are the window.
 */
public final class TcpStreamTransport implements BandwidthTransport
{
    private final SocketChannel channel;
    private final PeerProcess peer;
    private final ByteBuffer message;
    private final ByteBuffer control = ByteBuffer.allocateDirect(2 * Integer.BYTES);
    private final int maxSize;

    private TcpStreamTransport(final SocketChannel channel, final PeerProcess peer, final int maxSize)
    {
        this.channel = channel;
        this.peer = peer;
        this.maxSize = maxSize;
        this.message = ByteBuffer.allocateDirect(Math.max(1, maxSize));
    }

    public static TcpStreamTransport start(final int maxSize)
    {
        try (ServerSocketChannel server = ServerSocketChannel.open())
        {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
            final int port = ((InetSocketAddress)server.getLocalAddress()).getPort();
            final PeerProcess peer = PeerProcess.start("tcp-sink", Integer.toString(port), Integer.toString(maxSize));
            try
            {
                final SocketChannel channel = server.accept();
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                return new TcpStreamTransport(channel, peer, maxSize);
            }
            catch (final IOException | RuntimeException ex)
            {
                peer.close();
                throw ex;
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot set up the TCP baseline", ex);
        }
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
            writeFully(channel, control);
            for (int m = 0; m < messages; m++)
            {
                message.clear().limit(size);
                writeFully(channel, message);
            }
            control.clear().limit(1);
            readFully(channel, control);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("TCP stream of " + messages + " x " + size + " bytes", ex);
        }
    }

    public void close()
    {
        try
        {
            channel.close();
        }
        catch (final IOException ignore)
        {
            // Closing anyway.
        }
        peer.close();
    }

    private static void writeFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            channel.write(buffer);
        }
    }

    /** @return false if the connection closed first. */
    private static boolean readFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            if (channel.read(buffer) < 0)
            {
                return false;
            }
        }
        return true;
    }

    /** The receiving side, in the peer JVM. */
    static void sink(final int port, final int maxSize) throws IOException
    {
        try (SocketChannel channel = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)))
        {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            final ByteBuffer control = ByteBuffer.allocateDirect(2 * Integer.BYTES);
            final ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
            BenchPeer.ready();
            while (true)
            {
                control.clear();
                if (!readFully(channel, control))
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
                    if (!readFully(channel, chunk))
                    {
                        return;
                    }
                    remaining -= chunk.limit();
                }
                control.clear().limit(1);
                writeFully(channel, control);
            }
        }
    }
}
