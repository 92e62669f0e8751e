package org.qnix.daemon;

import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;

import org.agrona.CloseHelper;
import org.qnix.abi.HostClock;

/**
 * The connections one node's driver serves (issue 17, item 6): at most {@link #limit()} at once, each
 * served by one thread, so a local user opening thousands of idle connections costs the daemon a
 * bounded number of threads; and none that stays without a registration in progress or held for
 * longer than {@link #REGISTER_WITHIN_MS}. Every process registers as its first request (libqnix
 * does), so an unregistered connection that long is a stray or a hostile one. The clock starts when
 * the connection is accepted, and again only when a process it held de-registers (it may register
 * again): a refused registration request, or a DEREGISTER with nothing registered, leaves the clock
 * running, so no request short of a registration buys a connection the right to stay (a client
 * repeating such requests held every connection of a node before).
 *
 * <pre>{@code
 * DriverConnections.Connection c = connections.admit(channel);   // null: over the limit
 * c.registering();                                                // its REGISTER request arrived
 * c.settled(false);                                               // refused, or de-registered
 * connections.linger(refusedChannel, now);                       // refused: closed a little later
 * connections.closeIdle(HostClock.millis());             // from a timer
 * connections.remove(c);
 * }</pre>
 */
final class DriverConnections
{
    /** Connections beyond one per Process Table entry: clients being refused, closing or querying. */
    static final int SPARE_CONNECTIONS = 16;
    static final long REGISTER_WITHIN_MS = 10_000;
    /**
     * How long a refused connection stays open (its output shut, its input unread) so that the client's
     * request still goes through and it reads the refusal instead of a broken pipe.
     */
    static final long REFUSED_LINGER_MS = 2_000;
    /** Refused connections kept lingering at most; past that the oldest is closed at once. */
    static final int MAX_LINGERING = 256;

    private final Map<SocketChannel, Connection> open = new ConcurrentHashMap<>();
    private final ConcurrentLinkedDeque<Connection> lingering = new ConcurrentLinkedDeque<>();
    private final int limit;

    /** One accepted connection. */
    static final class Connection implements DriverRequests.Registrations
    {
        private final SocketChannel channel;
        /** Since when it has held no registration and had none in progress; written before {@link #exempt}. */
        private volatile long idleSinceMs;
        private volatile boolean exempt;
        /** It holds a registered process; only its serving thread writes it. */
        private boolean holding;

        private Connection(final SocketChannel channel, final long acceptedMs)
        {
            this.channel = channel;
            this.idleSinceMs = acceptedMs;
        }

        SocketChannel channel()
        {
            return channel;
        }

        /** Its REGISTER or VIA_REGISTER request arrived: exempt from the idle limit while it is carried out. */
        public void registering()
        {
            exempt = true;
        }

        /**
         * @param held true while the connection holds a registered process: exempt until it de-registers;
         *             false: the idle clock starts again if it held one until now, else runs on from
         *             where it was.
         */
        public void settled(final boolean held)
        {
            if (!held && holding)
            {
                idleSinceMs = HostClock.millis();
            }
            holding = held;
            exempt = held;
        }

        private boolean isIdle(final long nowMs)
        {
            return !exempt && nowMs - idleSinceMs > REGISTER_WITHIN_MS;
        }
    }

    /** @param processes P: the Process Table entries of the node. */
    DriverConnections(final int processes)
    {
        this.limit = processes + SPARE_CONNECTIONS;
    }

    int limit()
    {
        return limit;
    }

    int size()
    {
        return open.size();
    }

    /** @return the new connection, or null if the driver already serves {@link #limit()}. */
    Connection admit(final SocketChannel channel, final long nowMs)
    {
        if (open.size() >= limit)
        {
            return null;
        }
        final Connection connection = new Connection(channel, nowMs);
        open.put(channel, connection);
        return connection;
    }

    /**
     * Keeps a refused connection, whose refusal was written and whose output is shut, for
     * {@link #REFUSED_LINGER_MS}; {@link #closeIdle} closes it.
     */
    void linger(final SocketChannel channel, final long nowMs)
    {
        lingering.addLast(new Connection(channel, nowMs));
        while (lingering.size() > MAX_LINGERING)
        {
            final Connection oldest = lingering.pollFirst();
            if (null != oldest)
            {
                CloseHelper.quietClose(oldest.channel);
            }
        }
    }

    void remove(final Connection connection)
    {
        open.remove(connection.channel);
    }

    /**
     * Closes every connection that has had no registration in progress or held for
     * {@link #REGISTER_WITHIN_MS}; its serving thread then ends on the closed channel.
     *
     * @return how many were closed.
     */
    int closeIdle(final long nowMs)
    {
        Connection refused;
        while (null != (refused = lingering.peekFirst()) && nowMs - refused.idleSinceMs > REFUSED_LINGER_MS)
        {
            lingering.remove(refused);
            CloseHelper.quietClose(refused.channel);
        }
        int closed = 0;
        for (final Connection connection : open.values())
        {
            if (connection.isIdle(nowMs))
            {
                open.remove(connection.channel);
                CloseHelper.quietClose(connection.channel);
                closed++;
            }
        }
        return closed;
    }

    void closeAll()
    {
        Connection refused;
        while (null != (refused = lingering.pollFirst()))
        {
            CloseHelper.quietClose(refused.channel);
        }
        for (final Connection connection : open.values())
        {
            CloseHelper.quietClose(connection.channel);
        }
        open.clear();
    }
}
