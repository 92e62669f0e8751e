package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixDriverException;

/**
 * Issue 17, item 6: the driver's connections, against a real daemon. It keeps accepting after an
 * accept fails (the daemon out of file descriptors), serves a bounded number of connections with a
 * bounded number of threads and tells the others why, closes connections that never ask to register,
 * and {@code Qnix.init} keeps to its timeout even when the driver accepts nothing.
 */
class DriverConnectionsTest
{
    private static final NicCoordinates NODE = NicCoordinates.parse("0-0");
    /** Looks 20 ms apart ({@link TestClusters#await}) that find the same count of open files. */
    private static final int SETTLED_LOOKS = 10;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void theDriverCapsConnectionsClosesIdleOnesAndKeepsAcceptingAfterErrors() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("c"), 2, 1, "threads");
        final List<SocketChannel> raw = new ArrayList<>();
        final long daemon = ClusterProperties.read(dir.propertiesFile()).orElseThrow().daemonPid();
        try
        {
            final int processes = ClusterProperties.read(dir.propertiesFile()).orElseThrow().parameters()
                .maxProcessesPerNic();
            final int limit = processes + 16;

            // Far more idle connections than the limit: the ones past it are told why and closed.
            int refused = 0;
            for (int i = 0; i < 3 * limit; i++)
            {
                final SocketChannel channel = connect(dir);
                raw.add(channel);
                if (i >= limit + 2)
                {
                    final String reply = readRefusal(channel);
                    assertTrue(reply.contains("connections at most"), reply);
                    refused++;
                }
            }
            System.out.println("connections: " + refused + " refused past the limit of " + limit);
            final int threads = threads(daemon);
            assertTrue(threads < 2 * limit + 60, "daemon threads " + threads + " for " + 3 * limit + " connections");
            final QnixDriverException full = assertThrows(QnixDriverException.class, () -> init(dir, 701, 30));
            assertEquals(DriverProtocol.REFUSED, full.code(), full.getMessage());
            assertTrue(full.getMessage().contains("connections at most"), full.getMessage());

            // Connections that never ask to register are closed by the driver.
            final SocketChannel idle = raw.get(0);
            idle.configureBlocking(true);
            assertEquals(-1, idle.read(ByteBuffer.allocate(16)), "the driver closed an idle connection");
            closeAll(raw);
            try (Qnix qnix = init(dir, 702, 30))
            {
                assertEquals(NODE, qnix.node());
            }

            // The daemon runs out of file descriptors: accept fails, and works again once it has some.
            // Counted once the driver has closed its ends of the connections above: a count taken while it
            // still closed them would leave room for every connection below.
            final long open = settledOpenFiles(daemon);
            final long before = openFilesLimit(daemon);
            prlimit(daemon, open + 4);
            for (int i = 0; i < 20; i++)
            {
                raw.add(connect(dir));
            }
            TestClusters.await("the daemon's failed accept", () -> ClusterControl.readLog(dir).contains("accept failed, trying again"));
            closeAll(raw);
            prlimit(daemon, before);
            try (Qnix qnix = init(dir, 703, 60))
            {
                assertEquals(NODE, qnix.node());
            }
        }
        finally
        {
            closeAll(raw);
            TestClusters.down(dir);
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void initKeepsToItsTimeoutWhenTheDriverAcceptsNothing() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("a"), 2, 1, "threads");
        final long daemon = ClusterProperties.read(dir.propertiesFile()).orElseThrow().daemonPid();
        final List<SocketChannel> raw = new ArrayList<>();
        final ExecutorService connector = Executors.newSingleThreadExecutor();
        try
        {
            signal("STOP", daemon);
            // Fill the socket's queue of connections: the next connect() blocks.
            while (true)
            {
                final Future<SocketChannel> next = connector.submit(() -> connect(dir));
                try
                {
                    // Long enough that a connect merely not yet scheduled is not taken for a full queue.
                    raw.add(next.get(2, TimeUnit.SECONDS));
                }
                catch (final TimeoutException ex)
                {
                    break;
                }
                assertTrue(raw.size() < 10_000, "the queue of connections never filled");
            }
            final QnixDriverException ex = assertThrows(QnixDriverException.class, () -> init(dir, 704, 2));
            assertTrue(ex.getMessage().contains("within 2000 ms"), ex.getMessage());
        }
        finally
        {
            signal("CONT", daemon);
            connector.shutdownNow();
            closeAll(raw);
            TestClusters.down(dir);
        }
    }

    private static Qnix init(final ClusterDirectory dir, final int ai, final int seconds)
    {
        return Qnix.options().name(new ProcessName(ai, 0)).group(ai, 1).cluster(dir.name()).node(NODE)
            .timeout(Duration.ofSeconds(seconds)).init();
    }

    private static SocketChannel connect(final ClusterDirectory dir) throws IOException
    {
        final SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        channel.connect(UnixDomainSocketAddress.of(dir.driverSocket(NODE)));
        return channel;
    }

    private static String readRefusal(final SocketChannel channel) throws IOException
    {
        final DataInputStream in = new DataInputStream(Channels.newInputStream(channel));
        assertEquals(DriverProtocol.FAILED, in.readInt());
        assertEquals(DriverProtocol.REFUSED, in.readInt());
        return DriverProtocol.readText(in);
    }

    private static int threads(final long pid) throws IOException
    {
        for (final String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")))
        {
            if (line.startsWith("Threads:"))
            {
                return Integer.parseInt(line.substring("Threads:".length()).trim());
            }
        }
        throw new IllegalStateException("no thread count for pid " + pid);
    }

    /** @return the daemon's count of open files once it has stayed the same for a few looks in a row. */
    private static long settledOpenFiles(final long pid) throws Exception
    {
        final long[] last = {openFiles(pid), 0};
        TestClusters.await("the daemon's open files to settle", () ->
        {
            final long now = openFiles(pid);
            last[1] = now == last[0] ? last[1] + 1 : 0;
            last[0] = now;
            return last[1] >= SETTLED_LOOKS;
        });
        return last[0];
    }

    private static long openFiles(final long pid)
    {
        try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd")))
        {
            return fds.count();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static long openFilesLimit(final long pid) throws IOException
    {
        for (final String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "limits")))
        {
            if (line.startsWith("Max open files"))
            {
                return Long.parseLong(line.substring("Max open files".length()).trim().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException("no open files limit for pid " + pid);
    }

    private static void prlimit(final long pid, final long files) throws Exception
    {
        run("prlimit", "--pid", Long.toString(pid), "--nofile=" + files + ":");
    }

    private static void signal(final String signal, final long pid) throws Exception
    {
        run("kill", "-" + signal, Long.toString(pid));
    }

    private static void run(final String... command) throws Exception
    {
        final Process process = new ProcessBuilder(command).inheritIO().start();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), String.join(" ", command));
        assertEquals(0, process.exitValue(), String.join(" ", command));
    }

    private static void closeAll(final List<SocketChannel> channels)
    {
        for (final SocketChannel channel : channels)
        {
            try
            {
                channel.close();
            }
            catch (final IOException ignore)
            {
            }
        }
        channels.clear();
    }
}
