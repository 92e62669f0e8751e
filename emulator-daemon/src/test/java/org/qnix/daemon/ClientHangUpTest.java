package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedInputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The driver's look for a process that closed its connection, over a real Unix socket: it finds nothing
 * while the process is connected, takes no byte of a request that came meanwhile (the requests read after
 * it arrive whole and in order), and finds the hang-up once the process closed its end.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ClientHangUpTest
{
    @TempDir
    Path dir;

    @Test
    void looksWithoutTakingARequestsBytesAndSeesTheClose() throws Exception
    {
        final UnixDomainSocketAddress address = UnixDomainSocketAddress.of(dir.resolve("driver.sock"));
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX))
        {
            server.bind(address);
            try (SocketChannel process = SocketChannel.open(address); SocketChannel driver = server.accept())
            {
                final ClientHangUp hangUp =
                    new ClientHangUp(driver, new BufferedInputStream(Channels.newInputStream(driver)));
                assertFalse(hangUp.getAsBoolean(), "connected, nothing sent");

                process.write(ByteBuffer.allocate(8).putInt(42).putInt(7).flip());
                // The first look reads one byte ahead and puts it back; the second sees it waiting.
                assertFalse(hangUp.getAsBoolean(), "a request came: still there");
                assertFalse(hangUp.getAsBoolean(), "a request came: still there");
                assertEquals(42, hangUp.input().readInt());
                assertEquals(7, hangUp.input().readInt());
                assertFalse(hangUp.getAsBoolean(), "connected, everything read");

                process.close();
                assertTrue(hangUp.getAsBoolean(), "the process closed its end");
                assertEquals(-1, hangUp.input().read());
            }
        }
    }
}
