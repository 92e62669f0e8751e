package org.qnix.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ViplResult;

/**
 * The driver client's requests and replies, byte for byte, against a driver written here: a unix socket
 * whose other end reads and writes {@code DriverProtocol} with plain data streams, as the daemon does.
 * Each test scripts what the driver expects and answers; the script's own assertions run on its thread
 * and are rethrown here.
 */
@Timeout(60)
class DriverProxyTest
{
    @TempDir
    Path dir;

    private ServerSocketChannel server;
    private CompletableFuture<Void> driver;
    private DriverProxy proxy;

    private interface Script
    {
        void run(DataInputStream in, DataOutputStream out) throws IOException;
    }

    /** Starts a driver that accepts one connection and runs {@code script} on it, then connects to it. */
    private void driver(final Script script) throws IOException
    {
        final Path socket = dir.resolve("driver.sock");
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(socket));
        driver = CompletableFuture.runAsync(() ->
        {
            try (SocketChannel channel = server.accept())
            {
                final DataInputStream in = new DataInputStream(Channels.newInputStream(channel));
                final DataOutputStream out =
                    new DataOutputStream(new BufferedOutputStream(Channels.newOutputStream(channel)));
                script.run(in, out);
                out.flush();
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException(ex);
            }
        });
        proxy = DriverProxy.connect(socket, 10_000, "the test driver");
    }

    private void driverDone() throws Exception
    {
        driver.get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws IOException
    {
        if (null != proxy)
        {
            proxy.close();
        }
        if (null != server)
        {
            server.close();
        }
    }

    @Test
    void registerSendsNameGroupPidAndTimeoutAndReadsWhereTheVniIs() throws Exception
    {
        driver((in, out) ->
        {
            assertEquals(DriverProtocol.REGISTER, in.readInt());
            assertEquals(7, in.readInt());
            assertEquals(1, in.readInt());
            assertEquals(70, in.readInt());
            assertEquals(4, in.readInt());
            assertEquals((int)ProcessHandle.current().pid(), in.readInt());
            assertEquals(5_000L, in.readLong());
            writeRegistered(out, DriverProtocol.ON_NIC_CPU);
        });
        final Registration registration = proxy.register(new ProcessName(7, 1), 70, 4, 5_000, 64);
        assertEquals(new Registration(3, 4, 1L << 20, 65_536, 12L * 4096, true), registration);
        driverDone();
    }

    /** REGISTERED: index 3, NIC PID 4, the VNI at 1 MiB (64 KiB long), the Host Process Structures at page 12. */
    private static void writeRegistered(final DataOutputStream out, final int placement) throws IOException
    {
        out.writeInt(DriverProtocol.REGISTERED);
        out.writeInt(3);
        out.writeInt(4);
        out.writeLong(1L << 20);
        out.writeInt(65_536);
        out.writeLong(12L * 4096);
        out.writeInt(placement);
    }

    /** A REGISTERED whose placement is neither off nor on the NICs' CPU is not taken for either. */
    @Test
    void aRegistrationWithAnUnknownPlacementIsRefused() throws Exception
    {
        driver((in, out) ->
        {
            // The REGISTER request: type, ai, pi, group, groupSize, pid, timeout.
            in.readFully(new byte[6 * Integer.BYTES + Long.BYTES]);
            writeRegistered(out, 7);
        });
        final DriverException ex = assertThrows(DriverException.class,
            () -> proxy.register(new ProcessName(7, 1), 70, 4, 5_000, 64));
        assertEquals("bad placement 7 on the driver socket", ex.getCause().getMessage());
        driverDone();
    }

    /**
     * The driver reads a negative timeout as 0, answers after its own work, and the reply is read: the
     * watchdog gives it the grace too. A watchdog armed for the negative sum (1 ms) closed the
     * connection first, which the driver takes for the process's death: it freed the pages the
     * library still mapped.
     */
    @Test
    void aNegativeTimeoutStillGivesTheDriverItsGrace() throws Exception
    {
        driver((in, out) ->
        {
            assertEquals(DriverProtocol.VIA_CONNECT_WAIT, in.readInt());
            assertEquals(2, in.readInt());
            in.readFully(new byte[2]);
            assertEquals(Long.MIN_VALUE, in.readLong());
            try
            {
                Thread.sleep(200);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            out.writeInt(DriverProtocol.VIA_FAILED);
            out.writeInt(ViplResult.TIMEOUT.code());
            DriverProtocol.writeText(out, "no connection request");
        });
        final ViaDriverException ex = assertThrows(ViaDriverException.class,
            () -> proxy.viaConnectWait(new byte[2], Long.MIN_VALUE));
        assertEquals(ViplResult.TIMEOUT, ex.result());
        driverDone();
    }

    @Test
    void aTimedOutRegistrationNamesTheMissingMembersUpToTheLimit() throws Exception
    {
        driver((in, out) ->
        {
            skipRegister(in);
            out.writeInt(DriverProtocol.TIMED_OUT);
            DriverProtocol.writeText(out, "group 7 incomplete");
            out.writeInt(3);
            for (int pi = 1; pi <= 3; pi++)
            {
                out.writeInt(7);
                out.writeInt(pi);
            }
        });
        final RegistrationTimeoutException ex = assertThrows(RegistrationTimeoutException.class,
            () -> proxy.register(new ProcessName(7, 0), 7, 4, 100, 2));
        assertEquals("group 7 incomplete", ex.getMessage());
        assertEquals(List.of(new ProcessName(7, 1), new ProcessName(7, 2)), ex.missing());
        assertEquals(DriverProtocol.TIMED_OUT, ex.code());
        driverDone();
    }

    @Test
    void aFailedRegistrationCarriesTheDriversCodeAndText() throws Exception
    {
        driver((in, out) ->
        {
            skipRegister(in);
            out.writeInt(DriverProtocol.FAILED);
            out.writeInt(DriverProtocol.NIC_DEAD);
            DriverProtocol.writeText(out, "NIC 1-0 is dead");
        });
        final DriverException ex = assertThrows(DriverException.class,
            () -> proxy.register(new ProcessName(7, 0), 7, 1, 100, 64));
        assertEquals(DriverProtocol.NIC_DEAD, ex.code());
        assertEquals("NIC 1-0 is dead", ex.getMessage());
        driverDone();
    }

    @Test
    void groupMembersAreReadWithTheirNodesOrNoneWhenUnknown() throws Exception
    {
        driver((in, out) ->
        {
            assertEquals(DriverProtocol.GROUP_QUERY, in.readInt());
            assertEquals(9, in.readInt());
            out.writeInt(DriverProtocol.GROUP_INFO);
            out.writeInt(2);
            out.writeInt(2);
            out.writeInt(9);
            out.writeInt(0);
            out.writeInt(NicCoordinates.parse("1-0").packed());
            out.writeInt(9);
            out.writeInt(1);
            out.writeInt(-1);
        });
        final List<String> members = new ArrayList<>();
        proxy.groupMembers(9, (name, node) -> members.add(name + "@" + node));
        assertEquals(List.of(new ProcessName(9, 0) + "@" + NicCoordinates.parse("1-0"), new ProcessName(9, 1) + "@null"),
            members);
        driverDone();
    }

    @Test
    void buffersAreAllocatedLockedUnlockedAndFreedOneRequestAtATime() throws Exception
    {
        driver((in, out) ->
        {
            assertEquals(DriverProtocol.BUFFER_ALLOCATE, in.readInt());
            assertEquals(5000, in.readInt());
            assertEquals(100, in.readInt());
            assertEquals(0, in.readInt());
            out.writeInt(DriverProtocol.BUFFER);
            out.writeInt(17);
            out.writeInt(2);
            out.writeLong(40L * 4096);
            out.writeLong(7L * 4096);
            out.flush();

            assertEquals(DriverProtocol.BUFFER_LOCK, in.readInt());
            assertEquals(17, in.readInt());
            out.writeInt(DriverProtocol.LOCK_COUNT);
            out.writeInt(1);
            out.flush();

            assertEquals(DriverProtocol.BUFFER_UNLOCK, in.readInt());
            assertEquals(17, in.readInt());
            out.writeInt(DriverProtocol.FAILED);
            out.writeInt(DriverProtocol.REFUSED);
            DriverProtocol.writeText(out, "region 17 is not locked");
            out.flush();

            assertEquals(DriverProtocol.BUFFER_POOL, in.readInt());
            assertEquals(1, in.readInt());
            out.writeInt(DriverProtocol.BUFFER);
            out.writeInt(18);
            out.writeInt(1);
            out.writeLong(3L * 4096);
            out.flush();

            assertEquals(DriverProtocol.BUFFER_FREE, in.readInt());
            assertEquals(17, in.readInt());
            out.writeInt(DriverProtocol.OK);
            out.flush();

            assertEquals(DriverProtocol.DEREGISTER, in.readInt());
            out.writeInt(DriverProtocol.DEREGISTERED);
        });
        final BufferRegion region = proxy.allocateBuffer(5000, 100, false, 2);
        assertEquals(17, region.id());
        assertArrayEquals(new long[]{40L * 4096, 7L * 4096}, region.pages());
        assertEquals(1, proxy.lockBuffer(17, true));
        final DriverException refused = assertThrows(DriverException.class, () -> proxy.lockBuffer(17, false));
        assertEquals(DriverProtocol.REFUSED, refused.code());
        assertEquals("region 17 is not locked", refused.getMessage());
        assertArrayEquals(new long[]{3L * 4096}, proxy.bufferPool(1).pages());
        proxy.freeBuffer(17);
        proxy.deregister();
        assertTrue(proxy.isOpen());
        driverDone();
    }

    @Test
    void aReplyOfTheWrongShapeClosesTheConnection() throws Exception
    {
        driver((in, out) ->
        {
            in.readInt();
            in.readInt();
            in.readInt();
            in.readInt();
            out.writeInt(DriverProtocol.BUFFER);
            out.writeInt(1);
            out.writeInt(5);
        });
        final DriverException ex = assertThrows(DriverException.class, () -> proxy.allocateBuffer(64, 0, true, 1));
        assertEquals(DriverProtocol.REFUSED, ex.code());
        assertTrue(ex.getMessage().contains("with 5 pages, expected 1"), ex.getMessage());
        assertFalse(proxy.isOpen(), "the stream cannot be trusted past a reply of the wrong shape");
        driverDone();
    }

    @Test
    void aDriverThatGoesAwayIsALostConnectionAndDeregisterStaysQuiet() throws Exception
    {
        driver((in, out) ->
        {
            assertEquals(DriverProtocol.BUFFER_LOCK, in.readInt());
            in.readInt();
            // Closes without an answer: the daemon died.
        });
        final DriverException lost = assertThrows(DriverException.class, () -> proxy.lockBuffer(3, true));
        assertEquals(0, lost.code());
        assertTrue(lost.getMessage().startsWith("lost the connection to the test driver"), lost.getMessage());
        driverDone();
        proxy.deregister();
    }

    @Test
    void aDriverThatNeverAcceptsEndsTheConnectAtItsTimeout() throws Exception
    {
        final Path socket = dir.resolve("absent.sock");
        final DriverException ex = assertThrows(DriverException.class, () -> DriverProxy.connect(socket, 1_000, "nobody"));
        assertTrue(ex.getMessage().contains("nobody"), ex.getMessage());
        assertNull(proxy);
    }

    private static void skipRegister(final DataInputStream in) throws IOException
    {
        assertEquals(DriverProtocol.REGISTER, in.readInt());
        for (int i = 0; i < 5; i++)
        {
            in.readInt();
        }
        in.readLong();
        if (in.available() > 0)
        {
            throw new EOFException("a REGISTER request longer than its fields");
        }
    }
}
