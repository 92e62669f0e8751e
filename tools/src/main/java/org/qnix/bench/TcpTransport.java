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
 * What a Java user without this system would write: blocking TCP over loopback with
 * {@code TCP_NODELAY}, each message a 4-byte length and the bytes, echoed by the peer JVM.
 */
public final class TcpTransport implements LatencyTransport
{
    private final SocketChannel channel;
    private final PeerProcess peer;
    private final ByteBuffer buffer;
    private final int maxSize;

    private TcpTransport(final SocketChannel channel, final PeerProcess peer, final int maxSize)
    {
        this.channel = channel;
        this.peer = peer;
        this.maxSize = maxSize;
        this.buffer = ByteBuffer.allocateDirect(Integer.BYTES + maxSize);
    }

    public static TcpTransport start(final int maxSize)
    {
        try (ServerSocketChannel server = ServerSocketChannel.open())
        {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
            final int port = ((InetSocketAddress)server.getLocalAddress()).getPort();
            // The peer connects before it says it is ready; the connection waits in the backlog.
            final PeerProcess peer = PeerProcess.start("tcp", Integer.toString(port), Integer.toString(maxSize));
            try
            {
                final SocketChannel channel = server.accept();
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                return new TcpTransport(channel, peer, maxSize);
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

    public void roundTrip(final int size)
    {
        try
        {
            buffer.clear();
            buffer.putInt(size);
            buffer.position(Integer.BYTES + size).flip();
            while (buffer.hasRemaining())
            {
                channel.write(buffer);
            }
            buffer.clear().limit(Integer.BYTES + size);
            while (buffer.hasRemaining())
            {
                if (channel.read(buffer) < 0)
                {
                    throw new IllegalStateException("the TCP peer closed the connection");
                }
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("TCP round trip of " + size + " bytes", ex);
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

    /** The echo side, in the peer JVM. */
    static void echo(final int port, final int maxSize) throws IOException
    {
        try (SocketChannel channel = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)))
        {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            final ByteBuffer buffer = ByteBuffer.allocateDirect(Integer.BYTES + maxSize);
            BenchPeer.ready();
            while (true)
            {
                buffer.clear().limit(Integer.BYTES);
                while (buffer.hasRemaining())
                {
                    if (channel.read(buffer) < 0)
                    {
                        return;
                    }
                }
                final int size = buffer.getInt(0);
                if (size < 0 || size > maxSize)
                {
                    throw new IllegalStateException("message length " + size + " outside [0, " + maxSize + "]");
                }
                buffer.limit(Integer.BYTES + size);
                while (buffer.hasRemaining())
                {
                    if (channel.read(buffer) < 0)
                    {
                        return;
                    }
                }
                buffer.flip();
                while (buffer.hasRemaining())
                {
                    channel.write(buffer);
                }
            }
        }
    }
}
