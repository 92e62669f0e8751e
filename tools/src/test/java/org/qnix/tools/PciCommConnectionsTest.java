package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.pcicomm.ConnectionState;
import org.qnix.pcicomm.PciBuffer;
import org.qnix.pcicomm.PciComm;
import org.qnix.pcicomm.PciCommException;
import org.qnix.pcicomm.PciCommException.Reason;
import org.qnix.pcicomm.PciConnection;

/**
 * PCIComm's connections (issue 15) on a real cluster: the states LISTENING, CONNECTING, CONNECTED,
 * CLOSING (held while queued data drains) and CLOSED; connecting with no listener; a cid already
 * taken, in this JVM and by another process; a peer that disconnects (its data still received first,
 * then PEER_DISCONNECTED on every call), one that never exports room for a disconnect's queued data
 * (TIMEOUT here, CONNECTION_LOST there); and a peer killed with -9,
 * as listener and as client: CONNECTION_LOST, nothing hangs.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PciCommConnectionsTest extends ViplClusterTest
{
    private static final long WAIT_MS = 60_000;

    @AfterAll
    static void removeCidLocks() throws Exception
    {
        PciCommTransferTest.removeCidLocks();
    }

    @Test
    void statesFromListeningToClosedWithClosingHeldUntilTheQueuedDataDrains() throws Exception
    {
        final PciConnection listener = options().listen("1-0", 31);
        try
        {
            assertEquals(ConnectionState.LISTENING, listener.state());
            assertEquals(Reason.TIMEOUT, assertThrows(PciCommException.class, () -> listener.awaitConnected(100)).reason());
            // A negative timeout would wait for ever: refused, the listener untouched.
            assertThrows(IllegalArgumentException.class, () -> listener.awaitConnected(-1));
            assertThrows(IllegalArgumentException.class, () -> listener.recv(Long.MIN_VALUE));
            assertThrows(IllegalArgumentException.class, () -> listener.disconnect(-1));
            assertEquals(ConnectionState.LISTENING, listener.state());
            try (PciConnection client = options().localNode("0-0").connect("1-0", 31))
            {
                assertEquals(ConnectionState.CONNECTED, client.state());
                listener.awaitConnected(WAIT_MS);
                assertEquals(ConnectionState.CONNECTED, listener.state());
                assertEquals("0-0", listener.peer().toString());
                assertEquals("1-0", client.peer().toString());

                // Queued sends with nothing exported: the client's disconnect stays CLOSING.
                final PciBuffer a = client.allocate(3000);
                final PciBuffer b = client.allocate(3000);
                PciCommTransferTest.fill(a, 3000, 7);
                PciCommTransferTest.fill(b, 3000, 8);
                client.send(a, 3000);
                client.send(b, 1000);
                final CompletableFuture<Void> closing = CompletableFuture.runAsync(() ->
                {
                    try
                    {
                        client.disconnect(WAIT_MS);
                    }
                    catch (final InterruptedException ex)
                    {
                        throw new IllegalStateException(ex);
                    }
                });
                TestClusters.await("the client CLOSING", () -> ConnectionState.CLOSING == client.state());
                Thread.sleep(300);
                assertEquals(ConnectionState.CLOSING, client.state(), "held while its sends wait for room");
                assertEquals(ConnectionState.CONNECTED, listener.state());
                final PciBuffer c = client.allocate(10);
                assertEquals(Reason.CLOSED, assertThrows(PciCommException.class, () -> client.send(c, 1)).reason());

                final PciBuffer r1 = listener.allocate(4096);
                final PciBuffer r2 = listener.allocate(4096);
                listener.prepostRecv(r1, 4096);
                listener.prepostRecv(r2, 4096);
                closing.get(WAIT_MS, TimeUnit.MILLISECONDS);
                assertEquals(ConnectionState.CLOSED, client.state());
                TestClusters.await("the listener CLOSED", () -> ConnectionState.CLOSED == listener.state());
                // What was sent before the disconnect is received, then the peer's disconnect is reported.
                assertSame(r1, listener.recv(WAIT_MS));
                assertEquals(3000, r1.length());
                assertSame(r2, listener.recv(WAIT_MS));
                assertEquals(1000, r2.length());
                // A receive loop preposts each buffer again: after the peer's disconnect that is no error
                // (PciCommCat's receiver did so), and recv then reports the disconnect.
                listener.prepostRecv(r2, 4096);
                assertEquals(Reason.PEER_DISCONNECTED, assertThrows(PciCommException.class, () -> listener.recv(10)).reason());
                assertEquals(Reason.PEER_DISCONNECTED,
                    assertThrows(PciCommException.class, () -> listener.send(r1, 10)).reason());
                assertSame(a, client.sendRecycle(10));
                assertSame(b, client.sendRecycle(10));
                assertEquals(Reason.CLOSED, assertThrows(PciCommException.class, () -> client.sendRecycle(10)).reason());
                listener.disconnect();      // nothing to do: CLOSED already
            }
        }
        finally
        {
            listener.close();
        }
    }

    @Test
    void connectingWithNoListenerAndListeningOnATakenCidFail() throws Exception
    {
        final PciCommException none = assertThrows(PciCommException.class,
            () -> options().localNode("0-0").connectTimeoutMs(300).connect("1-0", 32));
        assertEquals(Reason.NO_LISTENER, none.reason());
        assertTrue(none.getMessage().contains("cid 32"), none.getMessage());

        try (PciConnection first = options().listen("1-0", 32))
        {
            assertEquals(Reason.CID_TAKEN,
                assertThrows(PciCommException.class, () -> options().listen("1-0", 32)).reason());
            // Another node's cid 32 is another cid.
            options().listen("0-0", 32).close();
            try (PciConnection client = options().localNode("1-0").connect("1-0", 32))
            {
                first.awaitConnected(WAIT_MS);
                assertEquals(Reason.CID_TAKEN, assertThrows(PciCommException.class,
                    () -> options().listen("1-0", 32)).reason(), "taken while connected too");
            }
            TestClusters.await("the listener CLOSED", () -> ConnectionState.CLOSED == first.state());
        }
        // Free again once closed.
        options().listen("1-0", 32).close();
    }

    @Test
    void aCidTakenByAnotherProcessIsFreedWhenItIsKilled() throws Exception
    {
        final Process worker = start("listen", "0-0", "0-0", 33);
        try
        {
            final BufferedReader out = ChildCommand.output(worker);
            assertEquals("listening", out.readLine());
            assertEquals(Reason.CID_TAKEN, assertThrows(PciCommException.class, () -> options().listen("0-0", 33)).reason());
            worker.destroyForcibly();
            worker.waitFor();
            options().listen("0-0", 33).close();
        }
        finally
        {
            worker.destroyForcibly();
            worker.waitFor();
        }
    }

    @Test
    void aDisconnectWhoseDataFindsNoRoomTimesOutAndThePeerSeesTheConnectionLost() throws Exception
    {
        try (PciConnection listener = options().listen("1-0", 34);
            PciConnection client = options().localNode("0-0").connect("1-0", 34))
        {
            listener.awaitConnected(WAIT_MS);
            client.send(client.allocate(100), 100);
            assertEquals(Reason.TIMEOUT, assertThrows(PciCommException.class, () -> client.disconnect(300)).reason());
            assertEquals(ConnectionState.CLOSED, client.state());
            assertEquals(Reason.CONNECTION_LOST,
                assertThrows(PciCommException.class, () -> listener.recv(WAIT_MS)).reason());
            assertEquals(ConnectionState.CLOSED, listener.state());
        }
    }

    /**
     * The NIC of one end stops (its firmware JVM killed with -9, on a cluster of its own): a loop of that
     * end's tryRecv ends with CONNECTION_LOST naming the stopped NIC, and its connection is CLOSED;
     * nothing waits out its timeout, and no VIPL exception leaks out of PCIComm.
     */
    @Test
    void aStoppedNicEndsItsConnectionsCallsWithConnectionLost() throws Exception
    {
        final ClusterDirectory own = TestClusters.up(TestClusters.uniqueName("pd"), 2, 1, "processes");
        try
        {
            try (PciConnection listener = PciComm.options().cluster(own.name()).listen("1-0", 38);
                PciConnection client = PciComm.options().cluster(own.name()).localNode("0-0").connectTimeoutMs(WAIT_MS)
                    .connect("1-0", 38))
            {
                listener.awaitConnected(WAIT_MS);
                client.prepostRecv(client.allocate(4096), 4096);
                TestClusters.killFirmware(own, "0-0");

                // A loop of tryRecv polls the NIC's completions in this thread, far more often than the
                // connection's own thread does: the stop is seen by a Done poll here.
                final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
                final PciCommException lost = assertThrows(PciCommException.class, () ->
                {
                    while (System.nanoTime() < deadline)
                    {
                        assertNull(client.tryRecv(), "nothing arrives from a stopped NIC");
                    }
                });
                assertEquals(Reason.CONNECTION_LOST, lost.reason(), lost.getMessage());
                assertTrue(lost.getMessage().contains("node 0-0"), lost.getMessage());
                assertEquals(ConnectionState.CLOSED, client.state());
            }
        }
        finally
        {
            TestClusters.down(own);
        }
    }

    @Test
    void aClientKilledWithSigkillEndsTheListenersCallsWithConnectionLost() throws Exception
    {
        try (PciConnection listener = options().listen("1-0", 36))
        {
            final Process worker = start("connect", "0-0", "1-0", 36);
            try
            {
                final BufferedReader out = ChildCommand.output(worker);
                assertEquals("connected", out.readLine());
                listener.awaitConnected(WAIT_MS);
                final PciBuffer slot = listener.allocate(4096);
                for (int i = 0; i < 5; i++)
                {
                    listener.prepostRecv(slot, 4096);
                    assertNotNull(listener.recv(WAIT_MS));
                }
                listener.prepostRecv(slot, 4096);
                worker.destroyForcibly();
                final PciCommException lost = assertThrows(PciCommException.class, () ->
                {
                    while (true)
                    {
                        final PciBuffer got = listener.recv(WAIT_MS);
                        assertNotNull(got, "an end within the wait");
                        listener.prepostRecv(got, 4096);
                    }
                });
                assertEquals(Reason.CONNECTION_LOST, lost.reason());
                assertEquals(ConnectionState.CLOSED, listener.state());
            }
            finally
            {
                worker.destroyForcibly();
                worker.waitFor();
            }
        }
    }

    @Test
    void aListenerKilledWithSigkillEndsTheClientsCallsWithConnectionLost() throws Exception
    {
        final Process worker = start("listen", "1-0", "1-0", 37);
        try
        {
            final BufferedReader out = ChildCommand.output(worker);
            assertEquals("listening", out.readLine());
            try (PciConnection client = options().localNode("0-0").connectTimeoutMs(WAIT_MS).connect("1-0", 37))
            {
                assertEquals("connected", out.readLine());
                final PciBuffer b = client.allocate(4096);
                for (int i = 0; i < 5; i++)
                {
                    client.send(b, 4096);
                    assertSame(b, client.sendRecycle(WAIT_MS));
                }
                worker.destroyForcibly();
                final PciCommException lost = assertThrows(PciCommException.class, () ->
                {
                    while (true)
                    {
                        client.send(b, 4096);
                        assertNotNull(client.sendRecycle(WAIT_MS), "an end within the wait");
                    }
                });
                assertEquals(Reason.CONNECTION_LOST, lost.reason());
            }
        }
        finally
        {
            worker.destroyForcibly();
            worker.waitFor();
        }
    }

    private static PciComm.Options options()
    {
        return PciComm.options().cluster(dir.name());
    }

    private static Process start(final String mode, final String node, final String listenerNode, final int cid)
        throws Exception
    {
        return ChildCommand.start(PciCommWorker.class, dir.name(), mode, node, listenerNode, Integer.toString(cid));
    }
}
