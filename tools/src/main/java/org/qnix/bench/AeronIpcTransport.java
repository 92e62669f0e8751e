package org.qnix.bench;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The best-known Java inter-process messaging: Aeron IPC between two JVMs. The media driver is
 * embedded in the measuring JVM (shared threading mode, back-off idle, as measured in PLATFORM.md);
 * the peer JVM connects to it, subscribes to the ping stream and echoes on the pong stream.
 */
public final class AeronIpcTransport implements LatencyTransport
{
    static final String CHANNEL = "aeron:ipc";
    static final int PING_STREAM = 1001;
    static final int PONG_STREAM = 1002;
    /** Terms of 32 MiB: messages up to 4 MiB (an eighth of a term), so 2 MiB ones fit whole. */
    static final int TERM_LENGTH = 32 << 20;
    private static final long CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);

    private final Path directory;
    private final MediaDriver driver;
    private final Aeron aeron;
    private final Publication ping;
    private final Subscription pong;
    private final PeerProcess peer;
    private final UnsafeBuffer message;
    private final int maxSize;
    private final FragmentAssembler assembler;
    private boolean echoed;

    private AeronIpcTransport(final Path directory, final MediaDriver driver, final Aeron aeron, final Publication ping,
        final Subscription pong, final PeerProcess peer, final int maxSize)
    {
        this.directory = directory;
        this.driver = driver;
        this.aeron = aeron;
        this.ping = ping;
        this.pong = pong;
        this.peer = peer;
        this.maxSize = maxSize;
        this.message = new UnsafeBuffer(new byte[Math.max(1, maxSize)]);
        final FragmentHandler handler = (buffer, offset, length, header) -> echoed = true;
        this.assembler = new FragmentAssembler(handler);
    }

    public static AeronIpcTransport start(final int maxSize)
    {
        final Path directory = BenchFiles.newFile("aeron");
        MediaDriver driver = null;
        Aeron aeron = null;
        PeerProcess peer = null;
        try
        {
            driver = MediaDriver.launch(new MediaDriver.Context()
                .aeronDirectoryName(directory.toString())
                .threadingMode(ThreadingMode.SHARED)
                .sharedIdleStrategy(new BackoffIdleStrategy())
                .ipcTermBufferLength(TERM_LENGTH)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true));
            aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(directory.toString()));
            final Publication ping = aeron.addExclusivePublication(CHANNEL, PING_STREAM);
            final Subscription pong = aeron.addSubscription(CHANNEL, PONG_STREAM);
            peer = PeerProcess.start("aeron", directory.toString());
            final long deadline = System.nanoTime() + CONNECT_TIMEOUT_NS;
            while (!ping.isConnected() || !pong.isConnected())
            {
                if (System.nanoTime() > deadline)
                {
                    throw new IllegalStateException("the Aeron peer did not connect in 30 s");
                }
                Thread.onSpinWait();
            }
            return new AeronIpcTransport(directory, driver, aeron, ping, pong, peer, maxSize);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(peer, aeron, driver);
            BenchFiles.delete(directory);
            throw ex;
        }
    }

    public String name()
    {
        return "aeron-ipc";
    }

    public int maxSize()
    {
        return maxSize;
    }

    public void roundTrip(final int size)
    {
        long result;
        while ((result = ping.offer(message, 0, size)) < 0)
        {
            if (Publication.NOT_CONNECTED == result || Publication.CLOSED == result)
            {
                throw new IllegalStateException("the Aeron peer is gone");
            }
            Thread.onSpinWait();
        }
        echoed = false;
        long spins = 0;
        while (!echoed)
        {
            if (0 == pong.poll(assembler, 1))
            {
                Thread.onSpinWait();
                if ((++spins & 0xF_FFFF) == 0 && !peer.isAlive())
                {
                    throw new IllegalStateException("the Aeron peer JVM died");
                }
            }
        }
    }

    public void close()
    {
        CloseHelper.quietCloseAll(ping, pong);
        peer.close();
        CloseHelper.quietCloseAll(aeron, driver);
        BenchFiles.delete(directory);
    }

    /** The echo side, in the peer JVM. */
    static void echo(final Path directory)
    {
        try (Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(directory.toString()));
             Subscription ping = aeron.addSubscription(CHANNEL, PING_STREAM);
             Publication pong = aeron.addExclusivePublication(CHANNEL, PONG_STREAM))
        {
            while (!pong.isConnected())
            {
                Thread.onSpinWait();
            }
            final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
            {
                long result;
                while ((result = pong.offer(buffer, offset, length)) < 0)
                {
                    if (Publication.NOT_CONNECTED == result || Publication.CLOSED == result)
                    {
                        return;
                    }
                    Thread.onSpinWait();
                }
            });
            BenchPeer.ready();
            long spins = 0;
            while (!ping.isClosed())
            {
                if (0 == ping.poll(assembler, 16))
                {
                    Thread.onSpinWait();
                    if ((++spins & 0xF_FFFF) == 0 && (BenchPeer.orphaned() || !pong.isConnected()))
                    {
                        return;
                    }
                }
            }
        }
    }
}
