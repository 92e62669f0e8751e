package org.qnix.daemon;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.function.BooleanSupplier;

import org.qnix.abi.DriverProtocol;
import org.qnix.abi.ViplResult;

/**
 * The VIA "system calls" of one connection (issue 14; {@link DriverProtocol}'s VIA requests): VIA
 * registration, then ptags, memory regions, completion queues and VIs, each checked by the process's
 * {@link ViaResources} and answered through {@link DriverReplies}. Its {@link DriverRequests} hands it
 * every VIA request of the connection, and {@link #close()} is process death: the process's VIA
 * resources leave the NIC's tables and it is de-registered.
 *
 * <pre>{@code
 * ViaRequests via = new ViaRequests(registrar, PeerCredentials.of(channel), replies, connection, hangUp);
 * via.onRequest(DriverProtocol.VIA_PTAG_CREATE, in);
 * via.close();
 * }</pre>
 */
final class ViaRequests implements AutoCloseable
{
    private final ProcessRegistrar registrar;
    private final int callerPid;
    private final int callerUid;
    private final DriverReplies replies;
    private final DriverRequests.Registrations registrations;
    private final BooleanSupplier hungUp;
    private ProcessRegistrar.ViaRegistered registered;

    /**
     * @param caller        the process at the other end, as the kernel says.
     * @param registrations told when a VIA registration starts and when it is settled.
     * @param hungUp        whether the process closed the connection ({@link ClientHangUp}): a wait ends then.
     */
    ViaRequests(final ProcessRegistrar registrar, final PeerCredentials caller, final DriverReplies replies,
        final DriverRequests.Registrations registrations, final BooleanSupplier hungUp)
    {
        this.registrar = registrar;
        this.callerPid = caller.pid();
        this.callerUid = caller.uid();
        this.replies = replies;
        this.registrations = registrations;
        this.hungUp = hungUp;
    }

    /** @return true for a request type this class carries out. */
    static boolean isViaRequest(final int type)
    {
        return type >= DriverProtocol.VIA_REGISTER && type <= DriverProtocol.VIA_LAST;
    }

    /** @return the VIA process this connection registered, or null. */
    ProcessRegistrar.ViaRegistered registered()
    {
        return registered;
    }

