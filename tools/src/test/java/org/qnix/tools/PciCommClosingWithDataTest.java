package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.pcicomm.ConnectionState;
import org.qnix.pcicomm.PciBuffer;
import org.qnix.pcicomm.PciCommException;
import org.qnix.pcicomm.PciCommException.Reason;
import org.qnix.pcicomm.PciConnection;

/**
 * A PCIComm disconnect terminates the connection (seed 000, 5.1.2): what the other end still had
 * queued is not written. Nothing of it is lost silently: the end that kept data says how many sends
 * did not reach the peer (PEER_DISCONNECTED) and gets their buffers back, and an end whose disconnect
 * waits for room can still be given room by a receive loop on another thread.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PciCommClosingWithDataTest extends ViplClusterTest
{
    private static final long WAIT_MS = 60_000;
    private static final int BYTES = 4096;
    private static final Pattern UNSENT = Pattern.compile("(\\d+) sends? queued here");

    @AfterAll
    static void removeCidLocks() throws Exception
    {
        PciCommTransferTest.removeCidLocks();
    }

    @Test
    void sendsThePeerNoLongerTakesAreCountedAndHandedBack() throws Exception
    {
        try (PciCommTransferTest.Pair pair = PciCommTransferTest.Pair.of("1-0", "0-0", 51))
        {
            final PciConnection listener = pair.listener;
            final PciConnection client = pair.client;
            client.prepostRecv(client.allocate(BYTES), BYTES);
            final List<PciBuffer> sent = new ArrayList<>();
            for (int i = 0; i < 3; i++)
            {
                final PciBuffer b = listener.allocate(BYTES);
                PciCommTransferTest.fill(b, BYTES, i);
                listener.send(b, BYTES);
                sent.add(b);
            }
            assertSame(sent.get(0), listener.sendRecycle(WAIT_MS), "the one send the client had room for");

            client.disconnect(WAIT_MS);
            assertEquals(ConnectionState.CLOSED, client.state());
            final PciBuffer got = client.recv(WAIT_MS);
            assertNotNull(got, "the client still takes what was written before its disconnect");
            for (int j = 0; j < BYTES; j++)
            {
                assertEquals(PciCommTransferTest.pattern(0, j), got.buffer().getByte(j), "byte " + j);
            }

            TestClusters.await("the listener closed", () -> ConnectionState.CLOSED == listener.state());
            final PciCommException recycle = assertThrows(PciCommException.class, () -> listener.sendRecycle(WAIT_MS));
            assertEquals(Reason.PEER_DISCONNECTED, recycle.reason(), recycle.getMessage());
            assertTrue(recycle.getMessage().contains("2 sends queued here (up to 8192 bytes) did not reach"),
                recycle.getMessage());
            final PciCommException close = assertThrows(PciCommException.class, () -> listener.disconnect(WAIT_MS));
            assertEquals(Reason.PEER_DISCONNECTED, close.reason(), close.getMessage());
            assertTrue(close.getMessage().contains("back with the application"), close.getMessage());
            // Back with the application: freed without "with the connection already".
            sent.get(1).free();
            sent.get(2).free();
        }
    }

    /**
     * Both ends disconnect at once with more queued than the other has preposted; a receive loop on a
     * thread of each takes what arrives and preposts again. Whichever end drains first ends the
     * connection; every send either reached the other end, checked byte by byte, or is counted by its
     * own end's PEER_DISCONNECTED. Neither disconnect times out.
     */
    @Test
    void bothEndsClosingWithDataQueuedLoseNothingUncounted() throws Exception
    {
        final int sends = 3;
        // Not closed as a Pair, whose close expects a clean disconnect.
        final PciCommTransferTest.Pair pair = PciCommTransferTest.Pair.of("1-0", "0-0", 52);
        try
        {
            final PciConnection[] ends = {pair.listener, pair.client};
            final AtomicInteger[] received = {new AtomicInteger(), new AtomicInteger()};
            final List<CompletableFuture<Void>> loops = new ArrayList<>();
            for (int e = 0; e < 2; e++)
            {
                ends[e].prepostRecv(ends[e].allocate(BYTES), BYTES);
                for (int i = 0; i < sends; i++)
                {
                    final PciBuffer b = ends[e].allocate(BYTES);
                    PciCommTransferTest.fill(b, BYTES, 10 * e + i);
                    ends[e].send(b, BYTES);
                }
            }
            for (int e = 0; e < 2; e++)
            {
                final PciConnection end = ends[e];
                final AtomicInteger count = received[e];
                final int peerSeed = 10 * (1 - e);
                loops.add(CompletableFuture.runAsync(() -> receiveLoop(end, count, peerSeed)));
            }
            final List<CompletableFuture<Integer>> closes = new ArrayList<>();
            for (final PciConnection end : ends)
            {
                closes.add(CompletableFuture.supplyAsync(() -> unsentAfterDisconnect(end)));
            }
            for (int e = 0; e < 2; e++)
            {
                final int unsent = closes.get(e).get(2 * WAIT_MS, TimeUnit.MILLISECONDS);
                loops.get(1 - e).get(2 * WAIT_MS, TimeUnit.MILLISECONDS);
                assertEquals(sends, received[1 - e].get() + unsent, "end " + e + "'s sends: received by the other " +
                    received[1 - e].get() + ", counted unsent " + unsent);
            }
        }
        finally
        {
            pair.client.close();
            pair.listener.close();
        }
    }

    /** Takes buffers in order, checks them, preposts each again, until the connection ends. */
    private static void receiveLoop(final PciConnection end, final AtomicInteger count, final int peerSeed)
    {
        try
        {
            while (true)
            {
                final PciBuffer got = end.recv(WAIT_MS);
                assertNotNull(got, "nothing in " + WAIT_MS + " ms and the connection still open");
                final int seed = peerSeed + count.getAndIncrement();
                assertEquals(BYTES, got.length());
                for (int j = 0; j < BYTES; j++)
                {
                    assertEquals(PciCommTransferTest.pattern(seed, j), got.buffer().getByte(j), "byte " + j);
                }
                try
                {
                    end.prepostRecv(got, BYTES);
                }
                catch (final PciCommException ex)
                {
                    // This end's DISCONNECT went: nothing more will be written, what was is still taken.
                }
            }
        }
        catch (final PciCommException ex)
        {
            assertTrue(Reason.PEER_DISCONNECTED == ex.reason() || Reason.CLOSED == ex.reason(), ex.getMessage());
        }
        catch (final InterruptedException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /** @return how many sends this end's disconnect says did not reach the peer. */
    private static int unsentAfterDisconnect(final PciConnection end)
    {
        try
        {
            end.disconnect(WAIT_MS);
            return 0;
        }
        catch (final PciCommException ex)
        {
            assertEquals(Reason.PEER_DISCONNECTED, ex.reason(), ex.getMessage());
            final Matcher m = UNSENT.matcher(ex.getMessage());
            assertTrue(m.find(), ex.getMessage());
            return Integer.parseInt(m.group(1));
        }
        catch (final InterruptedException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
