package org.qnix.bench;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Bandwidth over Aeron IPC between two JVMs: a header message (size, messages), then the messages,
 * which the publication's flow control paces; the peer counts them and acknowledges the last on the
 * other stream. Media driver embedded here, as for {@link AeronIpcTransport}.
 */
public final class AeronStreamTransport implements BandwidthTransport
{
    private static final long CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);

    private final Path directory;
    private final MediaDriver driver;
    private final Aeron aeron;
    private final Publication data;
    private final Subscription acks;
    private final PeerProcess peer;
    private final UnsafeBuffer message;
    private final UnsafeBuffer header = new UnsafeBuffer(new byte[2 * Integer.BYTES]);
    private final int maxSize;
    private final FragmentAssembler assembler;
    private boolean acknowledged;

    private AeronStreamTransport(final Path directory, final MediaDriver driver, final Aeron aeron,
        final Publication data, final Subscription acks, final PeerProcess peer, final int maxSize)
    {
        this.directory = directory;
        this.driver = driver;
        this.aeron = aeron;
        this.data = data;
        this.acks = acks;
        this.peer = peer;
        this.maxSize = maxSize;
        this.message = new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(Math.max(1, maxSize)));
        this.assembler = new FragmentAssembler((buffer, offset, length, h) -> acknowledged = true);
    }

    public static AeronStreamTransport start(final int maxSize)
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
                .ipcTermBufferLength(AeronIpcTransport.TERM_LENGTH)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true));
            aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(directory.toString()));
            final Publication data = aeron.addExclusivePublication(AeronIpcTransport.CHANNEL,
                AeronIpcTransport.PING_STREAM);
            final Subscription acks = aeron.addSubscription(AeronIpcTransport.CHANNEL, AeronIpcTransport.PONG_STREAM);
            peer = PeerProcess.start("aeron-sink", directory.toString());
            final long deadline = System.nanoTime() + CONNECT_TIMEOUT_NS;
            while (!data.isConnected() || !acks.isConnected())
            {
                if (System.nanoTime() > deadline)
                {
                    throw new IllegalStateException("the Aeron peer did not connect in 30 s");
                }
                Thread.onSpinWait();
            }
            return new AeronStreamTransport(directory, driver, aeron, data, acks, peer, maxSize);
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

    public void stream(final int size, final int messages, final int window)
    {
        header.putInt(0, size);
        header.putInt(Integer.BYTES, messages);
        offer(header, 2 * Integer.BYTES);
        for (int m = 0; m < messages; m++)
        {
            offer(message, size);
        }
        acknowledged = false;
        long spins = 0;
        while (!acknowledged)
        {
            if (0 == acks.poll(assembler, 1))
            {
                Thread.onSpinWait();
                if ((++spins & 0xF_FFFF) == 0 && !peer.isAlive())
                {
                    throw new IllegalStateException("the Aeron peer JVM died");
                }
            }
        }
    }

    private void offer(final UnsafeBuffer buffer, final int length)
    {
        long result;
        while ((result = data.offer(buffer, 0, length)) < 0)
        {
            if (Publication.NOT_CONNECTED == result || Publication.CLOSED == result)
            {
                throw new IllegalStateException("the Aeron peer is gone");
            }
            Thread.onSpinWait();
        }
    }

    public void close()
    {
        CloseHelper.quietCloseAll(data, acks);
        peer.close();
        CloseHelper.quietCloseAll(aeron, driver);
        BenchFiles.delete(directory);
    }

    /** The receiving side, in the peer JVM. */
    static void sink(final Path directory)
    {
        try (Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(directory.toString()));
             Subscription data = aeron.addSubscription(AeronIpcTransport.CHANNEL, AeronIpcTransport.PING_STREAM);
             Publication acks = aeron.addExclusivePublication(AeronIpcTransport.CHANNEL, AeronIpcTransport.PONG_STREAM))
        {
            while (!acks.isConnected())
            {
                Thread.onSpinWait();
            }
            final UnsafeBuffer ack = new UnsafeBuffer(new byte[1]);
            final long[] expected = {-1};
            final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
            {
                if (expected[0] < 0)
                {
                    expected[0] = buffer.getInt(offset + Integer.BYTES);
                }
                else
                {
                    expected[0]--;
                }
                if (0 == expected[0])
                {
                    expected[0] = -1;
                    while (acks.offer(ack, 0, 1) < 0)
                    {
                        if (!acks.isConnected())
                        {
                            return;
                        }
                        Thread.onSpinWait();
                    }
                }
            });
            BenchPeer.ready();
            long spins = 0;
            while (!data.isClosed())
            {
                if (0 == data.poll(assembler, 64))
                {
                    Thread.onSpinWait();
                    if ((++spins & 0xF_FFFF) == 0 && (BenchPeer.orphaned() || !acks.isConnected()))
                    {
                        return;
                    }
                }
            }
        }
    }
}
