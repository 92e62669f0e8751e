package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.pcicomm.PciBuffer;
import org.qnix.pcicomm.PciConnection;

/**
 * PCIComm's blocking calls stay hot (issue 13): {@code recv} and {@code sendRecycle} poll the
 * connection themselves for the cluster's hot window before they sleep on its monitor, and the
 * connection's thread keeps off the CQ meanwhile. On a cluster with a hot window of a second, so that
 * no answer in these tests outlasts it: a ping-pong never sleeps; a send queued while its caller polled
 * is written by the connection's thread once the caller has left; a recv that outlasts the window
 * sleeps and still gets its message. Both ends in this JVM, the firmware in the daemon.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PciCommHotPollTest extends ViplClusterTest
{
    private static final long WAIT_MS = 60_000;
    private static final int HOT_US = 1_000_000;

    /** Hides {@link ViplClusterTest#up()}: the same cluster with the longest hot window. */
    @BeforeAll
    static void up() throws Exception
    {
        dir = TestClusters.up(new ClusterControl.Settings(TestClusters.uniqueName("hp"),
            TestClusters.small(2, 1).hotUs(HOT_US).build()).firmware("threads"));
    }

    @AfterAll
    static void removeCidLocks() throws Exception
    {
        PciCommTransferTest.removeCidLocks();
    }

    @Test
    void aPingPongWithinTheHotWindowNeverSleeps() throws Exception
    {
        final int roundTrips = 200;
        try (PciCommTransferTest.Pair pair = PciCommTransferTest.Pair.of("1-0", "0-0", 41))
        {
            final PciConnection ping = pair.client;
            final PciConnection pong = pair.listener;
            ping.prepostRecv(ping.allocate(64), 64);
            pong.prepostRecv(pong.allocate(64), 64);
            final PciBuffer out = ping.allocate(64);
            final CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> echo(pong, roundTrips));
            for (int i = 0; i < roundTrips; i++)
            {
                PciCommTransferTest.fill(out, 64, i);
                ping.send(out, 64);
                final PciBuffer back = ping.recv(WAIT_MS);
                assertNotNull(back, "round trip " + i);
                assertEquals(PciCommTransferTest.pattern(i, 63), back.buffer().getByte(63), "round trip " + i);
                ping.prepostRecv(back, 64);
                assertSame(out, ping.sendRecycle(WAIT_MS));
            }
            echo.get(WAIT_MS, TimeUnit.MILLISECONDS);
            // Without the hot poll they slept on the monitor 1,185 times (a sleep ends at each step that moved something).
            final long sleeps = ping.statistics().callerSleeps() + pong.statistics().callerSleeps();
            assertTrue(sleeps <= roundTrips / 20, sleeps + " sleeps on the monitor in " + roundTrips +
                " round trips, each answered within a hot window of a second");
        }
    }

    /**
     * The client's send is queued (nothing exported), then its recv polls and returns; the listener
     * exports only afterwards, while the client's application calls nothing: its connection's thread,
     * back on the CQ once the poll ended, must write the send.
     */
    @Test
    void aSendQueuedBeforeAPollIsWrittenByTheConnectionsThreadAfterIt() throws Exception
    {
        try (PciCommTransferTest.Pair pair = PciCommTransferTest.Pair.of("1-0", "0-0", 42))
        {
            final PciConnection client = pair.client;
            final PciConnection listener = pair.listener;
            client.prepostRecv(client.allocate(256), 256);
            final PciBuffer queued = client.allocate(2048);
            PciCommTransferTest.fill(queued, 2048, 7);
            client.send(queued, 2048);
            final PciBuffer hello = listener.allocate(256);
            PciCommTransferTest.fill(hello, 256, 8);
            listener.send(hello, 256);
            assertNotNull(client.recv(WAIT_MS), "the listener's message");
            final PciBuffer slot = listener.allocate(2048);
            listener.prepostRecv(slot, 2048);
            final PciBuffer got = listener.recv(WAIT_MS);
            assertSame(slot, got, "the queued send, written by the client's connection thread");
            assertEquals(2048, got.length());
            for (int j = 0; j < 2048; j += 37)
            {
                assertEquals(PciCommTransferTest.pattern(7, j), got.buffer().getByte(j), "byte " + j);
            }
            assertSame(queued, client.sendRecycle(WAIT_MS));
            assertSame(hello, listener.sendRecycle(WAIT_MS));
        }
    }

    /**
     * A recv that outlasts the hot window sleeps on the monitor (a poll that never ended would leave the
     * sender waiting for the sleep), and still gets the message sent while it slept.
     */
    @Test
    void aRecvPastTheHotWindowSleepsAndStillGetsTheMessage() throws Exception
    {
        try (PciCommTransferTest.Pair pair = PciCommTransferTest.Pair.of("1-0", "0-0", 43))
        {
            final PciConnection client = pair.client;
            final PciConnection listener = pair.listener;
            final PciBuffer slot = listener.allocate(512);
            listener.prepostRecv(slot, 512);
            final PciBuffer out = client.allocate(512);
            PciCommTransferTest.fill(out, 512, 9);
            final CompletableFuture<Void> late = CompletableFuture.runAsync(() ->
            {
                try
                {
                    TestClusters.await("the listener's recv asleep", () -> listener.statistics().callerSleeps() >= 1);
                }
                catch (final InterruptedException ex)
                {
                    throw new IllegalStateException(ex);
                }
                client.send(out, 512);
            });
            final PciBuffer got = listener.recv(WAIT_MS);
            late.get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertSame(slot, got);
            assertEquals(PciCommTransferTest.pattern(9, 511), got.buffer().getByte(511));
            assertTrue(listener.statistics().callerSleeps() >= 1);
            assertSame(out, client.sendRecycle(WAIT_MS));
        }
    }

    private static void echo(final PciConnection pong, final int roundTrips)
    {
        try
        {
            for (int i = 0; i < roundTrips; i++)
            {
                final PciBuffer message = pong.recv(WAIT_MS);
                if (null == message)
                {
                    throw new IllegalStateException("no message " + i + " in " + WAIT_MS + " ms");
                }
                pong.send(message, message.length());
                final PciBuffer sent = pong.sendRecycle(WAIT_MS);
                if (sent != message)
                {
                    throw new IllegalStateException("echo " + i + " did not come back from sendRecycle");
                }
                pong.prepostRecv(sent, 64);
            }
        }
        catch (final InterruptedException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
