package org.qnix.daemon;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.PublishedTables;
import org.qnix.firmware.NodeImage;

/**
 * The "system calls" one process makes to its node's driver (thesis 3.4, 3.6; {@link DriverProtocol}):
 * each request decoded, carried out and answered, with no socket in sight. One per connection, used by
 * that connection's one thread; it remembers the process the connection registered, so that buffer
 * requests act on that process's {@link ProcessProtectionTable} only, and {@link #close()} de-registers
 * it however the connection ended.
 *
 * <p>The caller's pid is the one the kernel gave for the connection: the pid a REGISTER claims is only
 * compared with it and logged (issue 17, item 8).
 *
 * <pre>{@code
 * DriverRequests requests = new DriverRequests(image, registrar, peer, replies, connection, hangUp);
 * while (requests.onRequest(in.readInt(), in)) { }
 * requests.close();
 * }</pre>
 */
final class DriverRequests implements AutoCloseable
{
    /**
     * What the driver's idle rule needs to know of a connection's registrations
     * ({@link DriverConnections.Connection}): a connection is exempt from it only while a registration
     * is in progress or held.
     */
    interface Registrations
    {
        /** A whole REGISTER or VIA_REGISTER request arrived, before the registration waits for anything. */
        void registering();

        /**
         * A registration request was answered, or the process de-registered.
         *
         * @param held whether the connection holds a registered process now, QNIX or VIA.
         */
        void settled(boolean held);
    }

    private final NicCoordinates node;
    private final AtomicBuffer sdram;
    private final NicSdramLayout layout;
    private final ProcessRegistrar registrar;
    private final int callerPid;
    /** The claimed-pid mismatch of a REGISTER is logged once per connection. */
    private boolean pidMismatchLogged;
    private final DriverReplies replies;
    private final Registrations registrations;
    private final BooleanSupplier hungUp;
    private ProcessRegistrar.Registered registered;
    private final ViaRequests via;
    /** A request is being carried out; still set at {@link #close()} if the connection failed in it. */
    private boolean inRequest;

    /**
     * @param caller            the process at the other end (pid, uid), as the kernel says.
     * @param replies           where the answers go.
     * @param registrations     told when a registration starts and when it is settled or undone.
     * @param hungUp            whether the process closed the connection, asked while a request waits.
     */
    DriverRequests(final NodeImage image, final ProcessRegistrar registrar, final PeerCredentials caller,
        final DriverReplies replies, final Registrations registrations, final BooleanSupplier hungUp)
    {
        this.node = image.node();
        this.sdram = image.sdram();
        this.layout = image.sdramLayout();
        this.registrar = registrar;
        this.callerPid = caller.pid();
        this.replies = replies;
        this.registrations = registrations;
        this.hungUp = hungUp;
        this.via = new ViaRequests(registrar, caller, replies, registrations, hungUp);
    }

    /**
     * Reads the fields of a request whose type was read and carries it out.
     *
     * @return false if the connection should end: the request was of no known type, so nothing after
     * it can be read as a request.
     * @throws java.io.EOFException if the request ends before its fields do.
     */
    boolean onRequest(final int type, final DataInputStream in) throws IOException, InterruptedException
    {
        // Left set when the request throws (its reply could not be written, its caller hung up in a wait):
        // the connection failed in the middle of it, which close() reads.
        inRequest = true;
        final boolean goOn = carryOut(type, in);
        inRequest = false;
        return goOn;
    }

