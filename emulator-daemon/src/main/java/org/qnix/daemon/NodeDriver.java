package org.qnix.daemon;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.FileModes;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.PublishedTables;
import org.qnix.abi.VniLayout;
import org.qnix.firmware.NodeImage;

/**
 * The kernel driver of one emulated node (thesis 3.4), serving the node's Unix-domain socket. A
 * process registers through its connection and stays registered while the connection is open; when it
 * closes for any reason (exit, exception, {@code kill -9}) the driver de-registers it exactly as at
 * process exit, and frees everything the process held.
 */
final class NodeDriver implements AutoCloseable
{
    private static final long POLL_MS = 1;
    private static final long DELETE_TIMEOUT_MS = 10_000;
    private static final long ACCEPT_RETRY_MAX_MS = 1000;
    private static final long IDLE_CHECK_MS = 1000;

    private final NicCoordinates node;
    private final ClusterParameters params;
    private final NicSdramLayout layout;
    private final HostMemoryLayout hostLayout;
    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    private final PageAllocator allocator;
    private final DriverCommandQueueWriter commandQueue;
    private final ClusterRegistry registry;
    private final Path socketPath;
    private final DriverConnections connections;
    private final NicHeartbeats heartbeats;
    private final DriverAccess access;
    private ServerSocketChannel server;
    private volatile boolean closed;

    /** A process registered through this driver, with the memory it holds for DMA. */
    private record Registered(
        ProcessName name, int index, int osPid, int group, int groupSize, ProcessProtectionTable memory)
    {
    }

    /**
     * @param heartbeats of every NIC of the cluster: a registration needs them all.
     * @param access     who may connect.
     */
    NodeDriver(final NodeImage image, final ClusterRegistry registry, final Path socketPath,
        final NicHeartbeats heartbeats, final DriverAccess access)
    {
        this.heartbeats = heartbeats;
        this.access = access;
        this.node = image.node();
        this.params = image.parameters();
        this.layout = image.sdramLayout();
        this.hostLayout = image.hostLayout();
        this.sdram = image.sdram();
        this.host = image.hostMemory();
        this.registry = registry;
        this.socketPath = socketPath;
        this.allocator = new PageAllocator(host, hostLayout, sdram, layout);
        this.commandQueue = new DriverCommandQueueWriter(sdram, host, layout, hostLayout);
        this.connections = new DriverConnections(params.maxProcessesPerNic());
    }

