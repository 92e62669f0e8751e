package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.pcicomm.ConnectionState;
import org.qnix.pcicomm.PciComm;
import org.qnix.pcicomm.PciConnection;

/**
 * Both ends of a PCIComm connection disconnecting at once (issue 15): each one's DISCONNECT is the
 * other's answer, and both end CLOSED without an error.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PciCommSimultaneousCloseTest extends ViplClusterTest
{
    private static final long WAIT_MS = 60_000;

    @AfterAll
    static void removeCidLocks() throws Exception
    {
        PciCommTransferTest.removeCidLocks();
    }

    /** Three rounds by default, each on the VI table entries and Process Table slots the previous one left. */
    @Test
    void bothEndsDisconnectingAtOnceCloseCleanly() throws Exception
    {
        for (int round = 0; round < Integer.getInteger("pcicomm.rounds", 3); round++)
        {
            try (PciConnection listener = options().listen("1-0", 35);
                PciConnection client = options().localNode("0-0").connect("1-0", 35))
            {
                listener.awaitConnected(WAIT_MS);
                final CompletableFuture<Void> other = CompletableFuture.runAsync(() ->
                {
                    try
                    {
                        listener.disconnect(WAIT_MS);
                    }
                    catch (final InterruptedException ex)
                    {
                        throw new IllegalStateException(ex);
                    }
                });
                client.disconnect(WAIT_MS);
                other.get(WAIT_MS, TimeUnit.MILLISECONDS);
                assertEquals(ConnectionState.CLOSED, client.state());
                assertEquals(ConnectionState.CLOSED, listener.state());
            }
        }
    }

    /**
     * A client disconnecting as soon as {@code connect} returns, before its connection's thread first
     * ran: the thread must still take the DISCONNECT's completion and the listener's answer (it used to
     * see CLOSING, take the connection for never made, and end, leaving the disconnect to time out).
     */
    @Test
    void clientDisconnectingAsSoonAsConnectedClosesCleanly() throws Exception
    {
        for (int round = 0; round < Integer.getInteger("pcicomm.rounds", 3); round++)
        {
            try (PciConnection listener = options().listen("1-0", 36);
                PciConnection client = options().localNode("0-0").connect("1-0", 36))
            {
                client.disconnect(WAIT_MS);
                listener.disconnect(WAIT_MS);
                assertEquals(ConnectionState.CLOSED, client.state());
                assertEquals(ConnectionState.CLOSED, listener.state());
            }
        }
    }

    private static PciComm.Options options()
    {
        return PciComm.options().cluster(dir.name());
    }
}
