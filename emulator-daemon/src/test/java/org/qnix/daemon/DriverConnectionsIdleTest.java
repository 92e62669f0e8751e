package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.SocketChannel;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.qnix.abi.HostClock;

/**
 * {@link DriverConnections}' idle rule, by its clock: a connection that never holds a registration is
 * closed {@link DriverConnections#REGISTER_WITHIN_MS} after it was accepted, whatever requests it makes
 * that do not register (a refused REGISTER, a DEREGISTER with nothing registered); one whose process
 * de-registers has the whole window again to register another. (The end-to-end side, against a real
 * daemon, is tools' {@code DriverConnectionsTest}.)
 */
class DriverConnectionsIdleTest
{
    private final DriverConnections connections = new DriverConnections(2);
    private SocketChannel channel;

    @BeforeEach
    void open() throws IOException
    {
        channel = SocketChannel.open();
    }

    @AfterEach
    void close() throws IOException
    {
        channel.close();
    }

    @Test
    void requestsThatRegisterNothingDoNotKeepAConnectionOpen()
    {
        final long now = HostClock.millis();
        final DriverConnections.Connection connection =
            connections.admit(channel, now - DriverConnections.REGISTER_WITHIN_MS + 1_000);
        // A REGISTER refused, then a DEREGISTER with nothing registered, each answered.
        connection.registering();
        connection.settled(false);
        connection.settled(false);

        assertEquals(0, connections.closeIdle(now), "still within the window from its accept");
        assertEquals(1, connections.closeIdle(HostClock.millis() + 1_500),
            "closed at the end of the window its accept opened, not one its requests reopened");
        assertFalse(channel.isOpen());
    }

    @Test
    void aProcessThatDeRegistersHasTheWholeWindowToRegisterAgain()
    {
        final DriverConnections.Connection connection =
            connections.admit(channel, HostClock.millis() - 2 * DriverConnections.REGISTER_WITHIN_MS);
        connection.registering();
        connection.settled(true);
        assertEquals(0, connections.closeIdle(HostClock.millis()), "exempt while it holds a process");

        connection.registering();
        connection.settled(false);
        assertEquals(0, connections.closeIdle(HostClock.millis() + 1_500), "the window starts again");
        assertTrue(channel.isOpen());
        assertEquals(1, connections.closeIdle(HostClock.millis() + DriverConnections.REGISTER_WITHIN_MS + 1),
            "and ends");
    }
}