    /** Binds the socket and starts accepting connections on a daemon thread. */
    void start() throws IOException
    {
        Files.deleteIfExists(socketPath);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socketPath));
        // bind gives the socket the umask's mode; connecting needs write permission on it.
        FileModes.restrict(socketPath);
        final Thread acceptor = new Thread(this::acceptLoop, "driver-" + node);
        acceptor.setDaemon(true);
        acceptor.start();
        final Thread reaper = new Thread(this::closeIdleConnections, "driver-" + node + "-idle");
        reaper.setDaemon(true);
        reaper.start();
    }

    /**
     * Accepts for as long as the driver is open. An accept that fails (too many open files, a signal)
     * is reported and tried again after a pause that grows to a second: before, the first failure
     * ended the loop and the node took no process again.
     */
    private void acceptLoop()
    {
        int failures = 0;
        while (!closed)
        {
            final SocketChannel channel;
            try
            {
                channel = server.accept();
                failures = 0;
            }
            catch (final ClosedChannelException ex)
            {
                return;
            }
            catch (final IOException ex)
            {
                if (closed)
                {
                    return;
                }
                if (0 == failures++)
                {
                    System.err.println("driver " + node + ": accept failed, trying again: " + ex);
                }
                pause(Math.min(ACCEPT_RETRY_MAX_MS, 10L << Math.min(failures, 7)));
                continue;
            }
            final PeerCredentials peer = admittedPeer(channel);
            if (null == peer)
            {
                continue;
            }
            final DriverConnections.Connection connection = connections.admit(channel, System.currentTimeMillis());
            if (null == connection)
            {
                refuseConnection(channel, overLimit());
                continue;
            }
            try
            {
                final Thread handler = new Thread(() -> serve(connection, peer), "driver-" + node + "-connection");
                handler.setDaemon(true);
                handler.start();
            }
            catch (final OutOfMemoryError ex)
            {
                // No thread to be had: refuse this one rather than lose the acceptor.
                connections.remove(connection);
                refuseConnection(channel, overLimit());
            }
        }
    }

    /**
     * @return the credentials of a new connection's peer if it may use the driver (issue 17, item 8),
     * else null, the connection refused.
     */
    private PeerCredentials admittedPeer(final SocketChannel channel)
    {
        final PeerCredentials peer;
        try
        {
            peer = PeerCredentials.of(channel);
        }
        catch (final IOException ex)
        {
            refuseConnection(channel, "the driver of node " + node + " cannot tell who connected: " + ex.getMessage());
            return null;
        }
        final String refusal = access.refusal(peer);
        if (null != refusal)
        {
            System.err.println("driver " + node + ": " + refusal);
            refuseConnection(channel, refusal);
            return null;
        }
        return peer;
    }

    private String overLimit()
    {
        return "the driver of node " + node + " serves " + connections.limit() +
            " connections at most (P=" + params.maxProcessesPerNic() + " processes and " +
            DriverConnections.SPARE_CONNECTIONS + " more) and has that many open: try again later";
    }

    /**
     * Tells a connection why it is refused, without waiting for its request, and shuts its output; it is
     * closed a little later, so that the client's request does not meet a closed socket first.
     */
    private void refuseConnection(final SocketChannel channel, final String reason)
    {
        try
        {
            // A few hundred bytes into a new connection's empty socket buffer: the write does not block.
            final DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Channels.newOutputStream(channel)));
            refuse(out, reason);
            channel.shutdownOutput();
            connections.linger(channel, System.currentTimeMillis());
        }
        catch (final IOException | RuntimeException ex)
        {
            // The client went away: closing is all that is left.
            DriverConnections.closeQuietly(channel);
        }
    }

    private void closeIdleConnections()
    {
        while (!closed)
        {
            pause(IDLE_CHECK_MS);
            final int idle = connections.closeIdle(System.currentTimeMillis());
            if (idle > 0)
            {
                System.err.println("driver " + node + ": closed " + idle + " connection(s) that sent no registration" +
                    " request within " + DriverConnections.REGISTER_WITHIN_MS + " ms");
            }
        }
    }

    private static void pause(final long ms)
    {
        try
        {
            Thread.sleep(ms);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /** @param peer who connected, as the kernel says: its pid is the one the driver uses, not the claimed one. */
    private void serve(final DriverConnections.Connection connection, final PeerCredentials peer)
    {
        final SocketChannel channel = connection.channel();
        Registered registered = null;
        try
        {
            final DataInputStream in = new DataInputStream(Channels.newInputStream(channel));
            final DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Channels.newOutputStream(channel)));
            while (!closed)
            {
                final int type = in.readInt();
                switch (type)
                {
                    case DriverProtocol.REGISTER:
                    {
                        final int ai = in.readInt();
                        final int pi = in.readInt();
                        final int group = in.readInt();
                        final int groupSize = in.readInt();
                        final int claimedPid = in.readInt();
                        final long timeoutMs = in.readLong();
                        connection.registering();
                        if (claimedPid != peer.pid())
                        {
                            System.err.println("driver " + node + ": a REGISTER of (" + ai + ", " + pi + ") claims pid " +
                                claimedPid + " but comes from pid " + peer.pid() + ": using " + peer.pid());
                        }
                        if (null != registered)
                        {
                            refuse(out, "this connection already registered " + registered.name());
                            break;
                        }
                        registered = register(out, new ProcessName(ai, pi), group, groupSize, peer.pid(), timeoutMs);
                        break;
                    }

                    case DriverProtocol.DEREGISTER:
                        if (null != registered)
                        {
                            deregister(registered);
                            registered = null;
                        }
                        out.writeInt(DriverProtocol.DEREGISTERED);
                        out.flush();
                        break;

                    case DriverProtocol.GROUP_QUERY:
                        groupInfo(out, in.readInt());
                        break;

                    case DriverProtocol.BUFFER_ALLOCATE:
                    {
                        final int length = in.readInt();
                        final int firstPageOffset = in.readInt();
                        final boolean contiguous = 0 != in.readInt();
                        bufferAllocate(out, registered, length, firstPageOffset, contiguous);
                        break;
                    }

                    case DriverProtocol.BUFFER_POOL:
                        bufferPool(out, registered, in.readInt());
                        break;

                    case DriverProtocol.BUFFER_LOCK:
                        bufferLock(out, registered, in.readInt(), true);
                        break;

                    case DriverProtocol.BUFFER_UNLOCK:
                        bufferLock(out, registered, in.readInt(), false);
                        break;

                    case DriverProtocol.BUFFER_FREE:
                        bufferFree(out, registered, in.readInt());
                        break;

                    default:
                        refuse(out, "unknown driver request " + type);
                        return;
                }
            }
        }
        catch (final EOFException ex)
        {
            // The process closed its connection: exit, crash or kill -9.
        }
        catch (final AsynchronousCloseException ex)
        {
            // Closed by the idle check or by close().
        }
        catch (final IOException ex)
        {
            if (!closed)
            {
                System.err.println("driver " + node + ": connection failed: " + ex);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        catch (final RuntimeException ex)
        {
            System.err.println("driver " + node + ": request failed");
            ex.printStackTrace();
        }
        finally
        {
            connections.remove(connection);
            try
            {
                channel.close();
            }
            catch (final IOException ignore)
            {
            }
            if (null != registered && !closed)
            {
                try
                {
                    deregister(registered);
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private static void refuse(final DataOutputStream out, final String reason) throws IOException
    {
        out.writeInt(DriverProtocol.FAILED);
        out.writeInt(DriverProtocol.REFUSED);
        DriverProtocol.writeText(out, reason);
        out.flush();
    }

    /** Thesis 3.4, registration steps 1-6. @return the registered process, or null if it failed. */
    private Registered register(final DataOutputStream out, final ProcessName name, final int group,
        final int groupSize, final int osPid, final long timeoutMs) throws IOException, InterruptedException
    {
        if (osPid <= 0 || groupSize < 1 || groupSize > params.nameTableEntries() || timeoutMs <= 0)
        {
            refuse(out, "bad registration request: pid " + osPid + ", group size " + groupSize +
                " (1.." + params.nameTableEntries() + "), timeout " + timeoutMs + " ms");
            return null;
        }
        if (group != name.ai())
        {
            refuse(out, "qx_init of " + name + " names group " + group + ": a process registers in its application's " +
                "group, named by its AI " + name.ai() + " (thesis 3.6); join other groups with joinGroup");
            return null;
        }
        final String deadAtStart = heartbeats.deadNic(System.currentTimeMillis());
        if (null != deadAtStart)
        {
            fail(out, DriverProtocol.NIC_DEAD, "qx_init of " + name + " cannot complete: " + deadAtStart);
            return null;
        }

        // Step 1: a free NIC Process Table entry, marked with the process's PID in the Process Flag Array.
        final int index = claimProcessTableEntry(osPid);
        if (index < 0)
        {
            refuse(out, "no free Virtual Network Interface on node " + node + ": all P=" +
                params.maxProcessesPerNic() + " are in use");
            return null;
        }
        final String refusal = registry.admit(
            new ClusterRegistry.Admitted(name, node, index, osPid, group, groupSize));
        if (null != refusal)
        {
            releaseProcessTableEntry(index);
            refuse(out, refusal);
            return null;
        }

        // Step 4: the Host Process Structures pages, non-swappable (thesis 3.1): locked for life.
        final PageAllocator.Region hpsRegion = allocator.allocateContiguous(index,
            HostProcessStructuresLayout.pages(params.contextsPerProcess(), params.pageSize()));
        if (null == hpsRegion)
        {
            registry.remove(name, node, index);
            releaseProcessTableEntry(index);
            refuse(out, "host memory of node " + node + " is exhausted: no pages for the Host Process Structures");
            return null;
        }
        allocator.protect(hpsRegion, 1);
        final long hps = hpsRegion.address(0);
        final Registered registered = new Registered(name, index, osPid, group, groupSize,
            new ProcessProtectionTable(allocator, sdram, layout, node, name, index));

        // Step 3: the VNI statically tied to the entry, cleared of its previous owner's data.
        final long vni = layout.vniOffset(index);
        final VniLayout vniLayout = layout.vni();
        sdram.setMemory((int)vni, vniLayout.length(), (byte)0);
        initialiseHostProcessStructures(hps, vni, vniLayout);

        // Step 5: the Process Table entry; the PID last, so the NIC never sees half an entry.
        final int entry = (int)layout.processEntryOffset(index);
        final int contexts = params.contextsPerProcess();
        sdram.putInt(entry + ProcessTableLayout.NAME_AI_OFFSET, name.ai());
        sdram.putInt(entry + ProcessTableLayout.NAME_PI_OFFSET, name.pi());
        sdram.putInt(entry + ProcessTableLayout.GROUP_OFFSET, group);
        sdram.putInt(entry + ProcessTableLayout.GROUP_SIZE_OFFSET, groupSize);
        sdram.putLong(entry + ProcessTableLayout.SEND_DOORBELLS_OFFSET,
            hps + HostProcessStructuresLayout.sendDoorbellOffset(0));
        sdram.putLong(entry + ProcessTableLayout.RECEIVE_DOORBELLS_OFFSET,
            hps + HostProcessStructuresLayout.receiveDoorbellOffset(contexts, 0));
        sdram.putLong(entry + ProcessTableLayout.PROCESS_CQ_HEAD_OFFSET, hps + HostProcessStructuresLayout.CQ_HEAD_OFFSET);
        sdram.putLong(entry + ProcessTableLayout.HPS_ADDRESS_OFFSET, hps);
        sdram.putIntRelease(entry + ProcessTableLayout.STATE_OFFSET, ProcessTableLayout.STATE_FREE);
        // Reader: the NIC control program, which checks it against the New_Process command.
        sdram.putIntRelease(entry + ProcessTableLayout.PID_OFFSET, osPid);

        // Step 2: New_Process to the Driver Command Queue. The NIC takes it at once and rings its Driver
        // Doorbell; the registration's outcome is the Registration State it writes into the entry.
        final DriverCommandQueueWriter.Ticket ticket = commandQueue.post(
            DriverCommand.NEW_PROCESS, name, osPid, index, group, groupSize, timeoutMs);
        if (null == ticket)
        {
            deregisterLocally(registered);
            fail(out, Doorbell.NO_RESOURCES, commandQueueFull(timeoutMs));
            return null;
        }

        // Step 6: wait until the NIC took the command, then until the whole group is known to every NIC.
        final long deadline = System.currentTimeMillis() + timeoutMs;
        long nextLivenessCheck = 0;
        boolean taken = false;
        while (true)
        {
            if (!taken)
            {
                final int doorbell = commandQueue.doorbell(ticket);
                if (Doorbell.isError(doorbell))
                {
                    commandQueue.release(ticket);
                    deregister(registered);
                    fail(out, doorbell, "NIC " + node + " refused New_Process for " + name + ": " + Doorbell.name(doorbell) +
                        (Doorbell.NO_RESOURCES == doorbell ? fullTables() : ""));
                    return null;
                }
                if (Doorbell.DONE == doorbell)
                {
                    commandQueue.release(ticket);
                    taken = true;
                }
            }
            // Writer: the NIC control program, with release semantics.
            final int state = taken ? sdram.getIntVolatile(entry + ProcessTableLayout.STATE_OFFSET) : -1;
            if (ProcessTableLayout.STATE_REGISTERED == state)
            {
                out.writeInt(DriverProtocol.REGISTERED);
                out.writeInt(index);
                out.writeInt(ProcessTableLayout.nicPid(index));
                out.writeLong(vni);
                out.writeInt(vniLayout.length());
                out.writeLong(hps);
                out.flush();
                return registered;
            }
            if (ProcessTableLayout.STATE_FAILED == state)
            {
                deregister(registered);
                fail(out, Doorbell.ABORTED, "NIC " + node + " aborted the registration of " + name);
                return null;
            }
            final long now = System.currentTimeMillis();
            if (now >= nextLivenessCheck)
            {
                nextLivenessCheck = now + 50;
                if (!ProcessHandle.of(osPid).map(ProcessHandle::isAlive).orElse(false))
                {
                    giveUp(ticket, taken);
                    deregister(registered);
                    return null;
                }
                final String dead = heartbeats.deadNic(now);
                if (null != dead)
                {
                    // Every NIC must acknowledge New_Process: with one dead, waiting is for nothing.
                    giveUp(ticket, taken);
                    deregister(registered);
                    fail(out, DriverProtocol.NIC_DEAD, "qx_init of " + name + " cannot complete: " + dead);
                    return null;
                }
            }
            if (now > deadline)
            {
                giveUp(ticket, taken);
                timedOut(out, name, group, groupSize, timeoutMs);
                return registered;
            }
            Thread.sleep(POLL_MS);
        }
    }

    /** @return which of the NIC's tables a New_Process refused for want of room found full. */
    private String fullTables()
    {
        final int names = PublishedTables.names(sdram, layout).size();
        final int groups = PublishedTables.groups(sdram, layout).size();
        final StringBuilder text = new StringBuilder();
        if (names >= params.nameTableEntries())
        {
            text.append(": its Name Table is full (T=").append(params.nameTableEntries()).append(" processes)");
        }
        if (groups >= params.groupTableEntries())
        {
            text.append(text.length() > 0 ? " and" : ":").append(" its Group Table is full (G=")
                .append(params.groupTableEntries()).append(" groups; each process may join ")
                .append(ClusterParameters.MAX_JOINED_GROUPS_PER_PROCESS).append(" groups besides its application's)");
        }
        return text.length() > 0 ? text.toString() : ": its Name or Group Table has no room";
    }

    private void giveUp(final DriverCommandQueueWriter.Ticket ticket, final boolean taken)
    {
        if (!taken)
        {
            commandQueue.abandon(ticket);
        }
    }

    /** Why a command could not be posted: the queue is full only while the NIC does not take commands. */
    private String commandQueueFull(final long timeoutMs)
    {
        final String dead = heartbeats.deadNic(node, System.currentTimeMillis());
        return "the Driver Command Queue of node " + node + " (D=" + params.driverCommandQueueEntries() +
            " entries) stayed full for " + timeoutMs + " ms: " +
            (null != dead ? dead : "its NIC control program has not taken the commands before");
    }

    private void initialiseHostProcessStructures(final long hps, final long vni, final VniLayout vniLayout)
    {
        final int base = (int)hps;
        host.putLong(base + HostProcessStructuresLayout.COMMAND_QUEUE_ADDRESS_OFFSET, vni + vniLayout.commandQueueOffset());
        host.putLong(base + HostProcessStructuresLayout.SEND_CONTEXTS_ADDRESS_OFFSET, vni + vniLayout.sendContextListOffset());
        host.putLong(base + HostProcessStructuresLayout.RECEIVE_CONTEXTS_ADDRESS_OFFSET,
            vni + vniLayout.receiveContextListOffset());
        host.putLong(base + HostProcessStructuresLayout.CONTEXT_REGIONS_ADDRESS_OFFSET,
            vni + vniLayout.contextRegionsOffset());
        host.putLong(base + HostProcessStructuresLayout.BUFFER_POOL_ADDRESS_OFFSET, vni + vniLayout.bufferPoolOffset());
        host.putLong(base + HostProcessStructuresLayout.VNI_LENGTH_OFFSET, vniLayout.length());
        // VNI Status and every Doorbell start at zero (Free): the allocator hands out zeroed pages.
    }

    private void timedOut(final DataOutputStream out, final ProcessName name, final int group, final int groupSize,
        final long timeoutMs) throws IOException
    {
        final List<ClusterRegistry.Admitted> members = registry.members(group);
        final boolean applicationGroup = members.stream().allMatch(m -> m.name().ai() == group);
        final List<ProcessName> missing = applicationGroup ? registry.missing(group, groupSize) : List.of();
        final StringBuilder message = new StringBuilder()
            .append("qx_init of ").append(name).append(" timed out after ").append(timeoutMs)
            .append(" ms: group ").append(group).append(" has ").append(members.size()).append(" of ")
            .append(groupSize).append(" members registered (")
            .append(members.stream().map(m -> m.name() + "@" + m.node()).collect(Collectors.joining(" ")))
            .append(")");
        if (!missing.isEmpty())
        {
            message.append("; missing: ").append(missing.stream().map(ProcessName::toString).collect(Collectors.joining(" ")));
        }
        else if (members.size() < groupSize)
        {
            message.append("; missing: ").append(groupSize - members.size()).append(" member(s)");
        }
        else
        {
            message.append("; every member asked to register but not every NIC acknowledged the group");
        }
        out.writeInt(DriverProtocol.TIMED_OUT);
        DriverProtocol.writeText(out, message.toString());
        out.writeInt(missing.size());
        for (final ProcessName m : missing)
        {
            out.writeInt(m.ai());
            out.writeInt(m.pi());
        }
        out.flush();
    }

    private static void fail(final DataOutputStream out, final int code, final String message) throws IOException
    {
        out.writeInt(DriverProtocol.FAILED);
        out.writeInt(code);
        DriverProtocol.writeText(out, message);
        out.flush();
    }

    /** Thesis 3.4, de-registration steps 1-5. */
    private void deregister(final Registered registered) throws InterruptedException
    {
        final int entry = (int)layout.processEntryOffset(registered.index());
        // Step 1: a zero PID is never scheduled again, and aborts a registration still in progress.
        sdram.putIntRelease(entry + ProcessTableLayout.PID_OFFSET, 0);

        // Step 2: Delete_Process, so every NIC forgets the process.
        final DriverCommandQueueWriter.Ticket ticket = commandQueue.post(DriverCommand.DELETE_PROCESS,
            registered.name(), registered.osPid(), registered.index(), 0, 0, DELETE_TIMEOUT_MS);
        if (null == ticket)
        {
            System.err.println("driver " + node + ": could not post Delete_Process for " + registered.name() +
                " (Driver Command Queue full); its NIC entry stays until the cluster goes down");
        }
        else
        {
            final long deadline = System.currentTimeMillis() + DELETE_TIMEOUT_MS;
            int doorbell;
            while (!Doorbell.isComplete(doorbell = commandQueue.doorbell(ticket)) && System.currentTimeMillis() < deadline &&
                null == heartbeats.deadNic(node, System.currentTimeMillis()))
            {
                // A dead NIC completes nothing: stop waiting once its heartbeat is old (issue 17, item 9).
                Thread.sleep(POLL_MS);
            }
            if (Doorbell.isComplete(doorbell))
            {
                commandQueue.release(ticket);
            }
            else
            {
                commandQueue.abandon(ticket);
                System.err.println("driver " + node + ": NIC did not complete Delete_Process for " + registered.name());
            }
        }
        deregisterLocally(registered);
    }

    /** Steps 3-5: unmap (the process's own business), return the pages, free the entry. */
    private void deregisterLocally(final Registered registered)
    {
        final int entry = (int)layout.processEntryOffset(registered.index());
        sdram.putIntRelease(entry + ProcessTableLayout.PID_OFFSET, 0);
        allocator.freeAll(registered.index());
        registry.remove(registered.name(), node, registered.index());
        releaseProcessTableEntry(registered.index());
    }

    private synchronized int claimProcessTableEntry(final int osPid)
    {
        final int processes = params.maxProcessesPerNic();
        final int hint = (int)(hostLayout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_PROCESS_ENTRY_OFFSET);
        final int start = Math.floorMod(host.getInt(hint), processes);
        for (int i = 0; i < processes; i++)
        {
            final int index = (start + i) % processes;
            final int flag = (int)hostLayout.processFlagOffset(index);
            if (0 == host.getIntVolatile(flag))
            {
                host.putIntRelease(flag, osPid);
                host.putInt(hint, (index + 1) % processes);
                return index;
            }
        }
        return -1;
    }

    private synchronized void releaseProcessTableEntry(final int index)
    {
        host.putIntRelease((int)hostLayout.processFlagOffset(index), 0);
    }

    /** BUFFER_ALLOCATE: a buffer for DMA, not locked yet (thesis 3.6). */
    private void bufferAllocate(final DataOutputStream out, final Registered registered, final int length,
        final int firstPageOffset, final boolean contiguous) throws IOException
    {
        if (null == registered)
        {
            refuseUnregistered(out, "BUFFER_ALLOCATE");
            return;
        }
        try
        {
            writeBuffer(out, registered.memory().allocate(length, firstPageOffset, contiguous));
        }
        catch (final ProcessProtectionTable.Refusal ex)
        {
            fail(out, ex.code(), ex.getMessage());
        }
    }

    /** BUFFER_POOL: {@code qx_buffer_pool}, written into the process's VNI before the reply. */
    private void bufferPool(final DataOutputStream out, final Registered registered, final int pages) throws IOException
    {
        if (null == registered)
        {
            refuseUnregistered(out, "BUFFER_POOL");
            return;
        }
        try
        {
            writeBuffer(out, registered.memory().pool(pages));
        }
        catch (final ProcessProtectionTable.Refusal ex)
        {
            fail(out, ex.code(), ex.getMessage());
        }
    }

    /** BUFFER_LOCK / BUFFER_UNLOCK: {@code qx_buffer_lock} / {@code qx_buffer_unlock}, nested. */
    private void bufferLock(final DataOutputStream out, final Registered registered, final int regionId,
        final boolean lock) throws IOException
    {
        if (null == registered)
        {
            refuseUnregistered(out, lock ? "BUFFER_LOCK" : "BUFFER_UNLOCK");
            return;
        }
        try
        {
            final int lockCount = lock ? registered.memory().lock(regionId) : registered.memory().unlock(regionId);
            out.writeInt(DriverProtocol.LOCK_COUNT);
            out.writeInt(lockCount);
            out.flush();
        }
        catch (final ProcessProtectionTable.Refusal ex)
        {
            fail(out, ex.code(), ex.getMessage());
        }
    }

    /** BUFFER_FREE: the pages go back to the allocator and the NIC stops honouring them. */
    private void bufferFree(final DataOutputStream out, final Registered registered, final int regionId)
        throws IOException
    {
        if (null == registered)
        {
            refuseUnregistered(out, "BUFFER_FREE");
            return;
        }
        try
        {
            registered.memory().free(regionId);
            out.writeInt(DriverProtocol.OK);
            out.flush();
        }
        catch (final ProcessProtectionTable.Refusal ex)
        {
            fail(out, ex.code(), ex.getMessage());
        }
    }

    private static void writeBuffer(final DataOutputStream out, final ProcessProtectionTable.Entry entry)
        throws IOException
    {
        out.writeInt(DriverProtocol.BUFFER);
        out.writeInt(entry.id());
        out.writeInt(entry.pages());
        for (int i = 0; i < entry.pages(); i++)
        {
            out.writeLong(entry.address(i));
        }
        out.flush();
    }

    private static void refuseUnregistered(final DataOutputStream out, final String request) throws IOException
    {
        refuse(out, request + " needs a registered process: this connection has not completed qx_init " +
            "(Qnix.init), or has de-registered");
    }

    private void groupInfo(final DataOutputStream out, final int group) throws IOException
    {
        final List<PublishedTables.NameEntry> names = PublishedTables.names(sdram, layout);
        final PublishedTables.GroupEntry entry = PublishedTables.groups(sdram, layout).stream()
            .filter(g -> g.group() == group).findFirst().orElse(null);
        out.writeInt(DriverProtocol.GROUP_INFO);
        if (null == entry)
        {
            out.writeInt(0);
            out.writeInt(0);
            out.flush();
            return;
        }
        out.writeInt(entry.expectedSize());
        final List<ProcessName> members = new ArrayList<>(entry.members());
        members.sort((a, b) -> a.ai() != b.ai() ? Integer.compare(a.ai(), b.ai()) : Integer.compare(a.pi(), b.pi()));
        out.writeInt(members.size());
        for (final ProcessName member : members)
        {
            out.writeInt(member.ai());
            out.writeInt(member.pi());
            out.writeInt(names.stream().filter(n -> n.name().equals(member)).findFirst()
                .map(n -> n.node().packed()).orElse(-1));
        }
        out.flush();
    }

    public void close()
    {
        closed = true;
        try
        {
            if (null != server)
            {
                server.close();
            }
        }
        catch (final IOException ignore)
        {
        }
        connections.closeAll();
        try
        {
            Files.deleteIfExists(socketPath);
        }
        catch (final IOException ignore)
        {
        }
    }
}
