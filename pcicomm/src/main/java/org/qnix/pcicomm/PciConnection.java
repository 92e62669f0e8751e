package org.qnix.pcicomm;

import java.util.concurrent.TimeUnit;

import org.agrona.CloseHelper;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplResult;
import org.qnix.host.DoorbellWait;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.ConnectionRequest;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.ViplAddress;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;
import org.qnix.vipl.ViplNicDeadException;

/**
 * One PCIComm connection (seed 000, 5.1): made by {@link PciComm#listen} or {@link PciComm#connect},
 * it moves buffers both ways without copying them. The receiver preposts buffers
 * ({@link #prepostRecv}); they are exported to the peer, which fills them by RDMA write from the
 * buffers it sends ({@link #send}); {@link #recv} returns them filled, in preposting order, at their own
 * address, each with its actual length; {@link #sendRecycle} returns sent buffers in sending order
 * once their bytes are in the peer's memory. Buffers come from {@link #allocate}: DMA memory of the
 * node, registered once.
 *
 * <pre>{@code
 * // Receiver, on node 1-0:
 * try (PciConnection in = PciComm.listen("1-0", 7))
 * {
 *     in.awaitConnected(30_000);
 *     for (int i = 0; i < 4; i++) { in.prepostRecv(in.allocate(65536), 65536); }
 *     PciBuffer got = in.recv(10_000);           // the first preposted buffer, got.length() bytes filled
 *     consume(got.buffer(), got.length());
 *     in.prepostRecv(got, got.capacity());       // and again
 * }
 * // Sender, anywhere:
 * try (PciConnection out = PciComm.options().localNode("0-0").connect("1-0", 7))
 * {
 *     PciBuffer b = out.allocate(100_000);
 *     fill(b.buffer());
 *     out.send(b, 100_000);                      // spans two exported buffers of 64 KiB
 *     PciBuffer back = out.sendRecycle(10_000);  // b, once all 100 000 bytes landed
 *     out.disconnect();                          // CLOSING until the peer answered, then CLOSED
 * }
 * }</pre>
 *
 * <p>Progress: the connection's thread (the seed's "interrupt handler scheduling a thread", 5.4) sleeps
 * on the VI's completion queue and runs {@link PciCommDevice#doWork()} when the NIC completes
 * something, so exports, writes and credits move while the application does something else. Calls are
 * thread safe (one monitor). {@link #recv} and {@link #sendRecycle} first poll the connection
 * themselves, yielding, for the cluster's hot window ({@code cluster up --hot-us}), while the
 * connection's thread stays off the CQ, so that a message answered within the window costs no
 * wake-up; then they wait on the monitor. Every wait has a timeout, so nothing hangs: a peer that
 * dies or a NIC that stops ends every wait with an exception.
 *
 * <p>Errors: {@link PciCommException} with {@code NO_LISTENER} (connect), {@code CID_TAKEN} (listen),
 * {@code PEER_DISCONNECTED} (the peer disconnected: what it sent before is still received first),
 * {@code CONNECTION_LOST} (the peer died, or a NIC reported an error), {@code CLOSED}, {@code TIMEOUT}.
 */
public final class PciConnection implements AutoCloseable
{
    /** How long {@link #disconnect()} waits for the data in flight and the peer's answer. */
    public static final long DEFAULT_DISCONNECT_TIMEOUT_MS = 30_000;
    /**
     * The connection's thread looks at its flags at least this often while nothing completes. Each CQ
     * wait starts with the hot window's yields: every 100 ms, an idle connection kept its process at
     * 0.0065 cores, every second at 0.0025-0.003 (docs/performance/pcicomm-hot-poll.txt). A close
     * does not wait for it: the VI's disconnect flushes completions that end the wait at once.
     */
    private static final long IDLE_WAIT_MS = 1000;
    /** A listener waits for a request in slices this long, so that a close is seen. */
    private static final long ACCEPT_SLICE_MS = 200;
    private static final byte[] DISCRIMINATOR_PREFIX = {'P', 'C', 'I', 'C'};

