package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;

/**
 * {@code cluster up --debug-firmware X-Y}: the firmware JVM answers a debugger on the port it printed,
 * on this host only. A JDWP agent lets whoever connects run code as the cluster's owner and read every
 * process's memory, so the port must not listen on the machine's other interfaces.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DebugFirmwareTest
{
    private static final int TCP_LISTEN = 0x0A;

    @Test
    void theFirmwareListensForADebuggerOnLoopbackOnly() throws Exception
    {
        final String name = TestClusters.uniqueName("g");
        final int port = freePort();
        final ClusterDirectory dir = ClusterDirectory.of(name);
        try
        {
            TestClusters.up(new ClusterControl.Settings(name, TestClusters.small(2, 1).build()).firmware("shared")
                .debug(new NicCoordinates(1, 0), port));
            final List<String> listening = listeningAddresses(port);
            assertFalse(listening.isEmpty(), "something listens on port " + port);
            for (final String address : listening)
            {
                final boolean loopback = "0100007F".equals(address) ||
                    "00000000000000000000000001000000".equals(address);
                assertTrue(loopback, "port " + port + " listens on " + address + ", not loopback: " + listening);
            }
            // The JDWP handshake: the agent echoes the 14 bytes a debugger sends first.
            final byte[] handshake = "JDWP-Handshake".getBytes(StandardCharsets.US_ASCII);
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port))
            {
                socket.setSoTimeout(30_000);
                socket.getOutputStream().write(handshake);
                final InputStream in = socket.getInputStream();
                assertArrayEquals(handshake, in.readNBytes(handshake.length));
            }
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    /** The local addresses (hex, as /proc/net/tcp{,6} print them) of the sockets listening on {@code port}. */
    private static List<String> listeningAddresses(final int port) throws IOException
    {
        final List<String> addresses = new ArrayList<>();
        final String suffix = ":" + String.format(Locale.ROOT, "%04X", port);
        for (final String table : List.of("/proc/net/tcp", "/proc/net/tcp6"))
        {
            final Path path = Path.of(table);
            if (!Files.exists(path))
            {
                continue;
            }
            final List<String> lines = Files.readAllLines(path);
            for (final String line : lines.subList(1, lines.size()))
            {
                final String[] fields = line.trim().split("\\s+");
                if (fields[1].endsWith(suffix) && Integer.parseInt(fields[3], 16) == TCP_LISTEN)
                {
                    addresses.add(fields[1].substring(0, fields[1].length() - suffix.length()));
                }
            }
        }
        return addresses;
    }
}
