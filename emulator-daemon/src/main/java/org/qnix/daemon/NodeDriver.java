package org.qnix.daemon;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.agrona.CloseHelper;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.FileModes;
import org.qnix.abi.HostClock;
import org.qnix.abi.NicCoordinates;
import org.qnix.firmware.NodeImage;

/**
 * The kernel driver of one emulated node (thesis 3.4), serving the node's Unix-domain socket: it
 * accepts connections from processes the {@link DriverAccess} admits, at most as many as
 * {@link DriverConnections} allows, and serves each on its own thread with a {@link DriverRequests},
 * which carries out the requests through the node's {@link ProcessRegistrar}. A process registers
 * through its connection and stays registered while the connection is open; when it closes for any
 * reason (exit, exception, {@code kill -9}) the driver de-registers it exactly as at process exit, and
 * frees everything the process held. {@link #close()} returns once no thread of the driver reads the
 * node's image any more (bounded), so that the image may be unmapped after it.
 *
 * <pre>{@code
 * NodeDriver driver = new NodeDriver(image, registry, dir.driverSocket(node), heartbeats, access);
 * driver.start();
 * ...
 * driver.close();
 * }</pre>
 */
final class NodeDriver implements AutoCloseable
{
    private static final long ACCEPT_RETRY_MAX_MS = 1000;
    private static final long IDLE_CHECK_MS = 1000;
    /**
     * How long {@link #close()} waits for its threads to leave the image: a de-registration under way
     * waits for its NIC's Delete_Process, which a running NIC takes at once.
     */
    private static final long CLOSE_WAIT_MS = 15_000;

    private final NodeImage image;
    private final NicCoordinates node;
    private final ClusterParameters params;
    private final ProcessRegistrar registrar;
    private final Path socketPath;
    private final DriverConnections connections;
    private final DriverAccess access;
    private ServerSocketChannel server;
    private volatile boolean closed;
    /** The driver's threads: the acceptor, the idle reaper and one per connection served (these read the image). */
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private Thread reaper;

    /**
     * @param heartbeats of every NIC of the cluster: a registration needs them all.
     * @param access     who may connect.
     */
    NodeDriver(final NodeImage image, final ClusterRegistry registry, final Path socketPath,
        final NicHeartbeats heartbeats, final DriverAccess access)
    {
        this.image = image;
        this.access = access;
        this.node = image.node();
        this.params = image.parameters();
        this.socketPath = socketPath;
        this.registrar = new ProcessRegistrar(image, registry, heartbeats);
        this.connections = new DriverConnections(params.maxProcessesPerNic());
    }