    /**
     * Reads the fields of a VIA request whose type was read and carries it out.
     *
     * @param qnixRegistered true if the connection registered a QNIX process: it may not register a VIA one too.
     * @return false if the type is not a VIA request.
     */
    boolean onRequest(final int type, final DataInputStream in, final boolean qnixRegistered)
        throws IOException, InterruptedException
    {
        if (DriverProtocol.VIA_REGISTER == type)
        {
            in.readInt();
            final long timeoutMs = DriverRequests.cappedWait(in.readLong());
            // Only once the whole request is read: one cut short leaves the connection idle.
            registrations.registering();
            try
            {
                if (null != registered || qnixRegistered)
                {
                    replies.viaFailed(ViplResult.INVALID_STATE, "this connection already registered a process: " +
                        "open the NIC for VIA on a connection of its own");
                    return true;
                }
                registered = registrar.registerVia(callerPid, callerUid, timeoutMs, replies);
                return true;
            }
            finally
            {
                registrations.settled(null != registered || qnixRegistered);
            }
        }
        if (isConnectionRequest(type))
        {
            connection(type, in);
            return true;
        }
        final int count = fieldCount(type);
        if (count < 0)
        {
            return false;
        }
        // Every field is read before the request is refused, so the stream stays in step.
        final int[] fields = new int[count];
        long offset = 0;
        long length = 0;
        if (DriverProtocol.VIA_REGISTER_MEM == type)
        {
            fields[0] = in.readInt();
            offset = in.readLong();
            length = in.readLong();
            fields[1] = in.readInt();
            fields[2] = in.readInt();
        }
        else
        {
            for (int i = 0; i < fields.length; i++)
            {
                fields[i] = in.readInt();
            }
        }
        if (null == registered)
        {
            replies.viaFailed(ViplResult.INVALID_STATE, "VIA request " + type + " needs a NIC opened for VIA on " +
                "this connection (Vipl.openNic)");
            return true;
        }
        final ViaResources via = registered.via();
        try
        {
            switch (type)
            {
                case DriverProtocol.VIA_PTAG_CREATE -> replies.viaHandle(via.createPtag());
                case DriverProtocol.VIA_PTAG_DESTROY ->
                {
                    via.destroyPtag(fields[0]);
                    replies.ok();
                }
                case DriverProtocol.VIA_REGISTER_MEM ->
                    replies.viaHandle(via.registerMem(fields[0], offset, length, fields[1], fields[2]));
                case DriverProtocol.VIA_DEREGISTER_MEM ->
                {
                    via.deregisterMem(fields[0]);
                    replies.ok();
                }
                case DriverProtocol.VIA_SET_MEM_ATTRIBUTES ->
                {
                    via.setMemAttributes(fields[0], fields[1], fields[2]);
                    replies.ok();
                }
                case DriverProtocol.VIA_CQ_CREATE -> replies.viaCq(via.createCq(fields[0]));
                case DriverProtocol.VIA_CQ_RESIZE -> replies.viaCq(via.resizeCq(fields[0], fields[1]));
                case DriverProtocol.VIA_CQ_DESTROY ->
                {
                    via.destroyCq(fields[0]);
                    replies.ok();
                }
                case DriverProtocol.VIA_VI_CREATE ->
                    replies.viaVi(via.createVi(fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]));
                case DriverProtocol.VIA_VI_DESTROY ->
                {
                    via.destroyVi(fields[0]);
                    replies.ok();
                }
                case DriverProtocol.VIA_VI_QUERY -> replies.viaHandle(via.viState(fields[0]));
                default -> throw new IllegalStateException("VIA request " + type);
            }
        }
        catch (final ViaRefusal ex)
        {
            replies.viaFailed(ex.result(), ex.getMessage());
        }
        return true;
    }

    private static boolean isConnectionRequest(final int type)
    {
        return DriverProtocol.VIA_CONNECT_WAIT == type || DriverProtocol.VIA_CONNECT_ACCEPT == type ||
            DriverProtocol.VIA_CONNECT_REJECT == type || DriverProtocol.VIA_CONNECT_REQUEST == type ||
            DriverProtocol.VIA_DISCONNECT == type || DriverProtocol.VIA_CONNECT_PEER_REQUEST == type ||
            DriverProtocol.VIA_CONNECT_PEER_DONE == type || DriverProtocol.VIA_CONNECT_PEER_WAIT == type;
    }

    /** @return whether the request blocks until a peer comes (or its timeout, or its process's close). */
    private static boolean isWait(final int type)
    {
        return DriverProtocol.VIA_CONNECT_WAIT == type || DriverProtocol.VIA_CONNECT_REQUEST == type ||
            DriverProtocol.VIA_CONNECT_PEER_WAIT == type;
    }

    /** The connection manager's requests (issue 14): the waits block this connection's thread. */
    private void connection(final int type, final DataInputStream in) throws IOException, InterruptedException
    {
        int vi = 0;
        int handle = 0;
        int serverNode = 0;
        byte[] discriminator = null;
        byte[] remoteDiscriminator = null;
        long timeoutMs = 0;
        switch (type)
        {
            case DriverProtocol.VIA_CONNECT_WAIT ->
            {
                discriminator = readDiscriminator(in);
                timeoutMs = in.readLong();
            }
            case DriverProtocol.VIA_CONNECT_ACCEPT ->
            {
                handle = in.readInt();
                vi = in.readInt();
            }
            case DriverProtocol.VIA_CONNECT_REJECT -> handle = in.readInt();
            case DriverProtocol.VIA_CONNECT_REQUEST ->
            {
                vi = in.readInt();
                serverNode = in.readInt();
                discriminator = readDiscriminator(in);
                timeoutMs = in.readLong();
            }
            case DriverProtocol.VIA_CONNECT_PEER_REQUEST ->
            {
                vi = in.readInt();
                discriminator = readDiscriminator(in);
                serverNode = in.readInt();
                remoteDiscriminator = readDiscriminator(in);
                timeoutMs = in.readLong();
            }
            default -> vi = in.readInt();
        }
        if (null == registered)
        {
            replies.viaFailed(ViplResult.INVALID_STATE, "VIA request " + type + " needs a NIC opened for VIA on " +
                "this connection (Vipl.openNic)");
            return;
        }
        final ViaConnectionRequests requests = registered.via().requests();
        final long wait = DriverRequests.cappedWait(timeoutMs);
        try
        {
            switch (type)
            {
                case DriverProtocol.VIA_CONNECT_WAIT ->
                    connectionAsked(requests, requests.connectWait(discriminator, wait, () -> alive(requests)));
                case DriverProtocol.VIA_CONNECT_ACCEPT ->
                {
                    requests.accept(handle, vi);
                    replies.ok();
                }
                case DriverProtocol.VIA_CONNECT_REJECT ->
                {
                    requests.reject(handle);
                    replies.ok();
                }
                case DriverProtocol.VIA_CONNECT_REQUEST ->
                    replies.viaConnected(requests.connectRequest(vi, serverNode, discriminator, wait, () -> alive(requests)));
                case DriverProtocol.VIA_CONNECT_PEER_REQUEST ->
                {
                    requests.connectPeerRequest(vi, discriminator, serverNode, remoteDiscriminator, wait);
                    replies.ok();
                }
                case DriverProtocol.VIA_CONNECT_PEER_DONE ->
                    replies.viaConnected(requests.connectPeerOutcome(vi, false, () -> alive(requests)));
                case DriverProtocol.VIA_CONNECT_PEER_WAIT ->
                    replies.viaConnected(requests.connectPeerOutcome(vi, true, () -> alive(requests)));
                default ->
                {
                    requests.disconnect(vi);
                    replies.ok();
                }
            }
        }
        catch (final ViaRefusal ex)
        {
            if (isWait(type) && requests.closeRequested())
            {
                // The library reports its own close, whatever ended the wait just then.
                replies.viaFailed(ViplResult.INVALID_STATE, "the process closed its NIC during the connection " +
                    "wait (" + ex.getMessage() + ")");
                return;
            }
            replies.viaFailed(ex.result(), ex.getMessage());
        }
    }

    /**
     * Tells the server the request it was asked. If the reply cannot be written (the server closed its
     * NIC meanwhile), the request never reached it: it goes back to the head of the waiting requests for
     * the next server, not to a REJECT at this connection's end.
     */
    private void connectionAsked(final ViaConnectionRequests requests, final ViaConnections.Request request) throws IOException
    {
        try
        {
            replies.viaConnectionAsked(request);
        }
        catch (final IOException ex)
        {
            requests.unask(request);
            throw ex;
        }
    }

    /**
     * @return whether the process at the other end has not asked its waits to end, still holds this
     * connection and still lives: the wait of one that closes its NIC, or of a dead one, ends at once.
     * Asked under the connection manager's lock at each turn of a wait: the memory read first, the system
     * calls after.
     */
    private boolean alive(final ViaConnectionRequests requests)
    {
        return !requests.closeRequested() && !hungUp.getAsBoolean() && Processes.isAlive(callerPid);
    }

    private static byte[] readDiscriminator(final DataInputStream in) throws IOException
    {
        final int length = in.readInt();
        if (length < 0 || length > DriverProtocol.MAX_TEXT)
        {
            throw new IOException("bad discriminator length " + length + " on the driver socket");
        }
        final byte[] bytes = new byte[length];
        in.readFully(bytes);
        return bytes;
    }

    /** @return the int fields of a VIA request (VIA_REGISTER_MEM's longs apart). */
    private static int fieldCount(final int type)
    {
        switch (type)
        {
            case DriverProtocol.VIA_PTAG_CREATE: return 0;
            case DriverProtocol.VIA_PTAG_DESTROY:
            case DriverProtocol.VIA_DEREGISTER_MEM:
            case DriverProtocol.VIA_CQ_CREATE:
            case DriverProtocol.VIA_CQ_DESTROY:
            case DriverProtocol.VIA_VI_DESTROY:
            case DriverProtocol.VIA_VI_QUERY: return 1;
            case DriverProtocol.VIA_CQ_RESIZE: return 2;
            case DriverProtocol.VIA_REGISTER_MEM:
            case DriverProtocol.VIA_SET_MEM_ATTRIBUTES: return 3;
            case DriverProtocol.VIA_VI_CREATE: return 6;
            default: return -1;
        }
    }

    /** VipCloseNic, or the connection ended between requests: the VIA process and everything it held go. */
    public void close() throws InterruptedException
    {
        close(false);
    }

    /**
     * @param connectionLost the connection ended in the middle of a request: a process that still lives keeps
     *                       its entry and pages until it exits ({@link ProcessRegistrar#deregister(ProcessRegistrar.Registered, boolean)}).
     */
    void close(final boolean connectionLost) throws InterruptedException
    {
        if (null != registered)
        {
            registrar.deregisterVia(registered, connectionLost);
            registered = null;
        }
    }
}
