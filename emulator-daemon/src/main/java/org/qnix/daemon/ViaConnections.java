package org.qnix.daemon;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

import org.qnix.abi.HostClock;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplResult;

/**
 * VIA's connection manager (issue 14): the daemon, driver of every node, matches client/server
 * connection requests by the server's (node, discriminator), across nodes, as VIA's kernel agent does,
 * and tells the NICs through driver commands ({@link ViaTables#connect}, Via_Connect), which write
 * both VI table entries: connection id, peer NIC, peer VI and peer NIC PID, then the State Connected. A client's VI is Connect Pending while it
 * waits. Connection ids are unique in the daemon and never 0, so a NIC can drop the packets of a
 * reused VI's previous connection.
 *
 * <p>The waits (ConnectWait, ConnectRequest, ConnectPeerWait) block their connection's thread and look
 * every {@link #POLL_MS} ms whether their process is still alive, so a process that dies while waiting
 * is cleaned up at once, and whether their own NIC still runs its loop ({@link ViaTables#deadNic}): a
 * dead NIC ends them with {@code ERROR_RESOURCE}, the request withdrawn and its VI Idle again, which the
 * library reports as NIC-dead (issue 14: "A stopped NIC ends waits with a NIC-dead exception"). A
 * request waits for a server that has not called {@code ConnectWait} yet, until its timeout.
 *
 * <p>The manager's state is guarded by this object's monitor, but the driver commands that tell the NICs
 * of a connection or its end are posted, and their Driver Doorbells waited for, outside it: a NIC that
 * takes its time (a breakpoint in its control program, up to the heartbeat timeout; a full queue, up to
 * the command timeout) then delays only the connection being made or ended on it, not every connection
 * call of the cluster. While its NICs are told, a match's two VIs are <em>joining</em>: no other accept
 * takes them, their requests neither time out nor are withdrawn (the join ends within the command
 * timeouts), and a disconnect of either waits for the join to end.
 *
 * <pre>{@code
 * Request asked = connections.connectWait(new Key(node, discriminator), 10_000, alive);   // server
 * ViplResult result = connections.accept(asked.handle(), serverEndpoint);
 * Outcome outcome = connections.connectRequest(clientEndpoint, key, 10_000, alive);         // client
 * }</pre>
 */
final class ViaConnections
{
    static final long POLL_MS = 50;
    /**
     * The addresses one VIA process may use as its own ({@link #claim}): each is kept, in the daemon's
     * memory, until the process ends, so a process may not make the daemon keep an unbounded number.
     * A server of one program rarely needs more than a few (one per peer for MPI over VIA, up to P - 1).
     */
    static final int MAX_ADDRESSES_PER_PROCESS = 256;

    /** Concurrent: {@link #join} and {@link #disconnect} read it outside the monitor. */
    private final Map<Integer, ViaTables> tablesByNode = new ConcurrentHashMap<>();
    private final Map<Key, ArrayDeque<Request>> waiting = new HashMap<>();
    private final Map<Integer, Request> asked = new HashMap<>();
    /** Peer-to-peer requests not matched yet, by (local address, remote address). */
    private final Map<PeerKey, PeerRequest> peerWaiting = new HashMap<>();
    /** Peer-to-peer requests by (node, VI), until their owner takes the outcome. */
    private final Map<Long, PeerRequest> peerByVi = new HashMap<>();
    /** Connected endpoints by (node, VI): their peers. */
    private final Map<Long, Endpoint> peers = new HashMap<>();
    /** (node, VI) keys of the VIs whose NICs are being told of a match, outside the monitor. */
    private final Set<Long> joining = new HashSet<>();
    /** Addresses in use as a server's or a peer's own, by the uid using them: see {@link #claim}. */
    private final Map<Key, Claim> claims = new HashMap<>();
    /** The addresses each VIA process claimed, so that its end frees them without a walk over every claim. */
    private final Map<Object, Set<Key>> claimedBy = new HashMap<>();
    private int nextId = 1;

    /** A server's address: its node and discriminator. */
    record Key(int node, String discriminator)
    {
        static Key of(final int node, final byte[] discriminator)
        {
            final StringBuilder hex = new StringBuilder();
            for (final byte b : discriminator)
            {
                hex.append(String.format("%02x", b & 0xFF));
            }
            return new Key(node, hex.toString());
        }