    /** Binds the socket and starts accepting connections on a daemon thread. */
    void start() throws IOException
    {
        Files.deleteIfExists(socketPath);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socketPath));
        // bind gives the socket the umask's mode; connecting needs write permission on it.
        FileModes.restrict(socketPath);
        final Thread acceptor = new Thread(this::acceptLoop, "driver-" + node);
        acceptor.setDaemon(true);
        threads.add(acceptor);
        acceptor.start();
        reaper = new Thread(this::closeIdleConnections, "driver-" + node + "-idle");
        reaper.setDaemon(true);
        threads.add(reaper);
        reaper.start();
    }

    /**
     * Accepts for as long as the driver is open. An accept that fails (too many open files, a signal)
     * is reported and tried again after a pause that grows to a second: before, the first failure
     * ended the loop and the node took no process again.
     */
    private void acceptLoop()
    {
        int failures = 0;
        while (!closed)
        {
            final SocketChannel channel;
            try
            {
                channel = server.accept();
                failures = 0;
            }
            catch (final ClosedChannelException ex)
            {
                return;
            }
            catch (final IOException ex)
            {
                if (closed)
                {
                    return;
                }
                if (0 == failures++)
                {
                    System.err.println("driver " + node + ": accept failed, trying again: " + ex);
                }
                pause(Math.min(ACCEPT_RETRY_MAX_MS, 10L << Math.min(failures, 7)));
                continue;
            }
            final PeerCredentials peer = admittedPeer(channel);
            if (null == peer)
            {
                continue;
            }
            final DriverConnections.Connection connection = connections.admit(channel, HostClock.millis());
            if (null == connection)
            {
                refuseConnection(channel, overLimit());
                continue;
            }
            try
            {
                final Thread handler = new Thread(() -> serve(connection, peer), "driver-" + node + "-connection");
                handler.setDaemon(true);
                threads.add(handler);
                handler.start();
            }
            catch (final OutOfMemoryError ex)
            {
                // No thread to be had: refuse this one rather than lose the acceptor.
                connections.remove(connection);
                refuseConnection(channel, overLimit());
            }
        }
    }

    /**
     * @return the credentials of a new connection's peer if it may use the driver (issue 17, item 8),
     * else null, the connection refused.
     */
    private PeerCredentials admittedPeer(final SocketChannel channel)
    {
        final PeerCredentials peer;
        try
        {
            peer = PeerCredentials.of(channel);
        }
        catch (final IOException ex)
        {
            refuseConnection(channel, "the driver of node " + node + " cannot tell who connected: " + ex.getMessage());
            return null;
        }
        final String refusal = access.refusal(peer);
        if (null != refusal)
        {
            System.err.println("driver " + node + ": " + refusal);
            refuseConnection(channel, refusal);
            return null;
        }
        return peer;
    }

    private String overLimit()
    {
        return "the driver of node " + node + " serves " + connections.limit() +
            " connections at most (P=" + params.maxProcessesPerNic() + " processes and " +
            DriverConnections.SPARE_CONNECTIONS + " more) and has that many open: try again later";
    }

    /**
     * Tells a connection why it is refused, without waiting for its request, and shuts its output; it is
     * closed a little later, so that the client's request does not meet a closed socket first.
     */
    private void refuseConnection(final SocketChannel channel, final String reason)
    {
        try
        {
            // A few hundred bytes into a new connection's empty socket buffer: the write does not block.
            new DriverReplies(Channels.newOutputStream(channel)).refuse(reason);
            channel.shutdownOutput();
            connections.linger(channel, HostClock.millis());
        }
        catch (final IOException | RuntimeException ex)
        {
            // The client went away: closing is all that is left.
            CloseHelper.quietClose(channel);
        }
    }

    /**
     * The node's driver's check every {@link #IDLE_CHECK_MS}: connections that hold nothing, a placement
     * waiting for a process to place itself, deletions a resumed NIC has done.
     */
    private void closeIdleConnections()
    {
        while (!closed)
        {
            pause(IDLE_CHECK_MS);
            if (closed)
            {
                return;
            }
            final int idle = connections.closeIdle(HostClock.millis());
            if (idle > 0)
            {
                System.err.println("driver " + node + ": closed " + idle + " connection(s) that had no registration" +
                    " in progress or held for " + DriverConnections.REGISTER_WITHIN_MS + " ms");
            }
            registrar.placeWaiting();
            try
            {
                // A NIC that resumed takes its backlog of deletions with no registration coming to notice.
                registrar.releaseQuarantined();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void pause(final long ms)
    {
        try
        {
            Thread.sleep(ms);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /** @param peer who connected, as the kernel says: its pid is the one the driver uses, not the claimed one. */
    private void serve(final DriverConnections.Connection connection, final PeerCredentials peer)
    {
        final SocketChannel channel = connection.channel();
        DriverRequests requests = null;
        try
        {
            // Buffered: a DataInputStream over a channel makes a system call per byte of every field.
            final ClientHangUp hangUp =
                new ClientHangUp(channel, new BufferedInputStream(Channels.newInputStream(channel)));
            final DataInputStream in = hangUp.input();
            requests = new DriverRequests(image, registrar, peer,
                new DriverReplies(Channels.newOutputStream(channel)), connection, hangUp);
            while (!closed && requests.onRequest(in.readInt(), in))
            {
                // One request at a time, answered before the next is read.
            }
        }
        catch (final EOFException ex)
        {
            // The process closed its connection: exit, crash or kill -9.
        }
        catch (final AsynchronousCloseException ex)
        {
            // Closed by the idle check or by close().
        }
        catch (final IOException ex)
        {
            if (!closed)
            {
                System.err.println("driver " + node + ": connection failed: " + ex);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        catch (final RuntimeException ex)
        {
            System.err.println("driver " + node + ": request failed");
            ex.printStackTrace();
        }
        finally
        {
            connections.remove(connection);
            CloseHelper.quietClose(channel);
            if (null != requests && !closed)
            {
                try
                {
                    requests.close();
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
            threads.remove(Thread.currentThread());
        }
    }

    public void close()
    {
        closed = true;
        try
        {
            if (null != server)
            {
                server.close();
            }
        }
        catch (final IOException ignore)
        {
        }
        connections.closeAll();
        try
        {
            Files.deleteIfExists(socketPath);
        }
        catch (final IOException ignore)
        {
        }
        awaitThreads();
    }

    /**
     * Waits, up to {@link #CLOSE_WAIT_MS}, until the driver's threads have ended, so that none reads the
     * image: the acceptor ends with its socket, the reaper is interrupted out of its pause, and a
     * connection thread ends its request (a wait sees its connection closed) and a de-registration under way.
     */
    private void awaitThreads()
    {
        final long deadline = HostClock.millis() + CLOSE_WAIT_MS;
        if (null != reaper)
        {
            reaper.interrupt();
        }
        try
        {
            for (final Thread thread : threads)
            {
                final long left = deadline - HostClock.millis();
                if (left <= 0)
                {
                    System.err.println("driver " + node + ": " + threads.size() + " thread(s) still at work " +
                        CLOSE_WAIT_MS + " ms after close");
                    return;
                }
                thread.join(left);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
