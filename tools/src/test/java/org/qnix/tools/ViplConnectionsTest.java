package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplResult;
import org.qnix.vipl.ConnectionRequest;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.RemoteVi;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.ViState;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplAddress;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplNic;

/**
 * The daemon as VIA's connection manager (issue 14, stage 3) on a real cluster: client/server matching
 * by (node, discriminator) across nodes and on one node, Idle -> Connect Pending -> Connected in both
 * NICs' VI tables under one connection id, reject, timeouts on both sides, mismatched attributes,
 * disconnect (the peer goes to Error) and reconnect, and a connected client killed with -9.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplConnectionsTest extends ViplClusterTest
{
    private static final byte[] ECHO = "echo".getBytes(StandardCharsets.US_ASCII);

    @Test
    void aClientAndAServerOnTwoNodesConnectDisconnectAndConnectAgain() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final Vi server = vi(serverNic, Reliability.RELIABLE_RECEPTION, 2048);
            final Vi client = vi(clientNic, Reliability.RELIABLE_RECEPTION, 2048);
            final ViplAddress address = new ViplAddress(new NicCoordinates(1, 0), ECHO);

            // The request comes first and waits, Connect Pending, for the server's ConnectWait.
            final CompletableFuture<RemoteVi> asked =
                CompletableFuture.supplyAsync(() -> clientNic.connectRequest(client, address, 60_000));
            TestClusters.await("the client's VI Connect Pending",
                () -> ViTableEntry.STATE_PENDING == state(0, client.index()));
            final ConnectionRequest request = serverNic.connectWait(ECHO, 60_000);
            assertEquals(new NicCoordinates(0, 0), request.remote().node());
            assertEquals(Reliability.RELIABLE_RECEPTION, request.remote().reliability());
            request.accept(server);
            final RemoteVi remote = asked.get(60, TimeUnit.SECONDS);
            assertEquals(new NicCoordinates(1, 0), remote.node());
            assertEquals(2048, remote.maxTransferSize());
            assertEquals(ViState.CONNECTED, client.query().state());
            assertEquals(ViState.CONNECTED, server.query().state());

            final int id;
            try (Tables zero = new Tables(0); Tables one = new Tables(1))
            {
                final ViTableEntry c = zero.vi(client.index());
                final ViTableEntry s = one.vi(server.index());
                assertEquals(ViTableEntry.STATE_CONNECTED, c.state());
                assertEquals(ViTableEntry.STATE_CONNECTED, s.state());
                id = c.connectionId();
                assertNotEquals(0, id);
                assertEquals(id, s.connectionId());
                assertEquals(new NicCoordinates(1, 0).packed(), c.peerNic());
                assertEquals(server.index(), c.peerVi());
                assertEquals(new NicCoordinates(0, 0).packed(), s.peerNic());
                assertEquals(client.index(), s.peerVi());
                assertEquals(c.owner() + 1, s.peerNicPid());
            }
            assertEquals(ViplResult.INVALID_STATE, assertThrows(ViplException.class, client::close).result());

            // The client leaves: its VI is Idle, the server's sees the connection lost.
            client.disconnect();
            assertEquals(ViTableEntry.STATE_IDLE, state(0, client.index()));
            assertEquals(ViTableEntry.STATE_ERROR, state(1, server.index()));
            assertEquals(ViState.ERROR, server.query().state(), "the server sees the connection lost");
            assertEquals(ViState.IDLE, client.query().state());
            assertEquals(null, client.query().remote());
            assertEquals(ViplResult.INVALID_STATE, assertThrows(ViplException.class, server::close).result());
            server.disconnect();
            assertEquals(ViTableEntry.STATE_IDLE, state(1, server.index()));

            // And again: a new connection id, so the NICs can tell the old connection's packets apart.
            final CompletableFuture<RemoteVi> again =
                CompletableFuture.supplyAsync(() -> clientNic.connectRequest(client, address, 60_000));
            serverNic.connectWait(ECHO, 60_000).accept(server);
            again.get(60, TimeUnit.SECONDS);
            try (Tables zero = new Tables(0))
            {
                assertNotEquals(id, zero.vi(client.index()).connectionId());
            }
            client.disconnect();
            server.disconnect();
            client.close();
            server.close();
        }
    }

    @Test
    void rejectsTimeoutsAndMismatchesEndTheRequestWithVipl10Codes() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("0-0", dir.name()); ViplNic clientNic = Vipl.openNic("0-0", dir.name()))
        {
            final ViplAddress sameNode = new ViplAddress(new NicCoordinates(0, 0), ECHO);
            final Vi client = vi(clientNic, Reliability.UNRELIABLE, 1024);

            CompletableFuture<RemoteVi> asked = request(clientNic, client, sameNode, 60_000);
            serverNic.connectWait(ECHO, 60_000).reject();
            assertEquals(ViplResult.REJECT, failure(asked));
            assertEquals(ViTableEntry.STATE_IDLE, state(0, client.index()), "back to Idle");

            assertEquals(ViplResult.TIMEOUT, assertThrows(ViplException.class,
                () -> clientNic.connectRequest(client, sameNode, 200)).result(), "nobody waits on the discriminator");
            assertEquals(ViTableEntry.STATE_IDLE, state(0, client.index()));
            assertEquals(ViplResult.TIMEOUT,
                assertThrows(ViplException.class, () -> serverNic.connectWait(ECHO, 200)).result(), "nobody asks");

            final Vi reliable = vi(serverNic, Reliability.RELIABLE_DELIVERY, 1024);
            asked = request(clientNic, client, sameNode, 60_000);
            final ConnectionRequest mismatch = serverNic.connectWait(ECHO, 60_000);
            assertEquals(ViplResult.INVALID_RELIABILITY_LEVEL,
                assertThrows(ViplException.class, () -> mismatch.accept(reliable)).result());
            assertEquals(ViplResult.INVALID_RELIABILITY_LEVEL, failure(asked));

            final Vi larger = vi(serverNic, Reliability.UNRELIABLE, 2048);
            asked = request(clientNic, client, sameNode, 60_000);
            final ConnectionRequest mtu = serverNic.connectWait(ECHO, 60_000);
            assertEquals(ViplResult.INVALID_MTU, assertThrows(ViplException.class, () -> mtu.accept(larger)).result());
            assertEquals(ViplResult.INVALID_MTU, failure(asked));

            // Another discriminator, another server: a request is never matched with the wrong one.
            final Vi other = vi(serverNic, Reliability.UNRELIABLE, 1024);
            asked = request(clientNic, client, new ViplAddress(new NicCoordinates(0, 0), new byte[] {1, 2}), 60_000);
            assertEquals(ViplResult.TIMEOUT,
                assertThrows(ViplException.class, () -> serverNic.connectWait(ECHO, 300)).result());
            serverNic.connectWait(new byte[] {1, 2}, 60_000).accept(other);
            assertEquals(new NicCoordinates(0, 0), asked.get(60, TimeUnit.SECONDS).node());
            assertEquals(ViTableEntry.STATE_CONNECTED, state(0, other.index()));

            assertEquals(ViplResult.INVALID_PARAMETER, assertThrows(ViplException.class,
                () -> serverNic.connectWait(new byte[17], 10)).result(), "a discriminator of 17 bytes");
        }
        try (Tables zero = new Tables(0))
        {
            assertEquals(List.of(), zero.usedVis(), "closing both NICs freed every VI");
        }
    }

    @Test
    void peersThatNameEachOtherConnectInEitherOrderAndALoneOneTimesOut() throws Exception
    {
        try (ViplNic left = Vipl.openNic("0-0", dir.name()); ViplNic right = Vipl.openNic("1-0", dir.name()))
        {
            final byte[] l = {'L'};
            final byte[] r = {'R'};
            final ViplAddress atLeft = new ViplAddress(new NicCoordinates(0, 0), l);
            final ViplAddress atRight = new ViplAddress(new NicCoordinates(1, 0), r);
            for (int order = 0; order < 2; order++)
            {
                final Vi a = vi(left, Reliability.RELIABLE_DELIVERY, 1024);
                final Vi b = vi(right, Reliability.RELIABLE_DELIVERY, 1024);
                final ViplNic firstNic = 0 == order ? left : right;
                final Vi first = 0 == order ? a : b;
                final Vi second = 0 == order ? b : a;
                firstNic.connectPeerRequest(first, 0 == order ? l : r, 0 == order ? atRight : atLeft, 60_000);
                assertEquals(ViplResult.NOT_DONE, first.connectPeerDone());
                assertEquals(ViState.CONNECT_PENDING, first.query().state());
                (0 == order ? right : left).connectPeerRequest(second, 0 == order ? r : l, 0 == order ? atLeft : atRight,
                    60_000);
                assertEquals(ViplResult.SUCCESS, first.connectPeerDone());
                final RemoteVi seen = second.connectPeerWait();
                assertEquals(0 == order ? new NicCoordinates(0, 0) : new NicCoordinates(1, 0), seen.node());
                assertEquals(ViState.CONNECTED, a.query().state());
                assertEquals(ViState.CONNECTED, b.query().state());
                try (Tables zero = new Tables(0); Tables one = new Tables(1))
                {
                    assertEquals(zero.vi(a.index()).connectionId(), one.vi(b.index()).connectionId());
                    assertEquals(b.index(), zero.vi(a.index()).peerVi());
                    assertEquals(a.index(), one.vi(b.index()).peerVi());
                }
                assertEquals(ViplResult.INVALID_STATE, first.connectPeerDone(), "the outcome was taken");
                a.disconnect();
                b.disconnect();
                a.close();
                b.close();
            }

            final Vi lone = vi(left, Reliability.UNRELIABLE, 0);
            left.connectPeerRequest(lone, l, atRight, 200);
            assertEquals(ViplResult.TIMEOUT, assertThrows(ViplException.class, lone::connectPeerWait).result());
            assertEquals(ViState.IDLE, lone.query().state());

            final Vi reliable = vi(right, Reliability.RELIABLE_RECEPTION, 0);
            left.connectPeerRequest(lone, l, atRight, 60_000);
            right.connectPeerRequest(reliable, r, atLeft, 60_000);
            assertEquals(ViplResult.INVALID_RELIABILITY_LEVEL, lone.connectPeerDone());
            assertEquals(ViplResult.INVALID_RELIABILITY_LEVEL,
                assertThrows(ViplException.class, reliable::connectPeerWait).result());
            assertEquals(ViState.IDLE, lone.query().state());
            assertEquals(ViState.IDLE, reliable.query().state());
        }
    }

    @Test
    void aConnectedClientKilledWithSigkillLeavesTheServersViInError() throws Exception
    {
        try (ViplNic serverNic = Vipl.openNic("1-0", dir.name()))
        {
            final Vi server = vi(serverNic, Reliability.RELIABLE_DELIVERY, 4096);
            final Process worker = ViplConnectWorker.start(dir, "kill");
            try
            {
                serverNic.connectWait("kill".getBytes(StandardCharsets.US_ASCII), 120_000).accept(server);
                final int clientVi = ViplConnectWorker.connected(worker);
                assertEquals(ViTableEntry.STATE_CONNECTED, state(0, clientVi));

                assertTrue(worker.toHandle().destroyForcibly(), "kill -9");
                TestClusters.await("the server's VI in Error and the client's VI gone", () ->
                    ViTableEntry.STATE_ERROR == state(1, server.index()) && ViTableEntry.STATE_FREE == state(0, clientVi));
                assertEquals(ViState.ERROR, server.query().state());
                server.disconnect();
                server.close();
            }
            finally
            {
                worker.destroyForcibly();
                worker.waitFor();
            }
        }
    }

    private static Vi vi(final ViplNic nic, final Reliability reliability, final int maxTransfer)
    {
        final ProtectionTag ptag = nic.createPtag();
        return nic.createVi(new ViAttributes(reliability, maxTransfer, ptag, false, false), null, null);
    }

    private static CompletableFuture<RemoteVi> request(final ViplNic nic, final Vi vi, final ViplAddress address,
        final long timeoutMs)
    {
        return CompletableFuture.supplyAsync(() -> nic.connectRequest(vi, address, timeoutMs));
    }

    private static ViplResult failure(final CompletableFuture<RemoteVi> asked) throws Exception
    {
        try
        {
            asked.get(60, TimeUnit.SECONDS);
        }
        catch (final java.util.concurrent.ExecutionException ex)
        {
            return ((ViplException)ex.getCause()).result();
        }
        throw new AssertionError("the request succeeded");
    }

    private static int state(final int node, final int vi)
    {
        try (Tables tables = new Tables(node))
        {
            return tables.vi(vi).state();
        }
    }

    /** A NIC's VI table, mapped by the test and read as the NIC reads it. */
    private static final class Tables implements AutoCloseable
    {
        final MappedFile file;
        final NicSdramLayout layout;

        Tables(final int node)
        {
            final ClusterParameters params = ClusterProperties.read(dir.propertiesFile()).orElseThrow().parameters();
            layout = new NicSdramLayout(params);
            file = MappedFile.mapExisting(dir.nicSdram(NicCoordinates.ofIndex(node, params.torusWidth())), 0,
                layout.managedMemoryOffset());
        }

        ViTableEntry vi(final int vi)
        {
            return new ViTableEntry().wrap(file.buffer(), (int)layout.via().viOffset(vi));
        }

        List<Integer> usedVis()
        {
            final java.util.List<Integer> used = new java.util.ArrayList<>();
            for (int i = 0; i < layout.via().viEntries(); i++)
            {
                if (ViTableEntry.STATE_FREE != vi(i).state())
                {
                    used.add(i);
                }
            }
            return used;
        }

        public void close()
        {
            file.close();
        }
    }
}
