package org.qnix.vipl;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

import org.agrona.CloseHelper;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.FileDescriptorBlock;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicProcessor;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.ViplResult;
import org.qnix.host.BufferRegion;
import org.qnix.host.DoorbellWaiter;
import org.qnix.host.DriverException;
import org.qnix.host.DriverProxy;
import org.qnix.host.HostMemoryException;
import org.qnix.host.HostMemoryMapping;
import org.qnix.host.MappedViews;
import org.qnix.host.ProcessMappings;
import org.qnix.host.RetiredMemory;
import org.qnix.host.ViaDriverException;
import org.qnix.host.ViaRegistration;

/**
 * An opened NIC ({@code VipOpenNic}): this process registered as a VIA process with the node's driver,
 * VIA's kernel agent, on a driver connection of its own (so the same JVM may also hold a
 * {@code Qnix}). Every resource call is a driver request that the driver checks (owner, ptag, ranges,
 * limits) before it writes the NIC's tables; a refusal is a {@link ViplException} with VIPL's code.
 * {@link #close()} ({@code VipCloseNic}) releases everything the NIC holds for the process, as the
 * process's death would.
 *
 * <pre>{@code
 * try (ViplNic nic = Vipl.openNic("0-0"))
 * {
 *     NicAttributes attributes = nic.query();
 *     ProtectionTag ptag = nic.createPtag();
 *     ViplMemory memory = nic.allocate(8192);
 *     MemoryRegion region = nic.registerMem(memory, 0, 8192, new MemoryAttributes(ptag, true, false));
 *     memory.close();     // ViplException INVALID_STATE: registered memory is not freed
 * }
 * }</pre>
 *
 * <p>Thread safe: the calls are serialised on this object, as the driver socket is one stream, but for
 * the data path's (posts, polls and waits of {@link Vi} and {@link CompletionQueue}), which do not take
 * its monitor, and {@link #close()}, which ends a connection wait of another thread rather than wait
 * behind it.
 */
public final class ViplNic implements AutoCloseable
{
    /** VIPL 1.0, as VIP_NIC_ATTRIBUTES' ProviderVersion. */
    public static final int PROVIDER_VERSION = 0x0001_0000;
    private static final long OPEN_TIMEOUT_MS = 30_000;

    private final NicCoordinates node;
    private final String clusterName;
    private final ClusterParameters params;
    private final Path hostMemory;
    private final DriverProxy driver;
    private final ViaRegistration registration;
    private final MappedFile structures;
    /** The VNI (its Command Queue), Host Process Structures (Tail, Head), control page, NIC's wake-up line. */
    private final ProcessMappings mappings;
    /** The posts and waits, and the guard a close ends them with. */
    private final ViplDataPath dataPath;
    private final Int2ObjectHashMap<Vi> vis = new Int2ObjectHashMap<>();
    private final List<ViplMemory> memories = new ArrayList<>();
    private final List<CompletionQueue> cqs = new ArrayList<>();
    /** CQs by their index in the NIC's CQ table, guarded by {@link #vis} as VIs are. */
    private final Int2ObjectHashMap<CompletionQueue> cqsByIndex = new Int2ObjectHashMap<>();
    /** The async-event ring's reader and its daemon thread (VipErrorCallback). */
    private final AsyncEvents events;
    private final Thread eventsThread;
    /** Set first by {@link #close()}, without this object's monitor: every later call refuses. */
    private volatile boolean closed;
    /** Set by the close that releases the resources, under this object's monitor. */
    private boolean released;
    /** The connection calls; the waits among them (connectWait, connectRequest, connectPeerOutcome) a close ends. */
    private final ViplConnections connections;
    /** This process runs on or off the NICs' CPU, as its driver advised or moved it, while the NIC is open. */
    private final NicProcessor.Placement cpuPlacement;
    /** VipNSGetHostByName, VipNSGetHostByAddr, VipQuerySystemManagementInfo: the cluster's names. */
    private final ViplNameService names;

