package org.qnix.daemon;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.BooleanSupplier;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViaCloseRequest;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplResult;

/**
 * One VIA process's connection requests as its driver sees them (issue 14; VIA 1.0's connection
 * model): the client-server calls ({@code VipConnectWait}, {@code VipConnectAccept}, {@code
 * VipConnectReject}, {@code VipConnectRequest}), the peer-to-peer ones ({@code VipConnectPeerRequest},
 * {@code VipConnectPeerDone}, {@code VipConnectPeerWait}) and {@code VipDisconnect}, each checked for
 * this process (its VIs, the requests it was asked) before it reaches the node-wide
 * {@link ViaConnections}; and whether the process asked its connection waits to end (its VIA Process
 * Structures' Close requested word). The library's side is libvipl's {@code ViplConnections}.
 *
 * <p>Used by its process's one connection thread, as its {@link ViaResources}, which owns it and
 * tells it of a VI's destroy and the process's death.
 *
 * <pre>{@code
 * ViaConnections.Request asked = requests.connectWait(discriminator, 5_000, alive);
 * requests.accept(asked.handle(), vi);
 * }</pre>
 */
final class ViaConnectionRequests
{
    /** The process's own VIs, by NIC VI table index: a request names only those. */
    @FunctionalInterface
    interface OwnVis
    {
        /** @throws ViaRefusal {@code INVALID_PARAMETER} if {@code vi} is no VI of the process. */
        ViaResources.Vi own(int vi) throws ViaRefusal;
    }

    private final ViaConnections connections;
    private final ViaTables tables;
    private final NicCoordinates node;
    private final int owner;
    /** The process's uid, as the kernel gave it for its driver connection: it may use the addresses of its uid. */
    private final int uid;
    private final OwnVis vis;
    /** Wrapped once, then only read through, on the process's connection thread. */
    private final ViaCloseRequest closeRequest = new ViaCloseRequest();
    /** Connection requests this process was asked as a server and has not answered. */
    private final Set<Integer> askedHandles = new LinkedHashSet<>();

    /**
     * @param owner             the process's Process Table index.
     * @param uid               the process's uid (SO_PEERCRED).
     * @param host              the node's host memory, which holds the process's VIA Process Structures.
     * @param structuresAddress where its VIA Process Structures are in host memory.
     */
    ViaConnectionRequests(final ViaConnections connections, final ViaTables tables, final NicCoordinates node,
        final int owner, final int uid, final OwnVis vis, final AtomicBuffer host, final long structuresAddress)
    {
        this.connections = connections;
        this.tables = tables;
        this.node = node;
        this.owner = owner;
        this.uid = uid;
        this.vis = vis;
        closeRequest.wrap(host, (int)structuresAddress);
    }

    /**
     * @return whether the process's {@code close()} asked for its connection waits to end (its VIA Process
     * Structures' Close requested word): the waits then end, and the process de-registers after.
     */
    boolean closeRequested()
    {
        // Writer: the process, with release, from its close(); any value is its own business.
        return closeRequest.isRequested();
    }

    /**
     * {@code VipConnectWait} on this process's node with {@code discriminator}: TIMEOUT, or
     * {@code ERROR_RESOURCE} once this node's NIC is dead.
     *
     * @return the request asked of this process, to accept or reject by its handle.
     */
    ViaConnections.Request connectWait(final byte[] discriminator, final long timeoutMs, final BooleanSupplier alive)
        throws ViaRefusal, InterruptedException
    {
        checkDiscriminator(discriminator);
        final ViaConnections.Key key = ViaConnections.Key.of(node.packed(), discriminator);
        claim(key);
        final ViaConnections.Request request = connections.connectWait(key, timeoutMs, alive);
        if (null == request)
        {
            final String dead = tables.deadNic();
            if (null != dead)
            {
                throw new ViaRefusal(ViplResult.ERROR_RESOURCE, "the connection wait ended: " + dead);
            }
            throw new ViaRefusal(ViplResult.TIMEOUT, "no connection request for " + key + " within " + timeoutMs +
                " ms");
        }
        askedHandles.add(request.handle());
        return request;
    }

    /** A request {@link #connectWait} took that this process never learnt of: it waits for a server again. */
    void unask(final ViaConnections.Request request)
    {
        askedHandles.remove(request.handle());
        connections.unask(request);
    }