    private final ViplNic nic;
    private final int cid;
    private final NicCoordinates listenerNode;
    private final Vi vi;
    private final CompletionQueue cq;
    private final BufferPool pool;
    private final PciCommDevice device;
    private final CidLock lock;
    private final Thread thread;
    private ConnectionState state;
    private NicCoordinates peer;
    private boolean closing;
    private boolean nicClosed;
    /** {@link #recv} and {@link #sendRecycle} poll for the cluster's hot window; the thread keeps off the CQ. */
    private final HotPoll hotPoll;
    /** Blocking calls' waits on the monitor, after their hot poll: each ends in a wake-up. */
    private long callerSleeps;

    private PciConnection(final ViplNic nic, final int cid, final NicCoordinates listenerNode, final int chunkBytes,
        final CidLock lock, final ConnectionState initial)
    {
        this.nic = nic;
        this.cid = cid;
        this.listenerNode = listenerNode;
        this.lock = lock;
        this.state = initial;
        final ProtectionTag ptag = nic.createPtag();
        final ViplMemory control = nic.allocate(ControlRegionLayout.LENGTH);
        final MemoryRegion controlRegion =
            nic.registerMem(control, 0, control.length(), new MemoryAttributes(ptag, false, false));
        this.cq = nic.createCq(ControlRegionLayout.CQ_ENTRIES);
        final int maxTransfer = nic.parameters().maxMessageBytes();
        // Reliable Reception: a write completes once its bytes are in the peer's memory, so a recycled
        // buffer's data has landed, and a completed DISCONNECT was received before the VI goes away.
        this.vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_RECEPTION, maxTransfer, ptag, true, false), cq, cq);
        this.pool = new BufferPool(nic, ptag, Math.min(chunkBytes, maxTransfer));
        this.device = new PciCommDevice(vi, cq, controlRegion, maxTransfer);
        device.postReceives();
        this.thread = new Thread(this::run, "pcicomm-" + listenerNode + "-cid-" + cid +
            (ConnectionState.LISTENING == initial ? "-listener" : "-client"));
        thread.setDaemon(true);
        this.hotPoll = new HotPoll(nic.parameters().hotUs(), IDLE_WAIT_MS, thread);
    }

    static PciConnection listen(final String cluster, final NicCoordinates node, final int cid, final int chunkBytes)
    {
        final CidLock lock = CidLock.acquire(org.qnix.abi.ClusterDirectory.of(cluster), node, cid);
        ViplNic nic = null;
        try
        {
            nic = open(node, cluster);
            final PciConnection connection = new PciConnection(nic, cid, node, chunkBytes, lock, ConnectionState.LISTENING);
            connection.thread.start();
            return connection;
        }
        catch (final ViplException ex)
        {
            CloseHelper.quietClose(nic);
            lock.release();
            throw new PciCommException(PciCommException.Reason.RESOURCE, "cannot listen on cid " + cid + " of node " +
                node + ": " + ex.getMessage(), ex);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(nic);
            lock.release();
            throw ex;
        }
    }

    static PciConnection connect(final String cluster, final NicCoordinates local, final NicCoordinates node,
        final int cid, final long timeoutMs, final int chunkBytes)
    {
        final ViplNic nic = open(local, cluster);
        final PciConnection connection;
        try
        {
            connection = new PciConnection(nic, cid, node, chunkBytes, null, ConnectionState.CONNECTING);
        }
        catch (final ViplException ex)
        {
            nic.close();
            throw new PciCommException(PciCommException.Reason.RESOURCE, "cannot make a connection on node " + local +
                ": " + ex.getMessage(), ex);
        }
        try
        {
            nic.connectRequest(connection.vi, new ViplAddress(node, discriminator(cid)), timeoutMs);
        }
        catch (final ViplException ex)
        {
            nic.close();
            if (ViplResult.TIMEOUT == ex.result() || ViplResult.REJECT == ex.result())
            {
                throw new PciCommException(PciCommException.Reason.NO_LISTENER, "nobody listens on cid " + cid +
                    " of node " + node + " (no answer in " + timeoutMs + " ms)", ex);
            }
            throw new PciCommException(PciCommException.Reason.RESOURCE, "cannot connect to cid " + cid + " of node " +
                node + ": " + ex.getMessage(), ex);
        }
        try
        {
            synchronized (connection)
            {
                connection.peer = node;
                connection.state = ConnectionState.CONNECTED;
                connection.device.connected();
                connection.work();
            }
        }
        catch (final RuntimeException ex)
        {
            // The caller never gets the connection, so nobody else would close its NIC.
            CloseHelper.quietClose(nic);
            throw ex;
        }
        connection.thread.start();
        return connection;
    }

    /** @return the discriminator of a cid: "PCIC" and the cid, little-endian, so no other VIPL user's collides. */
    static byte[] discriminator(final int cid)
    {
        final byte[] d = new byte[DISCRIMINATOR_PREFIX.length + Integer.BYTES];
        System.arraycopy(DISCRIMINATOR_PREFIX, 0, d, 0, DISCRIMINATOR_PREFIX.length);
        for (int i = 0; i < Integer.BYTES; i++)
        {
            d[DISCRIMINATOR_PREFIX.length + i] = (byte)(cid >>> (8 * i));
        }
        return d;
    }

    private static ViplNic open(final NicCoordinates node, final String cluster)
    {
        try
        {
            final ViplNic nic = org.qnix.vipl.Vipl.openNic(node.toString(), cluster);
            // A lost peer (its disconnect, or its death) shows in the VI's flushed descriptors, which end
            // the connection with PEER_DISCONNECTED or CONNECTION_LOST: the VIPL's line would repeat it.
            nic.onError(org.qnix.vipl.AsyncErrorHandler.DEFAULT.ignoring(org.qnix.vipl.AsyncError.Code.CONN_LOST));
            return nic;
        }
        catch (final ViplException ex)
        {
            throw new PciCommException(PciCommException.Reason.RESOURCE, "cannot open NIC " + node + " of cluster '" +
                cluster + "': " + ex.getMessage(), ex);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The API.
    // ---------------------------------------------------------------------------------------------

    public synchronized ConnectionState state()
    {
        return state;
    }

    /** @return the connection's cid: the VI connection's discriminator on the listener's node. */
    public int cid()
    {
        return cid;
    }

    /** @return this end's NIC. */
    public NicCoordinates node()
    {
        return nic.node();
    }

    /** @return the other end's NIC once connected, else null. */
    public synchronized NicCoordinates peer()
    {
        return peer;
    }

    /**
     * Waits until a listening connection is connected.
     *
     * @throws PciCommException TIMEOUT if no peer connected in time (still LISTENING), or why it ended.
     */
    public synchronized void awaitConnected(final long timeoutMs) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(checkedTimeout(timeoutMs));
        while (ConnectionState.LISTENING == state || ConnectionState.CONNECTING == state)
        {
            if (!waitUntil(deadline))
            {
                throw new PciCommException(PciCommException.Reason.TIMEOUT, "nobody connected to cid " + cid +
                    " of node " + listenerNode + " in " + timeoutMs + " ms");
            }
        }
        if (ConnectionState.CONNECTED != state && null == peer)
        {
            throw ended();
        }
    }

    /**
     * @return a buffer of at least {@code bytes} (up to the cluster's largest transfer), in DMA memory
     * registered for this connection; a freed buffer of the same size is reused.
     */
    public PciBuffer allocate(final int bytes)
    {
        synchronized (this)
        {
            if (nicClosed)
            {
                throw new PciCommException(PciCommException.Reason.CLOSED, "the connection was closed");
            }
        }
        return pool.allocate(bytes);
    }

    /**
     * {@code pcic_prepost_recv}: {@code buffer}'s first {@code length} bytes go under the library's
     * control, exported to the peer as (address, handle, length) to be filled; {@link #recv} returns it.
     * Allowed before the connection is connected (it is exported then), and while this end's
     * {@link #disconnect()} waits for the peer to export room for the data queued here (the peer may be
     * waiting for room too: a receive loop on another thread keeps it going). After the peer
     * disconnected it is accepted and does nothing, since nothing will fill the buffer: a receive loop
     * that preposts each buffer again ends at {@link #recv}'s {@code PEER_DISCONNECTED}, once the filled
     * ones are taken.
     *
     * @throws PciCommException RESOURCE if {@value RemoteExports#MAX_EXPORTS} buffers are preposted and
     * not filled yet, the most a peer takes: take filled ones back with {@link #recv} first.
     */
    public synchronized void prepostRecv(final PciBuffer buffer, final int length)
    {
        if (!nicClosed && device.peerClosed() && !device.closeRequested() && null == device.failure())
        {
            checkOwn(buffer, length);
            return;
        }
        // A disconnect waiting for room for its queued data: the peer may be in the same wait, for room from here.
        final boolean draining = ConnectionState.CLOSING == state && device.closeRequested() &&
            !device.disconnectPosted() && !isEnded();
        if (!draining)
        {
            checkOpen();
        }
        checkOwn(buffer, length);
        if (!device.canPrepost())
        {
            throw new PciCommException(PciCommException.Reason.RESOURCE, "cid " + cid + " has " +
                RemoteExports.MAX_EXPORTS + " buffers preposted and not filled, the most a peer takes");
        }
        device.prepost(buffer, length);
        work();
    }

    /**
     * {@code pcic_recv}, not blocking.
     *
     * @return the oldest preposted buffer once filled, with {@link PciBuffer#length()} the bytes the peer
     * wrote into it; null if it is not filled yet.
     * @throws PciCommException once the connection ended and every filled buffer was taken.
     */
    public synchronized PciBuffer tryRecv()
    {
        checkNotClosed();
        work();
        final PciBuffer filled = device.takeFilled();
        if (null == filled && isEnded())
        {
            throw ended();
        }
        return filled;
    }

    /**
     * {@code pcic_recv}: as {@link #tryRecv()}, waiting up to {@code timeoutMs}: polling, yielding, for
     * the cluster's hot window, then on the monitor. @return null on timeout.
     */
    public PciBuffer recv(final long timeoutMs) throws InterruptedException
    {
        return await(false, timeoutMs);
    }

    /**
     * {@code pcic_send}: {@code buffer}'s first {@code length} bytes are queued and written into the
     * peer's exported buffers in order, as they are exported; nothing is dropped. Returns at once; the
     * buffer comes back from {@link #sendRecycle}. Allowed before the connection is connected.
     */
    public synchronized void send(final PciBuffer buffer, final int length)
    {
        checkOpen();
        checkOwn(buffer, length);
        device.send(buffer, length);
        work();
    }

    /**
     * {@code pcic_send_recycle}, not blocking.
     *
     * @return the oldest sent buffer once all its bytes are in the peer's memory, or null.
     * @throws PciCommException if the connection ended and no sent buffer is left to recycle; its
     * message counts the sends that did not reach the peer (their buffers are back with the application).
     */
    public synchronized PciBuffer trySendRecycle()
    {
        checkNotClosed();
        work();
        final PciBuffer recycled = device.takeRecycled();
        if (null == recycled && isEnded())
        {
            throw ended();
        }
        return recycled;
    }

    /**
     * {@code pcic_send_recycle}: as {@link #trySendRecycle()}, waiting up to {@code timeoutMs} for the
     * peer to export room for what was sent. @return null on timeout, or at once if nothing is being sent.
     */
    public PciBuffer sendRecycle(final long timeoutMs) throws InterruptedException
    {
        return await(true, timeoutMs);
    }

    /** {@code pcic_disconnect} with {@link #DEFAULT_DISCONNECT_TIMEOUT_MS}. */
    public void disconnect() throws InterruptedException
    {
        disconnect(DEFAULT_DISCONNECT_TIMEOUT_MS);
    }

    /**
     * {@code pcic_disconnect}: CLOSING while the queued sends are written (as the peer exports room) and
     * the peer answers this end's DISCONNECT, then CLOSED: nothing is in flight either way. Buffers
     * already filled can still be taken with {@link #recv}. A listener not connected yet stops listening.
     * Nothing to do if the connection is CLOSED already (the peer disconnected first), unless data
     * queued here was left unwritten.
     *
     * @throws PciCommException TIMEOUT if the drain took longer (the connection is torn down anyway, the
     * bytes never written are counted in the message), CONNECTION_LOST if the peer died meanwhile, or
     * PEER_DISCONNECTED if the peer disconnected before the data queued here was written (it no longer
     * receives): the message counts those sends, whose buffers are back with the application.
     */
    public void disconnect(final long timeoutMs) throws InterruptedException
    {
        checkedTimeout(timeoutMs);
        synchronized (this)
        {
            if (ConnectionState.LISTENING == state || ConnectionState.CONNECTING == state && null == peer)
            {
                closing = true;
                state = ConnectionState.CLOSED;
                notifyAll();
                releaseCid();
                return;
            }
            if (ConnectionState.CLOSED == state)
            {
                throwIfUnsent();
                return;
            }
            state = ConnectionState.CLOSING;
            device.requestClose();
            work();
            final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (ConnectionState.CLOSED != state)
            {
                if (!waitUntil(deadline))
                {
                    final long unwritten = device.bytesNotWritten();
                    final String where = device.describe();
                    device.fail(PciCommException.Reason.TIMEOUT, "disconnect took over " + timeoutMs + " ms");
                    tearDown();
                    throw new PciCommException(PciCommException.Reason.TIMEOUT, "cid " + cid + ": the peer did not " +
                        (unwritten > 0 ? "export room for " + unwritten + " queued bytes" : "answer the disconnect") +
                        " in " + timeoutMs + " ms; the connection is closed (" + where + ")");
                }
            }
            final PciCommException failure = device.failure();
            if (null != failure && PciCommException.Reason.TIMEOUT != failure.reason())
            {
                throw new PciCommException(failure.reason(), "cid " + cid + ": " + failure.getMessage());
            }
            throwIfUnsent();
        }
    }

    /** The peer's DISCONNECT came before the data queued here was written: the close lost it, and says so. */
    private void throwIfUnsent()
    {
        final String unsent = device.unsent();
        if (null != unsent && null == device.failure())
        {
            throw new PciCommException(PciCommException.Reason.PEER_DISCONNECTED, "cid " + cid + ": the peer at " +
                peer + " disconnected; " + unsent);
        }
    }

    /**
     * Disconnects if still connected (errors ignored), ends the connection's thread and closes its NIC:
     * every buffer of it is freed, so none may be used after.
     */
    public void close()
    {
        try
        {
            disconnect(DEFAULT_DISCONNECT_TIMEOUT_MS);
        }
        catch (final PciCommException ex)
        {
            // Closing anyway: the NIC's close takes the VI down whatever its state.
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        synchronized (this)
        {
            closing = true;
            notifyAll();
        }
        try
        {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        synchronized (this)
        {
            nicClosed = true;
            releaseCid();
        }
        // Outside this monitor: the NIC's close waits for a connection wait holding the NIC's own.
        nic.close();
    }

    /**
     * What the connection moved: counts of its writes, control messages and buffers; and
     * {@code callerSleeps}, how often a {@link #recv} or {@link #sendRecycle} outlasted its hot poll and
     * slept on the monitor (each ends in a wake-up: a conversation that answers within the cluster's
     * hot window has none).
     */
    public record Statistics(long dataWrites, long dataBytesWritten, long buffersFilled, long bytesReceived,
        long controlMessagesSent, long controlBytesSent, long buffersExported, long creditMessagesSent,
        int registrations, long callerSleeps)
    {
    }

    public synchronized Statistics statistics()
    {
        final PciCommDevice.Statistics s = device.statistics();
        return new Statistics(s.dataWrites, s.dataBytesWritten, s.buffersFilled, s.bytesReceived, s.controlMessagesSent,
            s.controlBytesSent, s.buffersExported, s.creditMessagesSent, pool.registrations(), callerSleeps);
    }

    public String toString()
    {
        return "PciConnection[cid " + cid + ", " + nic.node() + (null == peer ? "" : " <-> " + peer) + ", " + state() + "]";
    }

    // ---------------------------------------------------------------------------------------------
    // The connection's thread.
    // ---------------------------------------------------------------------------------------------

    private void run()
    {
        if (!accepted())
        {
            return;
        }
        while (true)
        {
            final int work;
            synchronized (this)
            {
                if (closing || ConnectionState.CLOSED == state)
                {
                    return;
                }
                work = work();
            }
            if (0 == work)
            {
                if (hotPoll.awaitCallers())
                {
                    continue;
                }
                try
                {
                    // Null when nothing came: the loop looks at its flags again, allocating nothing.
                    cq.poll(IDLE_WAIT_MS, DoorbellWait.SLEEP);
                }
                catch (final ViplException ex)
                {
                    synchronized (this)
                    {
                        // ERROR_RESOURCE: the NIC stopped; INVALID_STATE: it was closed under us.
                        device.fail(PciCommException.Reason.CONNECTION_LOST, "the NIC ended the wait: " +
                            ex.getMessage());
                        tearDown();
                    }
                    return;
                }
            }
        }
    }

    /**
     * A listener's wait for a client, in slices so that a close is seen. @return true once connected,
     * CLOSING included: a client's thread starts connected, and its application may have called
     * {@link #disconnect()} before the thread first ran; that DISCONNECT's completion and the peer's
     * answer are taken by this thread only.
     */
    private boolean accepted()
    {
        final byte[] discriminator = discriminator(cid);
        while (true)
        {
            synchronized (this)
            {
                if (closing || ConnectionState.LISTENING != state && ConnectionState.CONNECTING != state)
                {
                    return !closing && (ConnectionState.CONNECTED == state || ConnectionState.CLOSING == state);
                }
                if (null != peer)
                {
                    return true;
                }
            }
            final ConnectionRequest request;
            try
            {
                request = nic.connectWait(discriminator, ACCEPT_SLICE_MS);
            }
            catch (final ViplException ex)
            {
                if (ViplResult.TIMEOUT == ex.result())
                {
                    continue;
                }
                synchronized (this)
                {
                    if (!closing)
                    {
                        device.fail(PciCommException.Reason.RESOURCE, "listening on cid " + cid + " failed: " +
                            ex.getMessage());
                        state = ConnectionState.CLOSED;
                        releaseCid();
                        notifyAll();
                    }
                }
                return false;
            }
            synchronized (this)
            {
                if (closing || ConnectionState.LISTENING != state)
                {
                    try
                    {
                        request.reject();
                    }
                    catch (final ViplException ex)
                    {
                        // The client withdrew meanwhile, or the NIC stopped: this end stops listening either
                        // way, and an exception here would only end the thread with a stack trace.
                    }
                    return false;
                }
                state = ConnectionState.CONNECTING;
            }
            try
            {
                request.accept(vi);
            }
            catch (final ViplException ex)
            {
                // The client went away or does not match: keep listening, unless disconnect() came meanwhile.
                synchronized (this)
                {
                    if (closing || ConnectionState.CONNECTING != state)
                    {
                        return false;
                    }
                    state = ConnectionState.LISTENING;
                }
                continue;
            }
            synchronized (this)
            {
                peer = request.remote().node();
                if (closing || ConnectionState.CONNECTING != state)
                {
                    // Disconnected while accepting: the client sees its connection lost.
                    state = ConnectionState.CLOSING;
                    tearDown();
                    return false;
                }
                state = ConnectionState.CONNECTED;
                device.connected();
                work();
                notifyAll();
            }
            return true;
        }
    }

    /** One step of the device, under this monitor; wakes the waiting callers if something moved. */
    private int work()
    {
        if (nicClosed)
        {
            return 0;
        }
        final int work;
        try
        {
            work = device.doWork();
        }
        catch (final ViplNicDeadException ex)
        {
            // A Done poll looked at the NIC and found it stopped: the same end as a CQ wait's in run().
            device.fail(PciCommException.Reason.CONNECTION_LOST, "the NIC stopped: " + ex.getMessage());
            tearDown();
            return 0;
        }
        if (ConnectionState.CONNECTED == state && (device.peerClosed() || null != device.failure()))
        {
            state = ConnectionState.CLOSING;
        }
        if (ConnectionState.CLOSING == state && (device.closed() || null != device.failure()))
        {
            tearDown();
        }
        if (work > 0)
        {
            notifyAll();
        }
        return work;
    }

    /** CLOSING drained, or the connection broke: the VI back to Idle, the cid free, CLOSED. */
    private void tearDown()
    {
        if (ConnectionState.CLOSED == state)
        {
            return;
        }
        try
        {
            vi.disconnect();
        }
        catch (final ViplException ex)
        {
            // The NIC is gone or the VI is Idle already: CLOSED either way.
        }
        device.handBackUnsent();
        state = ConnectionState.CLOSED;
        releaseCid();
        notifyAll();
    }

    private void releaseCid()
    {
        if (null != lock)
        {
            lock.release();
        }
    }

    private boolean isEnded()
    {
        return ConnectionState.CLOSED == state || null != device.failure() || device.peerClosed();
    }

    /** @return the exception for a call on an ended connection: why it ended. */
    private PciCommException ended()
    {
        final PciCommException failure = device.failure();
        if (null != failure && PciCommException.Reason.TIMEOUT != failure.reason())
        {
            return new PciCommException(failure.reason(), "cid " + cid + ": " + failure.getMessage());
        }
        final String unsent = device.unsent();
        if (device.peerClosed() && !device.closeRequested())
        {
            return new PciCommException(PciCommException.Reason.PEER_DISCONNECTED, "cid " + cid + ": the peer at " + peer +
                " disconnected; everything it sent before was received" + (null == unsent ? "" : "; " + unsent));
        }
        return new PciCommException(PciCommException.Reason.CLOSED, "cid " + cid + ": this end disconnected" +
            (null == unsent ? "" : "; " + unsent));
    }

    /** After {@link #close()} the buffers are unmapped: none may be handed out. */
    private void checkNotClosed()
    {
        if (nicClosed)
        {
            throw new PciCommException(PciCommException.Reason.CLOSED, "cid " + cid + ": the connection was closed");
        }
    }

    private void checkOpen()
    {
        if (nicClosed || isEnded() || ConnectionState.CLOSING == state)
        {
            throw ended();
        }
    }

    private void checkOwn(final PciBuffer buffer, final int length)
    {
        if (null == buffer || buffer.pool() != pool)
        {
            throw new IllegalArgumentException("the buffer is not this connection's: allocate it with allocate()");
        }
        if (PciBuffer.WITH_APPLICATION != buffer.owner)
        {
            throw new IllegalStateException(buffer + " is " + (PciBuffer.FREE == buffer.owner ? "freed" :
                "with the connection already (sent or preposted)"));
        }
        if (length < 1 || length > buffer.capacity())
        {
            throw new IllegalArgumentException("a length of " + length + " is outside [1, " + buffer.capacity() + "]");
        }
    }

    /**
     * The wait of {@link #recv} ({@code recycled} false) and {@link #sendRecycle} (true): looks, yielding
     * off the monitor, for the cluster's hot window, then sleeps on the monitor until the deadline.
     */
    /**
     * @return {@code timeoutMs}, a wait's timeout, once checked: 0 looks once, a long one waits that long.
     * @throws IllegalArgumentException for a negative one, which would otherwise wait for ever.
     */
    private static long checkedTimeout(final long timeoutMs)
    {
        if (timeoutMs < 0)
        {
            throw new IllegalArgumentException("a timeout of " + timeoutMs + " ms is negative");
        }
        return timeoutMs;
    }

    private PciBuffer await(final boolean recycled, final long timeoutMs) throws InterruptedException
    {
        final long start = System.nanoTime();
        final long deadline = start + TimeUnit.MILLISECONDS.toNanos(checkedTimeout(timeoutMs));
        final long hotUntil = hotPoll.start(start, deadline);
        while (true)
        {
            synchronized (this)
            {
                final PciBuffer taken = take(recycled);
                if (null != taken || !waitsFor(recycled))
                {
                    return taken;
                }
            }
            if (!HotPoll.yieldUntil(hotUntil))
            {
                break;
            }
        }
        hotPoll.end();
        synchronized (this)
        {
            while (true)
            {
                final PciBuffer taken = take(recycled);
                if (null != taken || !waitsFor(recycled) || !sleepUntil(deadline))
                {
                    return taken;
                }
            }
        }
    }

    /** One look of {@link #await}, under this monitor. */
    private PciBuffer take(final boolean recycled)
    {
        return recycled ? trySendRecycle() : tryRecv();
    }

    /** @return false if nothing can come: a {@link #sendRecycle} with nothing being sent returns at once. */
    private boolean waitsFor(final boolean recycled)
    {
        return !recycled || device.sending();
    }

    /** {@link #waitUntil}, counted in {@link Statistics#callerSleeps()}. */
    private boolean sleepUntil(final long deadline) throws InterruptedException
    {
        if (deadline - System.nanoTime() <= 0)
        {
            return false;
        }
        callerSleeps++;
        return waitUntil(deadline);
    }

    /** @return false once {@code deadline} passed; else waited once on this monitor. */
    private boolean waitUntil(final long deadline) throws InterruptedException
    {
        final long left = deadline - System.nanoTime();
        if (left <= 0)
        {
            return false;
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
        return true;
    }
}