    private boolean carryOut(final int type, final DataInputStream in) throws IOException, InterruptedException
    {
        switch (type)
        {
            case DriverProtocol.REGISTER:
            {
                final int ai = in.readInt();
                final int pi = in.readInt();
                final int group = in.readInt();
                final int groupSize = in.readInt();
                final int claimedPid = in.readInt();
                final long timeoutMs = cappedWait(in.readLong());
                registrations.registering();
                try
                {
                    register(new ProcessName(ai, pi), group, groupSize, claimedPid, timeoutMs);
                }
                finally
                {
                    registrations.settled(holdsRegistration());
                }
                return true;
            }

            case DriverProtocol.DEREGISTER:
                try
                {
                    deregister();
                }
                finally
                {
                    registrations.settled(holdsRegistration());
                }
                return true;

            case DriverProtocol.GROUP_QUERY:
                groupQuery(in.readInt());
                return true;

            case DriverProtocol.BUFFER_ALLOCATE:
            {
                final int length = in.readInt();
                final int firstPageOffset = in.readInt();
                final boolean contiguous = 0 != in.readInt();
                bufferAllocate(length, firstPageOffset, contiguous);
                return true;
            }

            case DriverProtocol.BUFFER_POOL:
                bufferPool(in.readInt());
                return true;

            case DriverProtocol.BUFFER_LOCK:
                bufferLock(in.readInt(), true);
                return true;

            case DriverProtocol.BUFFER_UNLOCK:
                bufferLock(in.readInt(), false);
                return true;

            case DriverProtocol.BUFFER_FREE:
                bufferFree(in.readInt());
                return true;

            default:
                if (ViaRequests.isViaRequest(type) && via.onRequest(type, in, null != registered))
                {
                    return true;
                }
                replies.refuse("unknown driver request " + type);
                return false;
        }
    }

    /**
     * @return a client's timeout as the driver waits it: at least 0, at most
     * {@link DriverProtocol#LONGEST_WAIT_MS}, so that no deadline overflows; a longer wait is as long as the
     * process lives anyway.
     */
    static long cappedWait(final long timeoutMs)
    {
        return Math.max(0, Math.min(timeoutMs, DriverProtocol.LONGEST_WAIT_MS));
    }

    /** @return whether the connection holds a registered process, QNIX or VIA. */
    private boolean holdsRegistration()
    {
        return null != registered || null != via.registered();
    }

    /** @return the process this connection registered, or null. */
    ProcessRegistrar.Registered registered()
    {
        return registered;
    }

    /** REGISTER: {@code qx_init}, once per connection. */
    void register(final ProcessName name, final int group, final int groupSize, final int claimedPid,
        final long timeoutMs) throws IOException, InterruptedException
    {
        if (claimedPid != callerPid && !pidMismatchLogged)
        {
            // Once per connection: a client repeating the request must not fill the daemon's log.
            pidMismatchLogged = true;
            System.err.println("driver " + node + ": a REGISTER of " + name + " claims pid " + claimedPid +
                " but comes from pid " + callerPid + ": using " + callerPid);
        }
        if (holdsRegistration())
        {
            replies.refuse("this connection already registered " +
                (null != registered ? registered.name() : "a VIA process (Vipl.openNic)"));
            return;
        }
        registered = registrar.register(name, group, groupSize, callerPid, timeoutMs, replies, hungUp);
    }

    /** DEREGISTER: {@code qx_finalize}; answered DEREGISTERED also when nothing was registered. */
    void deregister() throws IOException, InterruptedException
    {
        if (null != registered)
        {
            registrar.deregister(registered, false);
            registered = null;
        }
        via.close(false);
        replies.deregistered();
    }