        /** @return the address as a message names it. */
        @Override
        public String toString()
        {
            return (discriminator.isEmpty() ? "the empty discriminator" : "discriminator 0x" + discriminator) +
                " of node " + NicCoordinates.unpack(node);
        }
    }

    /** Who uses an address as its own: a uid, and the VIA processes of that uid that did ({@link #claim}). */
    private record Claim(int uid, Set<Object> holders)
    {
    }

    /** One end of a connection: a VI and what the other end is told of it. */
    record Endpoint(int node, int vi, int nicPid, int reliability, int maxTransfer, int attributes)
    {
        long key()
        {
            return key(node, vi);
        }

        /** @return the key of VI {@code vi} of node {@code node}, as {@link #key()} gives it. */
        static long key(final int node, final int vi)
        {
            return (long)node << 32 | (vi & 0xFFFF_FFFFL);
        }
    }

    /** A client's request: waiting, asked of a server (its handle), then answered. */
    static final class Request
    {
        final Endpoint client;
        final Key key;
        int handle;
        /** Its NICs are being told of its match: it waits for that, whatever its timeout. */
        boolean joining;
        ViplResult result;
        Endpoint server;

        Request(final Endpoint client, final Key key)
        {
            this.client = client;
            this.key = key;
        }

        int handle()
        {
            return handle;
        }

        Endpoint client()
        {
            return client;
        }
    }

    /** A peer-to-peer request's two addresses: it matches the request whose addresses are the same, swapped. */
    record PeerKey(Key local, Key remote)
    {
    }

    /** A peer-to-peer request ({@code VipConnectPeerRequest}): its VI's end, its deadline, then its outcome. */
    static final class PeerRequest
    {
        final Endpoint self;
        final PeerKey key;
        final long deadline;
        /** Its NICs are being told of its match: it waits for that, whatever its deadline. */
        boolean joining;
        ViplResult result;
        Endpoint peer;

        PeerRequest(final Endpoint self, final PeerKey key, final long deadline)
        {
            this.self = self;
            this.key = key;
            this.deadline = deadline;
        }
    }

    /** How a request ended: SUCCESS with the server's end, or REJECT, TIMEOUT, or an attribute mismatch. */
    record Outcome(ViplResult result, Endpoint server)
    {
    }