    private ViplNic(final NicCoordinates node, final String clusterName, final ClusterParameters params,
        final Path hostMemory, final DriverProxy driver, final ViaRegistration registration, final MappedFile structures,
        final ProcessMappings mappings, final NicProcessor.Placement cpuPlacement)
    {
        this.cpuPlacement = cpuPlacement;
        this.mappings = mappings;
        this.dataPath = new ViplDataPath(node, clusterName, params, mappings);
        this.node = node;
        this.clusterName = clusterName;
        this.params = params;
        this.names = new ViplNameService(clusterName, params);
        this.hostMemory = hostMemory;
        this.driver = driver;
        this.registration = registration;
        this.structures = structures;
        this.connections = new ViplConnections(this, driver, structures);
        this.events = new AsyncEvents(this, structures.buffer(),
            new DoorbellWaiter(structures.buffer(), dataPath.heartbeat(), dataPath.guard(), 0));
        this.eventsThread = new Thread(events, "vipl-errors-" + node);
        eventsThread.setDaemon(true);
    }

    static ViplNic open(final NicCoordinates node, final String clusterName)
    {
        final ClusterDirectory dir = ClusterDirectory.of(clusterName);
        final ClusterProperties props = ClusterProperties.read(dir.propertiesFile()).orElseThrow(() ->
            new ViplException(ViplResult.INVALID_PARAMETER, "no QNIX cluster '" + clusterName + "' at " + dir.path()));
        if (!ClusterProperties.STATE_UP.equals(props.state()))
        {
            throw new ViplException(ViplResult.ERROR_RESOURCE, "cluster '" + clusterName + "' is " + props.state() +
                ", not up");
        }
        final ClusterParameters params;
        try
        {
            params = props.parameters();
        }
        catch (final IllegalStateException ex)
        {
            throw new ViplException(ViplResult.ERROR_RESOURCE, "cluster '" + clusterName + "': " + ex.getMessage());
        }
        if (!params.hasNode(node))
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "no NIC " + node + " in the " + params.torus() +
                " torus of cluster '" + clusterName + "'");
        }
        final DriverProxy driver;
        try
        {
            driver = DriverProxy.connect(dir.driverSocket(node), OPEN_TIMEOUT_MS, "the driver of node " + node);
        }
        catch (final DriverException ex)
        {
            throw new ViplException(ViplResult.ERROR_RESOURCE, "cannot reach the driver of node " + node +
                ": is cluster '" + clusterName + "' up?", ex);
        }
        try
        {
            final ViaRegistration registration = driver.viaRegister(OPEN_TIMEOUT_MS);
            MappedFile structures = null;
            ProcessMappings mappings = null;
            NicProcessor.Placement placement = null;
            try
            {
                structures = MappedFile.mapExisting(dir.hostMemory(node), registration.structuresAddress(),
                    (long)registration.structuresPages() * params.pageSize());
                // Posts go through the VNI's Command Queue, as QNIX commands do (issue 14).
                mappings = ProcessMappings.map(dir, params, node, clusterName, registration.vniAddress(),
                    registration.vniLength(), registration.hpsAddress());
                placement = NicProcessor.place(props.nicCpu(), registration.onNicCpu(), "vipl");
                final ViplNic nic = new ViplNic(node, clusterName, params, dir.hostMemory(node), driver, registration,
                    structures, mappings, placement);
                nic.eventsThread.start();
                return nic;
            }
            catch (final UncheckedIOException ex)
            {
                CloseHelper.closeAll(structures, mappings, placement);
                // The driver answered, then the node's files went: the cluster was taken down meanwhile.
                throw new ViplException(ViplResult.ERROR_RESOURCE, "registered with the driver of node " + node +
                    ", then " + ex.getMessage() + ": is cluster '" + clusterName + "' still up?", ex);
            }
            catch (final RuntimeException ex)
            {
                // Nothing mapped so far outlives a failed open, and the process gets its CPUs back.
                CloseHelper.closeAll(structures, mappings, placement);
                throw ex;
            }
        }
        catch (final DriverException ex)
        {
            driver.close();
            throw ViplException.of(ex);
        }
        catch (final RuntimeException ex)
        {
            driver.close();
            throw ex;
        }
    }

    /**
     * @return the NIC's torus coordinates.
     *
     * <pre>{@code
     * ViplAddress server = new ViplAddress(nic.node(), "echo".getBytes(US_ASCII));
     * }</pre>
     */
    public NicCoordinates node()
    {
        return node;
    }

    /**
     * {@code VipQueryNic}: every attribute of {@code VIP_NIC_ATTRIBUTES} (VIPL.md's list), from the
     * cluster's parameters and the NIC's table sizes.
     *
     * <pre>{@code
     * NicAttributes a = nic.query();
     * Descriptor[] window = new Descriptor[Math.min(64, a.maxDescriptorsPerQueue())];
     * }</pre>
     */
    public NicAttributes query()
    {
        final ViaTablesLayout via = new NicSdramLayout(params).via();
        final long hostPages = params.hostMemoryBytes() / params.pageSize();
        return new NicAttributes(node.toString(), FileDescriptorBlock.LAYOUT_VERSION, PROVIDER_VERSION,
            new byte[] {(byte)node.x(), (byte)node.y()}, true, ViaTablesLayout.MAX_DISCRIMINATOR_BYTES,
            hostPages * params.pageSize(), via.regionEntries(), params.maxMessageBytes(),
            Math.min(ViaTablesLayout.MAX_VIS_PER_PROCESS, via.viEntries()), ViaTablesLayout.MAX_DESCRIPTORS_PER_QUEUE,
            ViplDescriptor.MAX_SEGMENTS, via.cqEntries(), ViaTablesLayout.MAX_CQ_ENTRIES, params.maxMessageBytes(),
            params.pageSize(), ViaTablesLayout.MAX_PTAGS_PER_PROCESS, EnumSet.allOf(Reliability.class),
            EnumSet.of(Reliability.RELIABLE_DELIVERY, Reliability.RELIABLE_RECEPTION));
    }

    /**
     * @return true once {@link #close()} began: every call on the NIC and its resources refuses from then
     * on, and the resources are released by the time that close returns.
     *
     * <pre>{@code
     * if (!nic.isClosed()) { nic.close(); }
     * }</pre>
     */
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * @return the cluster's parameters.
     *
     * <pre>{@code
     * int page = nic.parameters().pageSize();
     * }</pre>
     */
    public ClusterParameters parameters()
    {
        return params;
    }

    /**
     * {@code VipCreatePtag}: a protection tag of this process; regions and VIs of one ptag only work
     * together. At most {@code MaxPtags}.
     *
     * <pre>{@code
     * ProtectionTag ptag = nic.createPtag();
     * }</pre>
     */
    public synchronized ProtectionTag createPtag()
    {
        ensureOpen();
        try
        {
            return new ProtectionTag(this, driver.viaCreatePtag());
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    /**
     * Memory for descriptors and data, {@code bytes} long (at most {@code maxRegisterBlockBytes}), page
     * aligned, from the node's DMA memory. {@link ViplMemory#close()} frees it (refused while registered).
     *
     * <pre>{@code
     * ViplMemory memory = nic.allocate(64 * 1024);
     * }</pre>
     */
    public synchronized ViplMemory allocate(final int bytes)
    {
        ensureOpen();
        if (bytes < 1 || bytes > params.maxMessageBytes())
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "memory of " + bytes + " bytes is outside [1, " +
                params.maxMessageBytes() + "]");
        }
        final int pageSize = params.pageSize();
        final int pages = (bytes + pageSize - 1) / pageSize;
        final BufferRegion region;
        try
        {
            region = driver.allocateBuffer(bytes, 0, true, pages);
        }
        catch (final DriverException ex)
        {
            throw new ViplException(ViplResult.ERROR_RESOURCE, ex.getMessage(), ex);
        }
        final HostMemoryMapping mapping;
        try
        {
            mapping = HostMemoryMapping.map(hostMemory, region.pages(), pageSize);
        }
        catch (final HostMemoryException | IllegalArgumentException ex)
        {
            driver.freeBuffer(region.id());
            throw new ViplException(ViplResult.ERROR_RESOURCE, ex.getMessage(), ex);
        }
        final ViplMemory memory = new ViplMemory(this, region.id(), bytes, region.pages(),
            new MappedViews(mapping, 0, bytes));
        memories.add(memory);
        return memory;
    }

    /**
     * {@code VipRegisterMem}: bytes {@code [offset, offset + length)} of {@code memory}, locked while
     * registered. The same range may be registered again (another handle).
     *
     * <pre>{@code
     * MemoryRegion region = nic.registerMem(memory, 0, memory.length(), new MemoryAttributes(ptag, true, false));
     * }</pre>
     */
    public synchronized MemoryRegion registerMem(final ViplMemory memory, final long offset, final long length,
        final MemoryAttributes attributes)
    {
        ensureOpen();
        if (null == memory || memory.isClosed() || !memories.contains(memory))
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "the memory is not this NIC's, or was freed");
        }
        checkOwn(attributes.ptag());
        try
        {
            final int handle = driver.viaRegisterMem(memory.allocation(), offset, length, attributes.ptag().value(),
                attributesOf(attributes.enableRdmaWrite(), attributes.enableRdmaRead()));
            memory.registered(1);
            return new MemoryRegion(this, memory, offset, length, handle, attributes);
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    /**
     * {@code VipCreateCQ}: a completion queue of {@code entries} (1 .. {@code MaxCQEntries}).
     *
     * <pre>{@code
     * CompletionQueue cq = nic.createCq(256);
     * }</pre>
     */
    public synchronized CompletionQueue createCq(final int entries)
    {
        ensureOpen();
        checkCqEntries(entries);
        final int pages = CqRingLayout.pages(entries, params.pageSize());
        final BufferRegion ring;
        try
        {
            ring = driver.viaCreateCq(entries, pages);
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
        final HostMemoryMapping mapping;
        try
        {
            mapping = HostMemoryMapping.map(hostMemory, ring.pages(), params.pageSize());
        }
        catch (final HostMemoryException | IllegalArgumentException ex)
        {
            driver.viaDestroyCq(ring.id());
            throw new ViplException(ViplResult.ERROR_RESOURCE, ex.getMessage(), ex);
        }
        final CompletionQueue cq = new CompletionQueue(this, ring.id(), entries,
            new MappedViews(mapping, 0, CqRingLayout.length(entries)));
        cqs.add(cq);
        synchronized (vis)
        {
            cqsByIndex.put(cq.index(), cq);
        }
        return cq;
    }

    /**
     * {@code VipCreateVi}, Idle; either CQ may be null (that queue reports to no CQ).
     *
     * <pre>{@code
     * Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, 65536, ptag, false, false), null, cq);
     * }</pre>
     */
    public synchronized Vi createVi(final ViAttributes attributes, final CompletionQueue sendCq,
        final CompletionQueue receiveCq)
    {
        ensureOpen();
        checkOwn(attributes.ptag());
        final int send = cqIndex(sendCq);
        final int receive = cqIndex(receiveCq);
        try
        {
            final long created = driver.viaCreateVi(attributes.ptag().value(),
                attributesOf(attributes.enableRdmaWrite(), attributes.enableRdmaRead()), attributes.reliability().code(),
                attributes.maxTransferSize(), send, receive);
            final Vi vi = new Vi(this, (int)(created >>> 32), (int)created, attributes, sendCq, receiveCq);
            synchronized (vis)
            {
                vis.put(vi.index(), vi);
            }
            return vi;
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    /**
     * {@code VipConnectWait}: waits up to {@code timeoutMs} for a client's request to this NIC and
     * {@code discriminator} ({@code TIMEOUT} if none comes; {@link ViplNicDeadException} if the NIC
     * stops meanwhile; {@code INVALID_STATE} if another thread closes the NIC meanwhile;
     * {@code INVALID_PARAMETER} if a process of another uid uses this address: it is the uid's whose
     * process first waited on it, or named it in a peer request, until that uid's last such process
     * closes its NIC). The wait holds
     * this NIC's driver connection: other calls on this {@code ViplNic} wait for it, but for
     * {@link #close()}, which ends it.
     *
     * <pre>{@code
     * ConnectionRequest request = nic.connectWait("echo".getBytes(US_ASCII), 10_000);
     * request.accept(vi);
     * }</pre>
     */
    public synchronized ConnectionRequest connectWait(final byte[] discriminator, final long timeoutMs)
    {
        return connections.connectWait(discriminator, ViplException.checkedTimeout(timeoutMs));
    }

    /**
     * {@code VipConnectRequest}: asks the server at {@code remote} to connect {@code vi}, Idle, and waits
     * up to {@code timeoutMs}: Connected, with the server's end, or {@code REJECT}, {@code TIMEOUT},
     * {@code INVALID_RELIABILITY_LEVEL}, {@code INVALID_MTU}, {@code INVALID_STATE} (not Idle);
     * {@link ViplNicDeadException} as soon as this NIC stops meanwhile (the VI Idle again). The VI is
     * Connect Pending while it waits. The wait holds this NIC's driver connection; a {@link #close()} from
     * another thread ends it ({@code INVALID_STATE}).
     *
     * <pre>{@code
     * RemoteVi server = nic.connectRequest(vi, new ViplAddress(NicCoordinates.parse("1-0"), "echo".getBytes(US_ASCII)), 10_000);
     * }</pre>
     */
    public synchronized RemoteVi connectRequest(final Vi vi, final ViplAddress remote, final long timeoutMs)
    {
        return connections.connectRequest(vi, remote, ViplException.checkedTimeout(timeoutMs));
    }

    /**
     * {@code VipConnectPeerRequest}: asks for a connection of {@code vi}, Idle, with the VI whose own
     * request names this NIC and {@code localDiscriminator} as its remote address and {@code remote} as
     * its local one. Returns at once, the VI Connect Pending; {@link Vi#connectPeerDone()} and
     * {@link Vi#connectPeerWait()} take the outcome, which is TIMEOUT once {@code timeoutMs} passed
     * unmatched. {@code INVALID_PARAMETER} if a process of another uid uses this NIC and
     * {@code localDiscriminator} as its address (see {@link #connectWait}).
     *
     * <pre>{@code
     * nic.connectPeerRequest(vi, "left".getBytes(US_ASCII), new ViplAddress(NicCoordinates.parse("1-0"), "right".getBytes(US_ASCII)), 10_000);
     * RemoteVi peer = vi.connectPeerWait();
     * }</pre>
     */
    public synchronized void connectPeerRequest(final Vi vi, final byte[] localDiscriminator, final ViplAddress remote,
        final long timeoutMs)
    {
        connections.connectPeerRequest(vi, localDiscriminator, remote, ViplException.checkedTimeout(timeoutMs));
    }

    /**
     * {@code VipErrorCallback}: {@code handler} gets every asynchronous error from now on (a connection
     * lost, a CQ overflow, a descriptor the NIC could not read, the NIC's own death), one at a time, on
     * the NIC's async-error thread. Null, or {@link AsyncErrorHandler#DEFAULT}, prints one line to
     * standard error, as VIPL's default handler does, and is what a NIC starts with.
     *
     * <pre>{@code
     * nic.onError(error ->
     * {
     *     if (AsyncError.Code.CONN_LOST == error.code()) { lost.add(error.vi()); }
     *     else { System.err.println(error.describe()); }
     * });
     * }</pre>
     */
    public void onError(final AsyncErrorHandler handler)
    {
        events.handler(handler);
    }

    /**
     * {@code VipNSGetHostByName}: the network address of a node of this cluster, by its name,
     * {@code "X-Y"} or {@code "node-X-Y"} (the cluster's node names), with an empty discriminator.
     *
     * <pre>{@code
     * ViplAddress server = nic.hostByName("node-1-0");
     * ViplAddress echo = new ViplAddress(server.node(), "echo".getBytes(US_ASCII));
     * }</pre>
     *
     * @throws ViplException {@code ERROR_NAMESERVICE} for a name that is no node of the cluster.
     */
    public ViplAddress hostByName(final String name)
    {
        return names.hostByName(name);
    }

    /**
     * {@code VipNSGetHostByAddr}: the name of the node with a network address ({@code "node-X-Y"});
     * the discriminator plays no part.
     *
     * <pre>{@code
     * String peer = nic.hostByAddress(new ViplAddress(request.remote().node(), new byte[0]));   // "node-0-0"
     * }</pre>
     *
     * @throws ViplException {@code ERROR_NAMESERVICE} for an address of no node of the cluster.
     */
    public String hostByAddress(final ViplAddress address)
    {
        return names.hostByAddress(address);
    }

    /**
     * {@code VipQuerySystemManagementInfo} for auto-discovery ({@code VIP_SMI_AUTODISCOVERY}): the
     * network addresses of the NICs this NIC reaches, which on the torus is every NIC of the cluster's
     * topology, this one included (a VI may connect to another of its own node), row by row from
     * {@code 0-0}, each with an empty discriminator as {@link #hostByName} gives it and named
     * {@code "node-X-Y"} by {@link #hostByAddress}. The list is the topology's, not a liveness probe: a
     * NIC whose firmware stopped is still on it (a connection to it then waits for its timeout).
     *
     * <pre>{@code
     * for (ViplAddress host : nic.querySystemManagementInfo())
     * {
     *     System.out.println(nic.hostByAddress(host));                      // node-0-0, node-1-0, ...
     * }
     * ViplAddress echo = new ViplAddress(nic.querySystemManagementInfo().get(1).node(), "echo".getBytes(US_ASCII));
     * }</pre>
     *
     * @return the addresses, unmodifiable, in the order of the nodes' indices ({@code y * width + x}).
     */
    public List<ViplAddress> querySystemManagementInfo()
    {
        return names.hosts();
    }

    /**
     * {@code VipCloseNic}: the driver takes every VI, region and CQ out of the NIC's tables and frees the
     * memory. Waits, polls and posts in other threads end ({@code INVALID_STATE}), connection waits in
     * the driver included, and so does every later call on the NIC and its resources; pending
     * notifications are not called; the async-error thread ends. Safe from any thread, and idempotent.
     *
     * <pre>{@code
     * ViplNic nic = Vipl.openNic("0-0");
     * try { ... } finally { nic.close(); }
     * }</pre>
     */
    public void close()
    {
        beginClose();
        release();
    }

    /**
     * The part of {@link #close()} that must not wait for this object's monitor: a connection wait holds
     * it for up to its timeout, and ends only when the driver ends it.
     */
    private void beginClose()
    {
        closed = true;
        // Waits end (CLOSED) before anything they read is unmapped; the sleepers are woken to see it.
        if (dataPath.beginClose())
        {
            wakeSleepers();
        }
        if (!connections.endWaits())
        {
            // A driver that does not look (stopped, or stuck) is left: the connection is closed under the
            // wait. The driver de-registers the process when it sees that, and, the connection failing in
            // the middle of a request with the process alive, keeps its pages from others until it exits
            // (LingeringProcesses). What the library itself reads and writes is retired first all the same
            // (memory and CQ rings follow in release(), once the connection wait has left the monitor).
            RetiredMemory.retire(structures, false);
            mappings.retire(false);
            driver.close();
        }
    }

    /** The rest of {@link #close()}, once, under this object's monitor: after a connection wait left it. */
    private synchronized void release()
    {
        if (released)
        {
            return;
        }
        released = true;
        final boolean quiescent = dataPath.quiesce();
        // Retired, not unmapped (RetiredMemory), and before the driver de-registers the process, which
        // frees the pages: a call still inside reads zeros, never an unmapped page or the next owner's.
        for (final ViplMemory memory : memories)
        {
            memory.unmap();
        }
        memories.clear();
        for (final CompletionQueue cq : cqs)
        {
            cq.unmap();
        }
        cqs.clear();
        synchronized (vis)
        {
            vis.clear();
            cqsByIndex.clear();
        }
        connections.retireStructures(quiescent);
        mappings.retire(quiescent);
        driver.deregister();
        driver.close();
        cpuPlacement.close();
        if (Thread.currentThread() != eventsThread)
        {
            try
            {
                // It left the guard already; a handler of its may still run (and wait for this monitor).
                eventsThread.join(100);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Ends the waits of every VI and CQ, which look at guards of their own, and wakes their sleepers. */
    private void wakeSleepers()
    {
        new DoorbellWaiter(structures.buffer(), dataPath.heartbeat(), dataPath.guard())
            .wakeAll(ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET);
        // Not this object's monitor, which a connection wait may hold: VIs and CQs are both kept under vis.
        synchronized (vis)
        {
            vis.values().forEach(Vi::endWaits);
            cqsByIndex.values().forEach(CompletionQueue::endWaits);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // What the VIs, CQs and async-event reader reach without this object's monitor (a connection
    // wait holds it): the data path (ViplDataPath), and the VIs and CQs by table index.
    // ---------------------------------------------------------------------------------------------

    UnsafeBuffer structures()
    {
        return structures.buffer();
    }

    /** @return the posts and waits of this NIC's VIs and CQs, and the guard its close ends them with. */
    ViplDataPath dataPath()
    {
        return dataPath;
    }

    /** @return the CQ of this NIC with table index {@code index}, or null. */
    CompletionQueue cqOfIndex(final int index)
    {
        synchronized (vis)
        {
            return cqsByIndex.get(index);
        }
    }

    /** @return the VI of this NIC with table index {@code index}, or null (a CQ entry names VIs so). */
    Vi viOfIndex(final int index)
    {
        synchronized (vis)
        {
            return vis.get(index);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The resources' own calls, with this object's monitor held.
    // ---------------------------------------------------------------------------------------------

    void destroyPtag(final ProtectionTag ptag)
    {
        ensureOpen();
        try
        {
            driver.viaDestroyPtag(ptag.value());
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    void free(final ViplMemory memory)
    {
        ensureOpen();
        if (memory.registrations() > 0)
        {
            throw new ViplException(ViplResult.INVALID_STATE, "the memory is registered as " + memory.registrations() +
                " memory region(s): deregister them before freeing it");
        }
        // Unmapped before the driver frees the pages: they may belong to another process right after.
        memory.unmap();
        memories.remove(memory);
        try
        {
            driver.freeBuffer(memory.allocation());
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    void deregisterMem(final MemoryRegion region)
    {
        ensureOpen();
        try
        {
            driver.viaDeregisterMem(region.handle());
            region.memory().registered(-1);
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    void setMemAttributes(final MemoryRegion region, final MemoryAttributes attributes)
    {
        ensureOpen();
        if (region.isClosed())
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "the region was deregistered");
        }
        checkOwn(attributes.ptag());
        try
        {
            driver.viaSetMemAttributes(region.handle(), attributes.ptag().value(),
                attributesOf(attributes.enableRdmaWrite(), attributes.enableRdmaRead()));
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    /**
     * {@code VipResizeCQ}'s driver call (the NIC moves the queued entries to a new ring) and the new
     * ring's mapping. Called with {@code cq}'s monitor held and never this NIC's: {@link #close()}
     * takes them the other way round.
     *
     * @throws ViplException {@code INVALID_STATE} if the NIC may have taken up a ring this process
     *                       cannot use ({@link ViplNicDeadException} if the NIC stopped): the CQ is lost.
     */
    MappedViews resizeCq(final CompletionQueue cq, final int entries)
    {
        ensureOpen();
        checkCqEntries(entries);
        final BufferRegion ring;
        try
        {
            ring = driver.viaResizeCq(cq.index(), entries, CqRingLayout.pages(entries, params.pageSize()));
        }
        catch (final DriverException ex)
        {
            final ViplException failed = ViplException.of(ex);
            final ViplException stopped = ViplResult.INVALID_STATE == failed.result() ? dataPath.stoppedOrClosed() : null;
            if (null != stopped)
            {
                throw stopped;
            }
            if (!(ex instanceof ViaDriverException))
            {
                // Not the driver's refusal but no (valid) answer: a daemon that died or answered too late
                // may have had the NIC move the CQ already, so the ring this process reads is not known.
                throw new ViplException(ViplResult.INVALID_STATE, "no answer from the driver to the resize of " +
                    cq + " (" + ex.getMessage() + "): the NIC may have moved it; destroy the CQ", ex);
            }
            throw failed;
        }
        if (closed)
        {
            throw new ViplException(ViplResult.INVALID_STATE, "NIC " + node + " was closed during the resize of " + cq);
        }
        try
        {
            return new MappedViews(HostMemoryMapping.map(hostMemory, ring.pages(), params.pageSize()), 0,
                CqRingLayout.length(entries));
        }
        catch (final HostMemoryException | IllegalArgumentException ex)
        {
            throw new ViplException(ViplResult.INVALID_STATE, "the NIC moved " + cq + " to a ring this process " +
                "cannot map (" + ex.getMessage() + "): destroy the CQ", ex);
        }
    }

    /** @throws ViplException {@code INVALID_PARAMETER} unless 1 <= entries <= {@code MaxCQEntries}. */
    private static void checkCqEntries(final int entries)
    {
        if (entries < 1 || entries > ViaTablesLayout.MAX_CQ_ENTRIES)
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "a completion queue of " + entries +
                " entries is outside [1, " + ViaTablesLayout.MAX_CQ_ENTRIES + "]");
        }
    }

    void destroyCq(final CompletionQueue cq)
    {
        ensureOpen();
        synchronized (vis)
        {
            for (final Vi vi : vis.values())
            {
                if (cq == vi.sendCq() || cq == vi.receiveCq())
                {
                    // The driver's own refusal, given before the CQ's waits are ended for a destroy that fails.
                    throw new ViplException(ViplResult.ERROR_RESOURCE, cq + " has a queue of " + vi +
                        " attached: destroy the VI first");
                }
            }
        }
        // Its waits end before the driver gives the ring's pages back: they may be another process's next.
        cq.endWaitsAndAwaitThem();
        try
        {
            driver.viaDestroyCq(cq.index());
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
        cqs.remove(cq);
        synchronized (vis)
        {
            cqsByIndex.remove(cq.index());
        }
        cq.unmap();
    }

    void destroyVi(final Vi vi)
    {
        ensureOpen();
        try
        {
            driver.viaDestroyVi(vi.index());
            synchronized (vis)
            {
                vis.remove(vi.index());
            }
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    synchronized void accept(final ConnectionRequest request, final Vi vi)
    {
        connections.accept(request, vi);
    }

    synchronized void reject(final ConnectionRequest request)
    {
        connections.reject(request);
    }

    /** @return the outcome of the VI's peer request: SUCCESS (connected), NOT_DONE, or why it failed. */
    synchronized ViplResult connectPeerOutcome(final Vi vi, final boolean block, final long timeoutMs)
    {
        return connections.connectPeerOutcome(vi, block, timeoutMs);
    }

    ViState queryVi(final Vi vi)
    {
        ensureOpen();
        checkOwn(vi);
        try
        {
            switch (driver.viaQueryVi(vi.index()))
            {
                case ViTableEntry.STATE_PENDING: return ViState.CONNECT_PENDING;
                case ViTableEntry.STATE_CONNECTED: return ViState.CONNECTED;
                case ViTableEntry.STATE_ERROR: return ViState.ERROR;
                default: return ViState.IDLE;
            }
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    void disconnect(final Vi vi)
    {
        connections.disconnect(vi);
    }

    void checkOwn(final Vi vi)
    {
        if (null == vi || vi.nic() != this || vi.isClosed())
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "the VI is not this NIC's, or was destroyed");
        }
    }

    private static int attributesOf(final boolean rdmaWrite, final boolean rdmaRead)
    {
        return (rdmaWrite ? ViTableEntry.ATTRIBUTE_RDMA_WRITE : 0) | (rdmaRead ? ViTableEntry.ATTRIBUTE_RDMA_READ : 0);
    }

    private int cqIndex(final CompletionQueue cq)
    {
        if (null == cq)
        {
            return ViTableEntry.NO_CQ;
        }
        if (cq.nic() != this || cq.isClosed())
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "the completion queue is not this NIC's, or was destroyed");
        }
        return cq.index();
    }

    private void checkOwn(final ProtectionTag ptag)
    {
        if (ptag.nic() != this)
        {
            throw new ViplException(ViplResult.INVALID_PTAG, ptag + " is another NIC's");
        }
    }

    void ensureOpen()
    {
        if (closed)
        {
            throw dataPath.closedException();
        }
    }

    /**
     * @return the NIC, its cluster and its VIA process, for messages.
     *
     * <pre>{@code
     * System.out.println(nic);
     * }</pre>
     */
    public String toString()
    {
        return "ViplNic " + node + " (cluster '" + clusterName + "', VIA process " + registration.nicPid() + ")";
    }
}
