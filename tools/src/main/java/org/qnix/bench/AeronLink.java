package org.qnix.bench;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;

/**
 * Two JVMs joined by Aeron IPC, as the Aeron baselines use them: the media driver embedded in the
 * measuring JVM (shared threading mode, back-off idle, as measured in PLATFORM.md), a publication to the
 * peer on one stream and a subscription to the peer's answers on another. The peer side is
 * {@link #serve}.
 */
final class AeronLink implements AutoCloseable
{
    static final String CHANNEL = "aeron:ipc";
    static final int TO_PEER_STREAM = 1001;
    static final int FROM_PEER_STREAM = 1002;
    /** Terms of 32 MiB: messages up to 4 MiB (an eighth of a term), so 2 MiB ones fit whole. */
    static final int TERM_LENGTH = 32 << 20;
    private static final long CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);

    private final Path directory;
    private final MediaDriver driver;
    private final Aeron aeron;
    private final Publication toPeer;
    private final Subscription fromPeer;
    private final PeerProcess peer;

    private AeronLink(final Path directory, final MediaDriver driver, final Aeron aeron, final Publication toPeer,
        final Subscription fromPeer, final PeerProcess peer)
    {
        this.directory = directory;
        this.driver = driver;
        this.aeron = aeron;
        this.toPeer = toPeer;
        this.fromPeer = fromPeer;
        this.peer = peer;
    }

    /** Starts the driver, then {@code BenchPeer peerMode DIRECTORY}, and waits until both streams connect. */
    static AeronLink start(final String peerMode)
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
            final Publication toPeer = aeron.addExclusivePublication(CHANNEL, TO_PEER_STREAM);
            final Subscription fromPeer = aeron.addSubscription(CHANNEL, FROM_PEER_STREAM);
            peer = PeerProcess.start(peerMode, directory.toString());
            final long deadline = System.nanoTime() + CONNECT_TIMEOUT_NS;
            while (!toPeer.isConnected() || !fromPeer.isConnected())
            {
                if (System.nanoTime() > deadline)
                {
                    throw new IllegalStateException("the Aeron peer did not connect in 30 s");
                }
                Thread.onSpinWait();
            }
            return new AeronLink(directory, driver, aeron, toPeer, fromPeer, peer);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(peer, aeron, driver);
            BenchFiles.delete(directory);
            throw ex;
        }
    }

    /** Offers until the publication takes the message; back pressure is waited out. */
    void offer(final DirectBuffer buffer, final int length)
    {
        long result;
        while ((result = toPeer.offer(buffer, 0, length)) < 0)
        {
            if (Publication.NOT_CONNECTED == result || Publication.CLOSED == result)
            {
                throw new IllegalStateException("the Aeron peer is gone");
            }
            Thread.onSpinWait();
        }
    }

    /** Polls the peer's stream into {@code assembler} until one whole message has been handed to it. */
    void pollOne(final FragmentAssembler assembler, final BooleanSupplier received)
    {
        long spins = 0;
        while (!received.getAsBoolean())
        {
            if (0 == fromPeer.poll(assembler, 1))
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
        CloseHelper.quietCloseAll(toPeer, fromPeer);
        peer.close();
        CloseHelper.quietCloseAll(aeron, driver);
        BenchFiles.delete(directory);
    }

    /**
     * The peer side, in the peer JVM: connects to the driver in {@code directory} and hands every
     * message to the handler {@code handlerFor} makes from the answer publication, until the measuring
     * JVM goes away.
     */
    static void serve(final Path directory, final Function<Publication, FragmentHandler> handlerFor)
    {
        try (Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(directory.toString()));
             Subscription in = aeron.addSubscription(CHANNEL, TO_PEER_STREAM);
             Publication answers = aeron.addExclusivePublication(CHANNEL, FROM_PEER_STREAM))
        {
            while (!answers.isConnected())
            {
                Thread.onSpinWait();
            }
            final FragmentAssembler assembler = new FragmentAssembler(handlerFor.apply(answers));
            BenchPeer.ready();
            long spins = 0;
            while (!in.isClosed())
            {
                if (0 == in.poll(assembler, 64))
                {
                    Thread.onSpinWait();
                    if ((++spins & 0xF_FFFF) == 0 && (BenchPeer.orphaned() || !answers.isConnected()))
                    {
                        return;
                    }
                }
            }
        }
    }

    /** Peer side: offers until the answer is taken. @return false if the measuring side is gone. */
    static boolean answer(final Publication answers, final DirectBuffer buffer, final int offset, final int length)
    {
        long result;
        while ((result = answers.offer(buffer, offset, length)) < 0)
        {
            if (Publication.NOT_CONNECTED == result || Publication.CLOSED == result)
            {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }
}