    /**
     * A VIA process of {@code uid} ({@code holder}) uses {@code address} as its own: it waits on it as a
     * server ({@code VipConnectWait}) or names it as its local address in a peer request. An address
     * belongs to the uid that first did so, until the last of that uid's processes that did ends
     * ({@link #release}); processes of another uid are refused it meanwhile. VIA gives discriminators no
     * owner; here the users of a cluster shared with a group ({@code --shared-with-group}) could
     * otherwise wait on another user's address (a PCIComm cid's, say) and be given the connections, and
     * so the data, meant for that user's server. Processes of one uid may share an address, as VIA lets
     * several servers wait on one (PCIComm's {@code CidLock} orders its own).
     *
     * <p>First come, as a TCP port: an address no process uses yet goes to whichever uid uses it first.
     *
     * @throws ViaRefusal {@code INVALID_PARAMETER} if a process of another uid uses the address;
     *                    {@code ERROR_RESOURCE} if {@code holder} uses {@link #MAX_ADDRESSES_PER_PROCESS}
     *                    others already.
     */
    synchronized void claim(final Key address, final int uid, final Object holder) throws ViaRefusal
    {
        final Claim claim = claims.get(address);
        if (null != claim && claim.uid() != uid)
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, address + " is in use by a process of uid " +
                claim.uid() + " (this one's is " + uid + "): an address is its first user's uid's until that " +
                "uid's last process using it ends");
        }
        final Set<Key> own = claimedBy.computeIfAbsent(holder, h -> new HashSet<>());
        if (own.contains(address))
        {
            return;
        }
        if (own.size() >= MAX_ADDRESSES_PER_PROCESS)
        {
            throw new ViaRefusal(ViplResult.ERROR_RESOURCE, "cannot use " + address + ": this process uses " +
                MAX_ADDRESSES_PER_PROCESS + " connection addresses already, each held until it closes its NIC");
        }
        own.add(address);
        claims.computeIfAbsent(address, k -> new Claim(uid, new HashSet<>())).holders().add(holder);
    }

    /** The VIA process {@code holder} ended: the addresses only it of its uid used are free again. */
    synchronized void release(final Object holder)
    {
        final Set<Key> own = claimedBy.remove(holder);
        if (null == own)
        {
            return;
        }
        for (final Key address : own)
        {
            final Claim claim = claims.get(address);
            if (null != claim && claim.holders().remove(holder) && claim.holders().isEmpty())
            {
                claims.remove(address);
            }
        }
    }

    /** Each node's driver hands its VIA tables over when it starts. */
    synchronized void attach(final int node, final ViaTables tables)
    {
        tablesByNode.put(node, tables);
    }

    /**
     * {@code VipConnectRequest}: the client's Idle VI goes Connect Pending until a server on the key
     * accepts or rejects, or the timeout passes (back to Idle).
     */
    Outcome connectRequest(final Endpoint client, final Key key, final long timeoutMs, final BooleanSupplier alive)
        throws InterruptedException
    {
        final Request request = new Request(client, key);
        synchronized (this)
        {
            if (!tablesByNode.containsKey(key.node()))
            {
                return new Outcome(ViplResult.INVALID_PARAMETER, null);
            }
            if (!tables(client.node()).pending(client.vi()))
            {
                return new Outcome(ViplResult.INVALID_STATE, null);
            }
            waiting.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(request);
            notifyAll();
            final long deadline = HostClock.millis() + timeoutMs;
            while (null == request.result)
            {
                if (request.joining)
                {
                    // Accepted: its NICs are being told, which ends within the command timeouts.
                    wait(POLL_MS);
                    continue;
                }
                final long left = deadline - HostClock.millis();
                if (left <= 0 || !alive.getAsBoolean())
                {
                    withdraw(request);
                    request.result = ViplResult.TIMEOUT;
                    break;
                }
                if (null != tables(client.node()).deadNic())
                {
                    // Its NIC completes nothing any more: the request ends now, not at its timeout.
                    withdraw(request);
                    request.result = ViplResult.ERROR_RESOURCE;
                    break;
                }
                wait(Math.min(left, POLL_MS));
            }
            if (ViplResult.SUCCESS != request.result)
            {
                tables(client.node()).unpending(client.vi());
            }
            return new Outcome(request.result, request.server);
        }
    }

    /**
     * {@code VipConnectWait}: the oldest request for the key, or the first to arrive within the timeout.
     *
     * @return the request, now asked of this server under {@link Request#handle()}, or null on timeout or
     * once the server's NIC is dead ({@link ViaTables#deadNic} tells which).
     */
    synchronized Request connectWait(final Key key, final long timeoutMs, final BooleanSupplier alive)
        throws InterruptedException
    {
        final long deadline = HostClock.millis() + timeoutMs;
        while (true)
        {
            if (null != tables(key.node()).deadNic() || !alive.getAsBoolean())
            {
                // A server on a dead NIC, gone or closing takes no request: they stay queued for a live one.
                return null;
            }
            final ArrayDeque<Request> queue = waiting.get(key);
            final Request request = null == queue ? null : queue.pollFirst();
            if (null != request)
            {
                if (queue.isEmpty())
                {
                    waiting.remove(key);
                }
                request.handle = nextId();
                asked.put(request.handle, request);
                return request;
            }
            final long left = deadline - HostClock.millis();
            if (left <= 0)
            {
                return null;
            }
            wait(Math.min(left, POLL_MS));
        }
    }

    /**
     * {@code VipConnectAccept}: the server's Idle VI and the client's Pending one become Connected to each
     * other under a new connection id. Mismatched reliability levels or transfer sizes are refused to both
     * sides (VIA 1.0: INVALID_RELIABILITY_LEVEL, INVALID_MTU). A server VI that is not Idle is refused
     * INVALID_STATE and the request stays asked ({@link #isAsked}).
     */
    ViplResult accept(final int handle, final Endpoint server) throws InterruptedException
    {
        final Request request;
        final int id;
        synchronized (this)
        {
            request = asked.get(handle);
            if (null == request || request.key.node() != server.node())
            {
                return ViplResult.INVALID_PARAMETER;
            }
            if (joining.contains(server.key()) ||
                ViTableEntry.STATE_IDLE != tables(server.node()).viState(server.vi()))
            {
                return ViplResult.INVALID_STATE;
            }
            asked.remove(handle);
            final ViplResult mismatch = mismatch(request.client, server);
            if (null != mismatch)
            {
                request.result = mismatch;
                notifyAll();
                return mismatch;
            }
            request.joining = true;
            id = beginJoin(server, request.client);
        }
        ViplResult joined = ViplResult.REJECT;
        try
        {
            // The client's NIC is told last, so that it cannot send before the server's NIC knows the connection.
            joined = join(id, server, request.client);
        }
        finally
        {
            synchronized (this)
            {
                endJoin(server, request.client, joined);
                request.joining = false;
                request.server = ViplResult.SUCCESS == joined ? server : null;
                request.result = ViplResult.SUCCESS == joined ? ViplResult.SUCCESS : ViplResult.REJECT;
                notifyAll();
            }
        }
        return joined;
    }

    /** @return whether the request under {@code handle} was asked of a server and is not answered yet. */
    synchronized boolean isAsked(final int handle)
    {
        return asked.containsKey(handle);
    }

    /** {@code VipConnectReject}: the client's request ends REJECT. */
    synchronized ViplResult reject(final int handle, final int serverNode)
    {
        final Request request = asked.get(handle);
        if (null == request || request.key.node() != serverNode)
        {
            return ViplResult.INVALID_PARAMETER;
        }
        asked.remove(handle);
        request.result = ViplResult.REJECT;
        notifyAll();
        return ViplResult.SUCCESS;
    }

    /**
     * {@code VipDisconnect}, or the VI's process gone: the VI is Idle, and its peer, if it was still
     * connected to it, goes to Error (connection lost; VIA 1.0). Requests a dead server was asked and
     * never answered are the caller's to forget with {@link #forgetAsked}.
     */
    void disconnect(final int node, final int vi) throws InterruptedException
    {
        final long key = Endpoint.key(node, vi);
        final Endpoint peer;
        final int connectionId;
        synchronized (this)
        {
            while (joining.contains(key))
            {
                // A match of this VI is being told to its NICs: it is ended once it is made.
                wait(POLL_MS);
            }
            final PeerRequest unmatched = peerByVi.get(key);
            if (null != unmatched && null == unmatched.result)
            {
                // Its peer request, not matched yet, is withdrawn (its outcome INVALID_STATE, the VI Idle):
                // a match after this disconnect would connect a VI its process disconnected.
                end(unmatched, ViplResult.INVALID_STATE);
                notifyAll();
            }
            peer = peers.remove(key);
            if (null != peer)
            {
                peers.remove(peer.key());
            }
            connectionId = tables(node).connectionId(vi);
        }
        // Outside the monitor, each NIC by its own command. The peer may be disconnected and connected
        // again meanwhile by its own process: Via_Connection_Lost carries this connection's id, which the
        // NIC (and the driver, for a NIC gone) compares, so a newer connection of the peer is not broken.
        tables(node).disconnect(vi);
        if (null != peer)
        {
            tables(peer.node()).connectionLost(peer.vi(), connectionId);
        }
    }

    /**
     * {@code VipConnectPeerRequest}: does not block. The VI goes Connect Pending; if the peer's request
     * (local and remote addresses swapped) is already there and not expired, both are matched now.
     *
     * @return SUCCESS if the request is posted (matched or not), else why not.
     */
    ViplResult connectPeerRequest(final Endpoint self, final Key local, final Key remote, final long timeoutMs)
        throws InterruptedException
    {
        final PeerRequest request;
        final PeerRequest other;
        final int id;
        synchronized (this)
        {
            if (!tablesByNode.containsKey(remote.node()) || local.node() != self.node())
            {
                return ViplResult.INVALID_PARAMETER;
            }
            final PeerKey key = new PeerKey(local, remote);
            expire(peerWaiting.get(key));
            if (peerWaiting.containsKey(key))
            {
                return ViplResult.INVALID_PARAMETER;
            }
            if (!tables(self.node()).pending(self.vi()))
            {
                return ViplResult.INVALID_STATE;
            }
            request = new PeerRequest(self, key, HostClock.millis() + timeoutMs);
            peerByVi.put(self.key(), request);
            final PeerKey mirror = new PeerKey(remote, local);
            expire(peerWaiting.get(mirror));
            other = peerWaiting.remove(mirror);
            if (null == other)
            {
                peerWaiting.put(key, request);
                notifyAll();
                return ViplResult.SUCCESS;
            }
            final ViplResult mismatch = mismatch(request.self, other.self);
            if (null != mismatch)
            {
                fail(request, other, mismatch);
                notifyAll();
                return ViplResult.SUCCESS;
            }
            request.joining = true;
            other.joining = true;
            id = beginJoin(request.self, other.self);
        }
        ViplResult joined = ViplResult.INVALID_STATE;
        try
        {
            joined = join(id, request.self, other.self);
        }
        finally
        {
            synchronized (this)
            {
                endJoin(request.self, other.self, joined);
                request.joining = false;
                other.joining = false;
                if (ViplResult.SUCCESS == joined)
                {
                    request.peer = other.self;
                    other.peer = request.self;
                    request.result = ViplResult.SUCCESS;
                    other.result = ViplResult.SUCCESS;
                }
                else
                {
                    fail(request, other, ViplResult.INVALID_STATE);
                }
                notifyAll();
            }
        }
        return ViplResult.SUCCESS;
    }

    /**
     * {@code VipConnectPeerDone} (does not block) and {@code VipConnectPeerWait} (blocks until matched, the
     * request's deadline, or its process's death).
     *
     * @return the outcome: NOT_DONE while unmatched (Done only), SUCCESS with the peer's end, TIMEOUT,
     * a mismatch, ERROR_RESOURCE once the VI's NIC is dead (the request withdrawn, Done or Wait), or
     * INVALID_STATE if the VI has no peer request.
     */
    synchronized Outcome connectPeerOutcome(final int node, final int vi, final boolean block,
        final BooleanSupplier alive) throws InterruptedException
    {
        final long key = Endpoint.key(node, vi);
        final PeerRequest request = peerByVi.get(key);
        if (null == request)
        {
            return new Outcome(ViplResult.INVALID_STATE, null);
        }
        while (null == request.result)
        {
            if (request.joining)
            {
                if (!block)
                {
                    return new Outcome(ViplResult.NOT_DONE, null);
                }
                // Matched: its NICs are being told, which ends within the command timeouts.
                wait(POLL_MS);
                continue;
            }
            expire(request);
            if (null != request.result)
            {
                break;
            }
            if (null != tables(node).deadNic())
            {
                // Its NIC completes nothing any more: the request goes now, its VI Idle, not at its deadline,
                // and a process polling with Done learns it as one waiting does.
                withdraw(request);
                peerByVi.remove(key);
                return new Outcome(ViplResult.ERROR_RESOURCE, null);
            }
            if (!block)
            {
                return new Outcome(ViplResult.NOT_DONE, null);
            }
            if (!alive.getAsBoolean())
            {
                return new Outcome(ViplResult.TIMEOUT, null);
            }
            wait(Math.max(1, Math.min(request.deadline - HostClock.millis(), POLL_MS)));
        }
        peerByVi.remove(key);
        return new Outcome(request.result, request.peer);
    }

    /** The VI's process is gone, or it is destroyed: its peer-to-peer request, if any, goes. */
    synchronized void forgetPeerRequest(final int node, final int vi)
    {
        final PeerRequest request = peerByVi.remove(Endpoint.key(node, vi));
        if (null != request && peerWaiting.get(request.key) == request)
        {
            peerWaiting.remove(request.key);
        }
    }

    /** Ends an unmatched request at once ({@code ERROR_RESOURCE}: its NIC is dead), its VI Idle again. */
    private void withdraw(final PeerRequest request)
    {
        end(request, ViplResult.ERROR_RESOURCE);
    }

    /** Ends an unmatched request whose deadline passed: TIMEOUT, its VI Idle again. */
    private void expire(final PeerRequest request)
    {
        if (null != request && null == request.result && HostClock.millis() >= request.deadline)
        {
            end(request, ViplResult.TIMEOUT);
        }
    }

    /** An unmatched request ends with {@code result}: no longer waiting for a peer, its VI Idle again. */
    private void end(final PeerRequest request, final ViplResult result)
    {
        if (peerWaiting.get(request.key) == request)
        {
            peerWaiting.remove(request.key);
        }
        request.result = result;
        tables(request.self.node()).unpending(request.self.vi());
    }

    /** Two matched peer requests that could not be connected: both end with {@code result}, their VIs Idle again. */
    private void fail(final PeerRequest a, final PeerRequest b, final ViplResult result)
    {
        a.result = result;
        b.result = result;
        tables(a.self.node()).unpending(a.self.vi());
        tables(b.self.node()).unpending(b.self.vi());
    }

    /** @return what VIA 1.0 refuses to connect two ends for (reliability level, then MTU), or null. */
    private static ViplResult mismatch(final Endpoint a, final Endpoint b)
    {
        return a.reliability() != b.reliability() ? ViplResult.INVALID_RELIABILITY_LEVEL :
            a.maxTransfer() != b.maxTransfer() ? ViplResult.INVALID_MTU : null;
    }

    /**
     * Under the monitor: {@code first} and {@code second} are joining ({@link #join} may tell their NICs).
     *
     * @return the connection id to join them under.
     */
    private int beginJoin(final Endpoint first, final Endpoint second)
    {
        joining.add(first.key());
        joining.add(second.key());
        return nextId();
    }

    /**
     * Connects {@code first} and {@code second} under connection id {@code id}, each NIC through a driver
     * command (issue 14), {@code first}'s NIC first; if the second refuses, the first is disconnected
     * again. Called outside the monitor, between {@link #beginJoin} and {@link #endJoin}: it waits for
     * each NIC's Driver Doorbell, and touches none of the manager's state.
     *
     * @return SUCCESS; INVALID_STATE if the first NIC refused (its VI was not Idle: nothing changed);
     * REJECT if the second did (the first was disconnected again).
     */
    private ViplResult join(final int id, final Endpoint first, final Endpoint second) throws InterruptedException
    {
        if (!tables(first.node()).connect(first.vi(), id, second.node(), second.vi(), second.nicPid()))
        {
            return ViplResult.INVALID_STATE;
        }
        if (!tables(second.node()).connect(second.vi(), id, first.node(), first.vi(), first.nicPid()))
        {
            tables(first.node()).disconnect(first.vi());
            return ViplResult.REJECT;
        }
        return ViplResult.SUCCESS;
    }

    /** Under the monitor, after {@link #join}: a made connection's pair is recorded, and both VIs are free again. */
    private void endJoin(final Endpoint first, final Endpoint second, final ViplResult joined)
    {
        if (ViplResult.SUCCESS == joined)
        {
            peers.put(first.key(), second);
            peers.put(second.key(), first);
        }
        joining.remove(first.key());
        joining.remove(second.key());
    }

    /** @return true if the VI is one end of a connection the manager made. */
    synchronized boolean isConnected(final int node, final int vi)
    {
        return peers.containsKey(Endpoint.key(node, vi));
    }

    /**
     * A request asked of a server that never learnt of it (the reply could not be written): it waits again,
     * first for its key, as if never asked. Nothing if its client withdrew it meanwhile.
     */
    synchronized void unask(final Request request)
    {
        if (asked.remove(request.handle, request))
        {
            request.handle = 0;
            waiting.computeIfAbsent(request.key, k -> new ArrayDeque<>()).addFirst(request);
            notifyAll();
        }
    }

    /** The requests a server was asked and will never answer (its process is gone): they end REJECT. */
    synchronized void forgetAsked(final int[] handles)
    {
        for (final int handle : handles)
        {
            final Request request = asked.remove(handle);
            if (null != request)
            {
                request.result = ViplResult.REJECT;
            }
        }
        notifyAll();
    }

    private void withdraw(final Request request)
    {
        final ArrayDeque<Request> queue = waiting.get(request.key);
        if (null != queue)
        {
            queue.remove(request);
            if (queue.isEmpty())
            {
                waiting.remove(request.key);
            }
        }
        for (final Iterator<Request> it = asked.values().iterator(); it.hasNext(); )
        {
            if (it.next() == request)
            {
                it.remove();
            }
        }
    }

    private ViaTables tables(final int node)
    {
        final ViaTables tables = tablesByNode.get(node);
        if (null == tables)
        {
            throw new IllegalStateException("no VIA tables of node " + node + " among " +
                Arrays.toString(tablesByNode.keySet().toArray()));
        }
        return tables;
    }

    private int nextId()
    {
        final int id = nextId;
        nextId = nextId == Integer.MAX_VALUE ? 1 : nextId + 1;
        return id;
    }
}
