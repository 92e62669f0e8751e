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
 * Two JVMs joined by one loopback TCP connection with {@code TCP_NODELAY}, as the TCP baselines use
 * them: blocking channels, whole buffers written and read.
 */
final class TcpLink implements AutoCloseable
{
    final SocketChannel channel;
    private final PeerProcess peer;

    private TcpLink(final SocketChannel channel, final PeerProcess peer)
    {
        this.channel = channel;
        this.peer = peer;
    }

    /** Listens, starts {@code BenchPeer peerMode PORT maxSize}, and accepts its connection. */
    static TcpLink start(final String peerMode, final int maxSize)
    {
        try (ServerSocketChannel server = ServerSocketChannel.open())
        {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
            final int port = ((InetSocketAddress)server.getLocalAddress()).getPort();
            // The peer connects before it says it is ready; the connection waits in the backlog.
            final PeerProcess peer = PeerProcess.start(peerMode, Integer.toString(port), Integer.toString(maxSize));
            try
            {
                final SocketChannel channel = server.accept();
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                return new TcpLink(channel, peer);
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

    /** The peer side: connects to the measuring JVM's port. */
    static SocketChannel connect(final int port) throws IOException
    {
        final SocketChannel channel = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        return channel;
    }

    static void writeFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            channel.write(buffer);
        }
    }

    /** @return false if the connection closed first. */
    static boolean readFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
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
}
