package org.qnix.daemon;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.function.BooleanSupplier;

/**
 * Whether the process at the other end of a driver connection has closed it, asked by the connection's
 * own thread while it waits on the process's behalf (a VIA connection wait, up to its timeout). A VIPL
 * {@code close()} ends its connection waits by closing the connection while the process lives on; without
 * this look the driver would keep waiting for it, and could hand a client's connection request to a
 * server that is gone, until the wait's timeout.
 *
 * <p>It looks without taking a byte of the next request: the channel is read once without blocking, and a
 * byte that came is pushed back into {@link #input()}, which the connection reads its requests from.
 * Only the connection's thread may call {@link #getAsBoolean()}: it reads the channel, which that thread
 * alone does.
 *
 * <pre>{@code
 * ClientHangUp hangUp = new ClientHangUp(channel, new BufferedInputStream(Channels.newInputStream(channel)));
 * DataInputStream in = hangUp.input();
 * ...
 * while (!hangUp.getAsBoolean() && nothingYet()) { wait(50); }
 * }</pre>
 */
final class ClientHangUp implements BooleanSupplier
{
    private final SocketChannel channel;
    private final PushbackInputStream pushback;
    private final DataInputStream input;
    private final ByteBuffer ahead = ByteBuffer.allocate(1);

    /** @param requests the connection's requests over {@code channel}, blocking. */
    ClientHangUp(final SocketChannel channel, final InputStream requests)
    {
        this.channel = channel;
        this.pushback = new PushbackInputStream(requests, 1);
        this.input = new DataInputStream(pushback);
    }

    /** @return the stream the connection reads its requests from, with any byte looked at put back. */
    DataInputStream input()
    {
        return input;
    }

    /** @return true if the other end closed the connection (or it failed); false while it may still talk. */
    public boolean getAsBoolean()
    {
        try
        {
            if (pushback.available() > 0)
            {
                // Bytes of a next request are here already: the process still talks.
                return false;
            }
            final int read;
            synchronized (channel.blockingLock())
            {
                channel.configureBlocking(false);
                try
                {
                    ahead.clear();
                    read = channel.read(ahead);
                }
                finally
                {
                    channel.configureBlocking(true);
                }
            }
            if (read > 0)
            {
                pushback.unread(ahead.get(0));
            }
            return read < 0;
        }
        catch (final IOException ex)
        {
            // Closed under this thread (the daemon's close) or broken: nobody is left to answer.
            return true;
        }
    }
}