    /**
     * {@code VipConnectAccept} of an asked request with one of this process's Idle VIs. Refused
     * {@code INVALID_STATE} for a VI that is not Idle, the request still asked: VIA lets the server accept
     * it with another VI or reject it, and the client waits for that (or for the server's death).
     */
    void accept(final int handle, final int vi) throws ViaRefusal, InterruptedException
    {
        final ViaResources.Vi own = vis.own(vi);
        if (!askedHandles.contains(handle))
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "connection request " + handle +
                " was not asked of this process, or was answered");
        }
        final ViplResult result = connections.accept(handle, endpoint(own));
        final boolean stillAsked = connections.isAsked(handle);
        if (!stillAsked)
        {
            // Answered (connected, or ended with a mismatch), or withdrawn by its client meanwhile.
            askedHandles.remove(handle);
        }
        if (ViplResult.SUCCESS != result)
        {
            throw new ViaRefusal(result, "VI " + vi + " cannot accept connection request " + handle + ": " + result +
                (stillAsked ? " (the VI is not Idle); the request stays asked: accept it with an Idle VI or reject it" :
                    ""));
        }
    }

    /** {@code VipConnectReject}. */
    void reject(final int handle) throws ViaRefusal
    {
        if (!askedHandles.remove(handle) || ViplResult.SUCCESS != connections.reject(handle, node.packed()))
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "connection request " + handle +
                " was not asked of this process, or was answered");
        }
    }

    /**
     * {@code VipConnectRequest}: blocks until accepted (the server's end), rejected, timed out, or this
     * node's NIC found dead ({@code ERROR_RESOURCE}, the VI Idle again).
     */
    ViaConnections.Endpoint connectRequest(final int vi, final int serverNode, final byte[] discriminator,
        final long timeoutMs, final BooleanSupplier alive) throws ViaRefusal, InterruptedException
    {
        final ViaResources.Vi own = vis.own(vi);
        checkDiscriminator(discriminator);
        final ViaConnections.Outcome outcome = connections.connectRequest(endpoint(own),
            ViaConnections.Key.of(serverNode, discriminator), timeoutMs, alive);
        if (ViplResult.SUCCESS != outcome.result())
        {
            throw new ViaRefusal(outcome.result(), "VI " + vi + "'s connection request to node " +
                NicCoordinates.unpack(serverNode) + " ended " + outcome.result() + nicDeadReason(outcome.result()));
        }
        return outcome.server();
    }

    /** {@code VipConnectPeerRequest}: posted at once; the VI is Connect Pending until matched or timed out. */
    void connectPeerRequest(final int vi, final byte[] localDiscriminator, final int remoteNode,
        final byte[] remoteDiscriminator, final long timeoutMs) throws ViaRefusal, InterruptedException
    {
        final ViaResources.Vi own = vis.own(vi);
        checkDiscriminator(localDiscriminator);
        checkDiscriminator(remoteDiscriminator);
        final ViaConnections.Key local = ViaConnections.Key.of(node.packed(), localDiscriminator);
        claim(local);
        final ViplResult result = connections.connectPeerRequest(endpoint(own), local,
            ViaConnections.Key.of(remoteNode, remoteDiscriminator), timeoutMs);
        if (ViplResult.SUCCESS != result)
        {
            throw new ViaRefusal(result, "VI " + vi + "'s peer connection request to node " +
                NicCoordinates.unpack(remoteNode) + " was not posted: " + result +
                (ViplResult.INVALID_PARAMETER == result ? " (unknown node, or the same addresses already asked)" : ""));
        }
    }

    /**
     * {@code VipConnectPeerDone} ({@code block} false) or {@code VipConnectPeerWait}, which ends
     * {@code ERROR_RESOURCE} once this node's NIC is dead (the request withdrawn, the VI Idle again).
     *
     * @return the peer's end.
     */
    ViaConnections.Endpoint connectPeerOutcome(final int vi, final boolean block, final BooleanSupplier alive)
        throws ViaRefusal, InterruptedException
    {
        vis.own(vi);
        final ViaConnections.Outcome outcome = connections.connectPeerOutcome(node.packed(), vi, block, alive);
        if (ViplResult.SUCCESS != outcome.result())
        {
            throw new ViaRefusal(outcome.result(), "VI " + vi + "'s peer connection: " + outcome.result() +
                (ViplResult.INVALID_STATE == outcome.result() ? " (no peer connection request outstanding)" : "") +
                nicDeadReason(outcome.result()));
        }
        return outcome.server();
    }

    /** @return for a connection wait that ended ERROR_RESOURCE (its NIC dead), why, for the message; else "". */
    private String nicDeadReason(final ViplResult result)
    {
        if (ViplResult.ERROR_RESOURCE != result)
        {
            return "";
        }
        final String dead = tables.deadNic();
        return ": " + (null != dead ? dead : "the NIC of node " + node + " stopped meanwhile");
    }

    /** {@code VipDisconnect}: Idle again; a connected peer goes to Error. */
    void disconnect(final int vi) throws ViaRefusal, InterruptedException
    {
        vis.own(vi);
        connections.disconnect(node.packed(), vi);
    }

    /** VI {@code vi} is destroyed: a peer request of it ends. */
    void forgetVi(final int vi)
    {
        connections.forgetPeerRequest(node.packed(), vi);
    }

    /**
     * The process died or de-registered: the requests it was asked and never answered end REJECT, and the
     * addresses it used as its own are no longer held for its uid by it.
     */
    void forgetAsked()
    {
        connections.forgetAsked(askedHandles.stream().mapToInt(Integer::intValue).toArray());
        askedHandles.clear();
        connections.release(this);
    }

    /** At the process's death, before VI {@code vi} leaves the tables: its peer sees the connection lost. */
    void endConnection(final int vi) throws InterruptedException
    {
        forgetVi(vi);
        connections.disconnect(node.packed(), vi);
    }

    private ViaConnections.Endpoint endpoint(final ViaResources.Vi vi)
    {
        return new ViaConnections.Endpoint(node.packed(), vi.vi(), ProcessTableLayout.nicPid(owner), vi.reliability(),
            vi.maxTransfer(), vi.attributes());
    }

    /** This process uses {@code address} as its own ({@link ViaConnections#claim}), unless another uid does. */
    private void claim(final ViaConnections.Key address) throws ViaRefusal
    {
        connections.claim(address, uid, this);
    }

    private static void checkDiscriminator(final byte[] discriminator) throws ViaRefusal
    {
        if (discriminator.length > ViaTablesLayout.MAX_DISCRIMINATOR_BYTES)
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "a discriminator of " + discriminator.length +
                " bytes is longer than " + ViaTablesLayout.MAX_DISCRIMINATOR_BYTES);
        }
    }
}
