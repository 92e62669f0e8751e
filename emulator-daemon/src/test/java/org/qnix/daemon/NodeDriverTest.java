package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.HostClock;
import org.qnix.firmware.NodeImage;

/**
 * One node's driver on its real socket, over a real node image and a running NIC: which connections
 * its idle rule closes ({@link DriverConnections}).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class NodeDriverTest
{
    private static final long TIMEOUT_MS = 20_000;
    /** A hang guard, well past the idle rule's 10 s and the driver's 1 s check. */
    private static final long CLOSED_WITHIN_MS = 60_000;
    private static final int PID = (int)ProcessHandle.current().pid();

    @TempDir
    Path base;

    private DriverTestCluster cluster;
    private NodeDriver driver;
    private final List<SocketChannel> channels = new ArrayList<>();

    @AfterEach
    void tearDown()
    {
        CloseHelper.quietCloseAll(channels);
        CloseHelper.quietClose(driver);
        CloseHelper.quietClose(cluster);
    }

    /** @return the socket of a driver started on a one-node cluster, both closed after the test. */
    private Path startDriver() throws IOException, InterruptedException
    {
        cluster = new DriverTestCluster(base, 1, true);
        final NodeImage image = cluster.images.get(0);
        final Path socket = cluster.dir.driverSocket(image.node());
        driver = new NodeDriver(image, cluster.registry, socket, new NicHeartbeats(cluster.images),
            DriverAccess.of(cluster.dir, false));
        driver.start();
        return socket;
    }

    /**
     * Every connection the driver serves but two sends a REGISTER it refuses, one registers and
     * de-registers, one registers and stays: the driver is full, but the refused and the de-registered
     * ones are closed by the idle rule, and the next process is served.
     */
    @Test
    void refusedAndDeregisteredConnectionsAreClosedWhenIdleAndRegisteredOnesAreNot() throws Exception
    {
        final Path socket = startDriver();
        final int limit = cluster.params.maxProcessesPerNic() + DriverConnections.SPARE_CONNECTIONS;

        final SocketChannel holder = connect(socket);
        register(holder, 1, 1);
        readRegistered(holder);
        final SocketChannel quitter = connect(socket);
        register(quitter, 2, 1);
        readRegistered(quitter);
        final DataOutputStream quit = new DataOutputStream(Channels.newOutputStream(quitter));
        quit.writeInt(DriverProtocol.DEREGISTER);
        quit.flush();
        assertEquals(DriverProtocol.DEREGISTERED, readReplyType(quitter));

        final List<SocketChannel> idle = new ArrayList<>(List.of(quitter));
        for (int i = 2; i < limit; i++)
        {
            final SocketChannel refused = connect(socket);
            // Group size 0: refused before anything is claimed.
            register(refused, 10 + i, 0);
            assertTrue(readRefusal(refused).contains("bad registration request"));
            idle.add(refused);
        }
        final String full = readRefusal(connect(socket));
        assertTrue(full.contains("connections at most"), full);

        final long deadline = HostClock.millis() + CLOSED_WITHIN_MS;
        for (final SocketChannel channel : idle)
        {
            channel.configureBlocking(false);
            while (channel.read(ByteBuffer.allocate(16)) >= 0)
            {
                assertTrue(HostClock.millis() < deadline,
                    "the driver closed the refused and de-registered connections as idle");
                Thread.sleep(10);
            }
        }

        final DataOutputStream query = new DataOutputStream(Channels.newOutputStream(holder));
        query.writeInt(DriverProtocol.GROUP_QUERY);
        query.writeInt(1);
        query.flush();
        assertEquals(DriverProtocol.GROUP_INFO, readReplyType(holder), "the registered connection is still served");
        final SocketChannel next = connect(socket);
        register(next, 3, 1);
        readRegistered(next);
    }

    /**
     * A process that hangs up just before the driver closes: its connection's thread de-registers it,
     * reading the node's image, and close() returns only once that thread is done, so that the image may
     * be unmapped after it. Before, the test's cluster was unmapped under the de-registration now and then:
     * a SIGSEGV of this JVM.
     */
    @Test
    void closeReturnsOnceNoThreadOfTheDriverReadsTheImage() throws Exception
    {
        final Path socket = startDriver();
        for (int ai = 1; ai <= 3; ai++)
        {
            final SocketChannel process = connect(socket);
            register(process, ai, 1);
            readRegistered(process);
        }

        CloseHelper.quietCloseAll(channels);
        driver.close();
        final NodeImage image = cluster.images.get(0);
        final List<String> left = Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
            .map(Thread::getName).filter(name -> name.startsWith("driver-" + image.node())).toList();
        assertTrue(left.isEmpty(), "threads of the closed driver: " + left);
    }

    private SocketChannel connect(final Path socket) throws IOException
    {
        final SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        channels.add(channel);
        channel.connect(UnixDomainSocketAddress.of(socket));
        return channel;
    }

    /** REGISTER of (ai, 0) in group ai. */
    private static void register(final SocketChannel channel, final int ai, final int groupSize) throws IOException
    {
        final DataOutputStream out = new DataOutputStream(Channels.newOutputStream(channel));
        out.writeInt(DriverProtocol.REGISTER);
        out.writeInt(ai);
        out.writeInt(0);
        out.writeInt(ai);
        out.writeInt(groupSize);
        out.writeInt(PID);
        out.writeLong(TIMEOUT_MS);
        out.flush();
    }

    /** @return the type of a reply with no fields, or of the last reply read on the channel. */
    private static int readReplyType(final SocketChannel channel) throws IOException
    {
        return new DataInputStream(Channels.newInputStream(channel)).readInt();
    }

    /**
     * Reads a REGISTERED reply whole: index, NIC PID, VNI address and length, Host Process Structures
     * address, placement.
     */
    private static void readRegistered(final SocketChannel channel) throws IOException
    {
        final DataInputStream in = new DataInputStream(Channels.newInputStream(channel));
        final int type = in.readInt();
        if (DriverProtocol.FAILED == type)
        {
            in.readInt();
            throw new AssertionError("registration failed: " + DriverProtocol.readText(in));
        }
        assertEquals(DriverProtocol.REGISTERED, type);
        in.readFully(new byte[Integer.BYTES + Integer.BYTES + Long.BYTES + Integer.BYTES + Long.BYTES + Integer.BYTES]);
    }

    private static String readRefusal(final SocketChannel channel) throws IOException
    {
        final DataInputStream in = new DataInputStream(Channels.newInputStream(channel));
        assertEquals(DriverProtocol.FAILED, in.readInt());
        assertEquals(DriverProtocol.REFUSED, in.readInt());
        return DriverProtocol.readText(in);
    }
}