    /** GROUP_QUERY: a group's expected size and members, sorted by name, as the NIC's tables hold them. */
    void groupQuery(final int group) throws IOException
    {
        final List<PublishedTables.GroupEntry> groups;
        final List<PublishedTables.NameEntry> names;
        try
        {
            groups = PublishedTables.groups(sdram, layout);
            names = PublishedTables.names(sdram, layout);
        }
        catch (final IllegalStateException ex)
        {
            // No consistent snapshot: the NIC stopped half-way through a write of its tables (killed, or at
            // a breakpoint), or keeps rewriting them. A query answers that; it does not cost the caller its
            // connection and its registration.
            replies.fail(DriverProtocol.NIC_DEAD, "NIC " + node + " did not publish its tables: " + ex.getMessage());
            return;
        }
        final PublishedTables.GroupEntry entry = groups.stream().filter(g -> g.group() == group).findFirst()
            .orElse(null);
        if (null == entry)
        {
            replies.groupInfo(0, List.of());
            return;
        }
        final List<ProcessName> sorted = new ArrayList<>(entry.members());
        sorted.sort((a, b) -> a.ai() != b.ai() ? Integer.compare(a.ai(), b.ai()) : Integer.compare(a.pi(), b.pi()));
        final List<DriverReplies.GroupMember> members = new ArrayList<>(sorted.size());
        for (final ProcessName member : sorted)
        {
            members.add(new DriverReplies.GroupMember(member, names.stream().filter(n -> n.name().equals(member))
                .findFirst().map(n -> n.node().packed()).orElse(-1)));
        }
        replies.groupInfo(entry.expectedSize(), members);
    }

    /** BUFFER_ALLOCATE: a buffer for DMA, not locked yet (thesis 3.6). */
    void bufferAllocate(final int length, final int firstPageOffset, final boolean contiguous) throws IOException
    {
        if (null == memory())
        {
            refuseUnregistered("BUFFER_ALLOCATE");
            return;
        }
        try
        {
            replies.buffer(memory().allocate(length, firstPageOffset, contiguous));
        }
        catch (final ProcessProtectionTable.Refusal ex)
        {
            replies.fail(ex.code(), ex.getMessage());
        }
    }

    /** BUFFER_POOL: {@code qx_buffer_pool}, written into the process's VNI before the reply. */
    void bufferPool(final int pages) throws IOException
    {
        if (null == registered)
        {
            refuseUnregistered("BUFFER_POOL");
            return;
        }
        try
        {
            replies.buffer(registered.memory().pool(pages));
        }
        catch (final ProcessProtectionTable.Refusal ex)
        {
            replies.fail(ex.code(), ex.getMessage());
        }
    }

    /** BUFFER_LOCK / BUFFER_UNLOCK: {@code qx_buffer_lock} / {@code qx_buffer_unlock}, nested. */
    void bufferLock(final int regionId, final boolean lock) throws IOException
    {
        if (null == memory())
        {
            refuseUnregistered(lock ? "BUFFER_LOCK" : "BUFFER_UNLOCK");
            return;
        }
        try
        {
            replies.lockCount(lock ? memory().lock(regionId) : memory().unlock(regionId));
        }
        catch (final ProcessProtectionTable.Refusal ex)
        {
            replies.fail(ex.code(), ex.getMessage());
        }
    }

    /** BUFFER_FREE: the pages go back to the allocator and the NIC stops honouring them. */
    void bufferFree(final int regionId) throws IOException
    {
        if (null == memory())
        {
            refuseUnregistered("BUFFER_FREE");
            return;
        }
        try
        {
            memory().free(regionId);
            replies.ok();
        }
        catch (final ProcessProtectionTable.Refusal ex)
        {
            replies.fail(ex.code(), ex.getMessage());
        }
    }

    /** @return the memory for DMA of the process this connection registered, QNIX or VIA, or null. */
    private ProcessProtectionTable memory()
    {
        return null != registered ? registered.memory() : null != via.registered() ? via.registered().memory() : null;
    }

    private void refuseUnregistered(final String request) throws IOException
    {
        replies.refuse(request + " needs a registered process: this connection has not completed qx_init " +
            "(Qnix.init), or has de-registered");
    }

    /**
     * The connection ended, for whatever reason: de-registers its process as at process exit (thesis 3.4).
     * If it ended in the middle of a request, a process that still lives may still map what it was given
     * (its library gave up waiting for the reply): that is held until it exits ({@link LingeringProcesses}).
     */
    public void close() throws InterruptedException
    {
        final boolean connectionLost = inRequest;
        if (null != registered)
        {
            registrar.deregister(registered, connectionLost);
            registered = null;
        }
        via.close(connectionLost);
    }
}
