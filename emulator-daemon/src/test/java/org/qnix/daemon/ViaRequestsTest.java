package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.qnix.daemon.ProcessRegistrationTest.assertRefused;
import static org.qnix.daemon.ProcessRegistrationTest.freePages;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.CqTableEntry;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.HostClock;
import org.qnix.abi.MemoryRegionEntry;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ProtectionTableLayout;
import org.qnix.abi.PublishedTables;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaAddressSpace;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplResult;
import org.qnix.firmware.NodeImage;

/**
 * VIA's kernel agent (issue 14) through {@link DriverRequests} with no socket, over real node images
 * and running NICs: VIA registration without a broadcast, ptags, memory regions, CQs and VIs, each
 * refusal with its VIPL code, and what the NIC tables hold after each request and after the process's
 * connection ends.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ViaRequestsTest
{
    private static final long TIMEOUT_MS = 20_000;

    @TempDir
    Path base;

    private DriverTestCluster cluster;
    private NodeImage image;
    private AtomicBuffer sdram;
    private NicSdramLayout layout;
    private ViaTablesLayout via;
    private SocketlessConnection process;
    private SocketlessConnection.ViaRegistered registered;
    private int freeBefore;
    private int pageSize;

    @BeforeEach
    void setUp() throws Exception
    {
        cluster = new DriverTestCluster(base, 2, true);
        image = cluster.images.get(0);
        sdram = image.sdram();
        layout = image.sdramLayout();
        via = layout.via();
        pageSize = cluster.params.pageSize();
        freeBefore = freePages(image);
        process = cluster.connect(0);
        registered = process.viaRegister(TIMEOUT_MS).viaRegistered();
    }

    /** Every thread a test starts, ended before the cluster's images are unmapped. */
    private final List<Thread> started = new ArrayList<>();

    @AfterEach
    void tearDown() throws InterruptedException
    {
        // A test that failed half-way leaves its waits in the driver, reading the images: interrupted
        // (the driver's waits end at once) and joined first, or the unmapping would crash this JVM.
        for (final Thread thread : started)
        {
            thread.interrupt();
        }
        for (final Thread thread : started)
        {
            thread.join(60_000);
            if (thread.isAlive())
            {
                throw new IllegalStateException(thread + " still runs in the driver: the images stay mapped");
            }
        }
        cluster.close();
    }

    /** @return {@code thread}, started, and ended before the cluster closes. */
    private Thread start(final Thread thread)
    {
        started.add(thread);
        thread.start();
        return thread;
    }

    @Test
    void aViaProcessIsRegisteredAtOnceWithNoNameOnAnyNic()
    {
        final int entry = (int)layout.processEntryOffset(registered.index());
        assertEquals(ProcessTableLayout.nicPid(registered.index()), registered.nicPid());
        assertEquals(ProcessTableLayout.STATE_REGISTERED, sdram.getIntVolatile(entry + ProcessTableLayout.STATE_OFFSET));
        assertEquals(ProcessTableLayout.KIND_VIA, sdram.getInt(entry + ProcessTableLayout.KIND_OFFSET));
        assertEquals(registered.structuresAddress(), sdram.getLong(entry + ProcessTableLayout.VIA_STRUCTURES_OFFSET));
        assertEquals(ViaProcessStructuresLayout.pages(pageSize), registered.structuresPages());
        assertEquals(1, protectionLockCount(registered.structuresAddress()), "VIA Process Structures locked for life");
        for (final NodeImage nic : cluster.images)
        {
            assertTrue(PublishedTables.names(nic.sdram(), nic.sdramLayout()).isEmpty(), "no New_Process broadcast");
        }

        process.viaRegister(TIMEOUT_MS);
        assertEquals(ViplResult.INVALID_STATE.code(), process.viaFailed("connection of its own"));
        process.register(1, 0, 1, 1, TIMEOUT_MS);
        assertRefused(process, "already registered a VIA process");

        // The same JVM holds a QNIX registration beside it, on another connection.
        final SocketlessConnection qnix = cluster.connect(0);
        final SocketlessConnection.Registered named = qnix.register(1, 0, 1, 1, TIMEOUT_MS).registered();
        assertNotEquals(registered.index(), named.index());
        assertEquals(ProcessTableLayout.KIND_QNIX,
            sdram.getInt((int)layout.processEntryOffset(named.index()) + ProcessTableLayout.KIND_OFFSET));
        qnix.send(DriverProtocol.VIA_PTAG_CREATE);
        assertEquals(ViplResult.INVALID_STATE.code(), qnix.viaFailed("needs a NIC opened for VIA"));
    }

    @Test
    void registeringARangeLocksItOnceMoreAndWritesItsPageTranslations()
    {
        final SocketlessConnection.Buffer memory = allocate(3 * pageSize);
        final int ptag = process.send(DriverProtocol.VIA_PTAG_CREATE).viaHandle();
        final long offset = pageSize + 100;
        final int handle = process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), offset, (long)pageSize, ptag,
            ViTableEntry.ATTRIBUTE_RDMA_WRITE).viaHandle();
        final MemoryRegionEntry region = region(handle);
        assertTrue(region.isHandle(handle));
        assertEquals(registered.index(), region.owner());
        assertEquals(ptag, region.ptag());
        assertEquals(ViTableEntry.ATTRIBUTE_RDMA_WRITE, region.attributes());
        assertEquals(ViaAddressSpace.address(memory.id(), offset), region.base());
        assertEquals(2, region.pages(), "the range crosses into the third page");
        assertEquals(memory.addresses()[1] + 100, region.physicalAddress(sdram, via, region.base(), pageSize));
        assertEquals(memory.addresses()[2], region.physicalAddress(sdram, via, region.base() + pageSize - 100, pageSize));
        assertEquals(1, protectionLockCount(memory.addresses()[0]), "the whole allocation is locked");

        // The same range again, under the same ptag: another handle, another lock.
        final int again = process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), offset, (long)pageSize, ptag, 0)
            .viaHandle();
        assertNotEquals(handle, again);
        assertEquals(2, protectionLockCount(memory.addresses()[2]));

        process.send(DriverProtocol.BUFFER_FREE, memory.id());
        assertRefused(process, "registered as 2 VIA memory region(s)");
        process.send(DriverProtocol.BUFFER_UNLOCK, memory.id());
        assertRefused(process, "deregister them instead");
        process.send(DriverProtocol.VIA_SET_MEM_ATTRIBUTES, again, ptag, ViTableEntry.ATTRIBUTE_RDMA_READ).ok();
        assertEquals(ViTableEntry.ATTRIBUTE_RDMA_READ, region(again).attributes());

        process.send(DriverProtocol.VIA_DEREGISTER_MEM, handle).ok();
        assertTrue(!region(handle).isHandle(handle) && region(again).isHandle(again));
        process.send(DriverProtocol.VIA_DEREGISTER_MEM, handle);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), process.viaFailed("names no region"));
        process.send(DriverProtocol.VIA_DEREGISTER_MEM, again).ok();
        assertEquals(0, protectionLockCount(memory.addresses()[1]));
        assertEquals(0, cluster.registrars.get(0).viaTables().inUse()[3], "every translation given back");
        process.send(DriverProtocol.BUFFER_FREE, memory.id()).ok();
        process.send(DriverProtocol.VIA_PTAG_DESTROY, ptag).ok();
    }

    @Test
    void badRangesPtagsAndAttributesAreRefusedWithTheirCodes()
    {
        final SocketlessConnection.Buffer memory = allocate(2 * pageSize);
        final int ptag = process.send(DriverProtocol.VIA_PTAG_CREATE).viaHandle();
        final long bytes = 2L * pageSize;

        process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), 1L, bytes, ptag, 0);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), process.viaFailed("are not inside DMA memory"));
        process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), 0L, 0L, ptag, 0);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), process.viaFailed("at least a byte"));
        process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), -1L, 10L, ptag, 0);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), process.viaFailed("are not inside"));
        process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id() + 1000, 0L, 10L, ptag, 0);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), process.viaFailed("no DMA memory"));
        process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), 0L, 10L, ptag + 1000, 0);
        assertEquals(ViplResult.INVALID_PTAG.code(), process.viaFailed("not one of this process's"));
        process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), 0L, 10L, ptag, 4);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), process.viaFailed("attributes 4"));

        // Another VIA process's memory and ptag are not this one's.
        final SocketlessConnection other = registered(cluster.connect(0));
        final int otherPtag = other.send(DriverProtocol.VIA_PTAG_CREATE).viaHandle();
        other.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), 0L, 10L, otherPtag, 0);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), other.viaFailed("no DMA memory"));
        process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), 0L, 10L, otherPtag, 0);
        assertEquals(ViplResult.INVALID_PTAG.code(), process.viaFailed("not one of this process's"));

        final int handle = process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), 0L, bytes, ptag, 0).viaHandle();
        other.send(DriverProtocol.VIA_DEREGISTER_MEM, handle);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), other.viaFailed("names no region"));
        process.send(DriverProtocol.VIA_PTAG_DESTROY, ptag);
        assertEquals(ViplResult.ERROR_RESOURCE.code(), process.viaFailed("in use"));
        process.send(DriverProtocol.VIA_SET_MEM_ATTRIBUTES, handle, otherPtag, 0);
        assertEquals(ViplResult.INVALID_PTAG.code(), process.viaFailed("not one of this process's"));
        process.send(DriverProtocol.VIA_PTAG_DESTROY, otherPtag);
        assertEquals(ViplResult.INVALID_PTAG.code(), process.viaFailed("not one of this process's"));
        process.send(DriverProtocol.VIA_DEREGISTER_MEM, handle).ok();
        process.send(DriverProtocol.VIA_PTAG_DESTROY, ptag).ok();
        process.send(DriverProtocol.VIA_PTAG_DESTROY, ptag);
        assertEquals(ViplResult.INVALID_PTAG.code(), process.viaFailed("not one of this process's"));
    }

    @Test
    void visAreCreatedIdleWithTheirCqsAndDestroyedOnlyWhenIdle()
    {
        final int ptag = process.send(DriverProtocol.VIA_PTAG_CREATE).viaHandle();
        final SocketlessConnection.ViaCq cq = process.send(DriverProtocol.VIA_CQ_CREATE, 100).viaCq();
        final CqTableEntry cqEntry = new CqTableEntry().wrap(sdram, (int)via.cqOffset(cq.cq()));
        assertTrue(cqEntry.isOwnedBy(registered.index()));
        assertEquals(100, cqEntry.entries());
        assertEquals(cq.pages()[0], cqEntry.ringAddress());
        assertEquals(1, protectionLockCount(cq.pages()[0]), "the ring is locked for the CQ's life");

        final SocketlessConnection.ViaVi vi = process.send(DriverProtocol.VIA_VI_CREATE, ptag,
            ViTableEntry.ATTRIBUTE_RDMA_WRITE | ViTableEntry.ATTRIBUTE_RDMA_READ, ViTableEntry.RELIABLE_RECEPTION, 2048,
            ViTableEntry.NO_CQ, cq.cq()).viaVi();
        final ViTableEntry entry = vi(vi.vi());
        assertEquals(ViTableEntry.STATE_IDLE, entry.state());
        assertEquals(registered.index(), entry.owner());
        assertEquals(ptag, entry.ptag());
        assertEquals(ViTableEntry.RELIABLE_RECEPTION, entry.reliability());
        assertEquals(2048, entry.maxTransfer());
        assertEquals(ViTableEntry.NO_CQ, entry.sendCq());
        assertEquals(cq.cq(), entry.receiveCq());
        assertEquals(registered.structuresAddress() + ViaProcessStructuresLayout.sendCompletionOffset(vi.number()),
            entry.sendCompletion());
        assertEquals(registered.structuresAddress() + ViaProcessStructuresLayout.receiveCompletionOffset(vi.number()),
            entry.receiveCompletion());

        process.send(DriverProtocol.VIA_VI_CREATE, ptag, 0, 3, 4096, -1, -1);
        assertEquals(ViplResult.INVALID_RELIABILITY_LEVEL.code(), process.viaFailed("reliability level 3"));
        process.send(DriverProtocol.VIA_VI_CREATE, ptag, 0, ViTableEntry.UNRELIABLE, cluster.params.maxMessageBytes() + 1,
            -1, -1);
        assertEquals(ViplResult.INVALID_MTU.code(), process.viaFailed("max transfer size"));
        process.send(DriverProtocol.VIA_VI_CREATE, ptag, ViTableEntry.ATTRIBUTE_RDMA_READ, ViTableEntry.UNRELIABLE, 0,
            -1, -1);
        assertEquals(ViplResult.INVALID_RDMAREAD.code(), process.viaFailed("reliable VI"));
        process.send(DriverProtocol.VIA_VI_CREATE, ptag + 99, 0, ViTableEntry.UNRELIABLE, 0, -1, -1);
        assertEquals(ViplResult.INVALID_PTAG.code(), process.viaFailed("protection tag"));
        process.send(DriverProtocol.VIA_VI_CREATE, ptag, 0, ViTableEntry.UNRELIABLE, 0, cq.cq() + 1, -1);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), process.viaFailed("completion queue"));
        process.send(DriverProtocol.VIA_CQ_CREATE, 0);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), process.viaFailed("0 entries"));

        process.send(DriverProtocol.VIA_CQ_DESTROY, cq.cq());
        assertEquals(ViplResult.ERROR_RESOURCE.code(), process.viaFailed("attached"));
        process.send(DriverProtocol.VIA_PTAG_DESTROY, ptag);
        assertEquals(ViplResult.ERROR_RESOURCE.code(), process.viaFailed("in use"));
        process.send(DriverProtocol.BUFFER_FREE, 1);
        assertRefused(process, "");

        // Connected (as the connection manager will leave it): not destroyed.
        entry.connect(7, 0, 0, 1);
        process.send(DriverProtocol.VIA_VI_DESTROY, vi.vi());
        assertEquals(ViplResult.INVALID_STATE.code(), process.viaFailed("connected"));
        entry.publishState(ViTableEntry.STATE_IDLE);
        process.send(DriverProtocol.VIA_VI_DESTROY, vi.vi()).ok();
        assertEquals(ViTableEntry.STATE_FREE, entry.state());
        // Made again in the same entry for the same process: another generation, so the NIC keeps
        // nothing of the destroyed VI's posted work.
        final int generation = entry.generation();
        final SocketlessConnection.ViaVi again = process.send(DriverProtocol.VIA_VI_CREATE, ptag, 0,
            ViTableEntry.UNRELIABLE, 1024, -1, -1).viaVi();
        assertEquals(vi.vi(), again.vi(), "the same entry");
        assertEquals(generation + 1, entry.generation());
        process.send(DriverProtocol.VIA_VI_DESTROY, again.vi()).ok();
        process.send(DriverProtocol.VIA_VI_DESTROY, vi.vi());
        assertEquals(ViplResult.INVALID_PARAMETER.code(), process.viaFailed("no VI"));
        process.send(DriverProtocol.VIA_CQ_DESTROY, cq.cq()).ok();
        assertTrue(cqEntry.isFree());
        assertEquals(0, protectionLockCount(cq.pages()[0]), "the ring's pages went back");
        process.send(DriverProtocol.VIA_PTAG_DESTROY, ptag).ok();
    }

    @Test
    void theConnectionEndingTakesEveryViRegionAndCqOutOfTheNicTables() throws Exception
    {
        final int ptag = process.send(DriverProtocol.VIA_PTAG_CREATE).viaHandle();
        final SocketlessConnection.Buffer memory = allocate(pageSize);
        final int handle = process.send(DriverProtocol.VIA_REGISTER_MEM, memory.id(), 0L, (long)pageSize, ptag, 0)
            .viaHandle();
        final int cq = process.send(DriverProtocol.VIA_CQ_CREATE, 8).viaCq().cq();
        final int vi = process.send(DriverProtocol.VIA_VI_CREATE, ptag, 0, ViTableEntry.RELIABLE_DELIVERY, 1024, cq, cq)
            .viaVi().vi();
        vi(vi).connect(3, 0, 0, 1);
        final int index = registered.index();

        process.close();

        assertEquals(ViTableEntry.STATE_FREE, vi(vi).state());
        assertTrue(!region(handle).isHandle(handle));
        assertTrue(new CqTableEntry().wrap(sdram, (int)via.cqOffset(cq)).isFree());
        final int[] inUse = cluster.registrars.get(0).viaTables().inUse();
        assertEquals(0, inUse[0] + inUse[1] + inUse[2] + inUse[3], "VIs, regions, CQs, translations");
        final int entry = (int)layout.processEntryOffset(index);
        assertEquals(0, sdram.getIntVolatile(entry + ProcessTableLayout.PID_OFFSET));
        assertEquals(ProcessTableLayout.STATE_FREE, sdram.getIntVolatile(entry + ProcessTableLayout.STATE_OFFSET),
            "Delete_Via_Process reached the NIC");
        assertEquals(0, image.hostMemory().getIntVolatile((int)image.hostLayout().processFlagOffset(index)));
        assertEquals(freeBefore, freePages(image), "every page back");
    }

    /**
     * The NIC of node 0-0 stopped while a connection request, a peer connection wait and a connection
     * wait of its processes wait with ten-minute timeouts: each ends ERROR_RESOURCE naming the stopped
     * NIC (libvipl's NIC-dead exception), both VIs are Idle again, and the daemon keeps neither request.
     */
    @Test
    void aStoppedNicEndsEveryConnectionWaitOfItsProcesses() throws Exception
    {
        final int serverNode = NicCoordinates.ofIndex(1, 2).packed();
        final int client = createVi(process);
        final SocketlessConnection peering = registered(cluster.connect(0));
        final int peer = createVi(peering);
        // Empty discriminators: each a length of 0.
        peering.send(DriverProtocol.VIA_CONNECT_PEER_REQUEST, peer, 0, serverNode, 0, 600_000L).ok();
        final SocketlessConnection listening = registered(cluster.connect(0));

        final Thread[] waits = {
            start(new Thread(() -> process.send(DriverProtocol.VIA_CONNECT_REQUEST, client, serverNode, 0, 600_000L))),
            start(new Thread(() -> peering.send(DriverProtocol.VIA_CONNECT_PEER_WAIT, peer))),
            start(new Thread(() -> listening.send(DriverProtocol.VIA_CONNECT_WAIT, 0, 600_000L)))};
        awaitConnectPending(client);
        awaitWaitingIn(waits[0], "connectRequest");
        awaitWaitingIn(waits[1], "connectPeerOutcome");
        awaitWaitingIn(waits[2], "connectWait");
        cluster.stopNic(0);
        for (final Thread wait : waits)
        {
            wait.join(60_000);
            assertTrue(!wait.isAlive(), "the wait ended");
        }

        assertEquals(ViplResult.ERROR_RESOURCE.code(), process.viaFailed("node 0-0 is not running"));
        assertEquals(ViplResult.ERROR_RESOURCE.code(), peering.viaFailed("node 0-0 is not running"));
        assertEquals(ViplResult.ERROR_RESOURCE.code(), listening.viaFailed("node 0-0 is not running"));
        assertEquals(ViTableEntry.STATE_IDLE, vi(client).state(), "not left Connect Pending");
        assertEquals(ViTableEntry.STATE_IDLE, vi(peer).state(), "not left Connect Pending");
        peering.send(DriverProtocol.VIA_CONNECT_PEER_DONE, peer);
        assertEquals(ViplResult.INVALID_STATE.code(), peering.viaFailed("no peer connection request outstanding"));
        // A server on the live NIC is given no request: the client's went with its wait.
        final SocketlessConnection server = registered(cluster.connect(1));
        server.send(DriverProtocol.VIA_CONNECT_WAIT, 0, 100L);
        assertEquals(ViplResult.TIMEOUT.code(), server.viaFailed("no connection request"));
    }

    /**
     * A process whose close asks for its connection waits to end (Close requested in its VIA Process
     * Structures) during a ten-minute connection request: the request ends INVALID_STATE within the
     * driver's 50 ms look, the VI is Idle again, and the process stays registered on the same
     * connection, its pages its own, until it de-registers over it. Another process's wait, whose word is
     * untouched, goes on.
     */
    @Test
    void aCloseRequestedEndsTheProcesssConnectionWaitsOnlyAndItDeregistersAfter() throws Exception
    {
        final int client = createVi(process);
        final SocketlessConnection other = cluster.connect(0);
        final SocketlessConnection.ViaRegistered otherRegistered = other.viaRegister(TIMEOUT_MS).viaRegistered();
        final Thread request = requestConnection(client);
        // On node 0-0: the request asks node 1-0, so this wait is asked nothing.
        final Thread otherWait = waitForRequest(other);
        awaitConnectPending(client);
        final int pagesHeld = freePages(image);

        requestClose(image, registered, 1);
        request.join(60_000);
        assertTrue(!request.isAlive(), "the request ended at the close's request, not at its timeout");
        assertEquals(ViplResult.INVALID_STATE.code(), process.viaFailed("closed its NIC during the connection wait"));
        assertEquals(ViTableEntry.STATE_IDLE, vi(client).state(), "not left Connect Pending");
        final int entry = (int)layout.processEntryOffset(registered.index());
        assertEquals(ProcessTableLayout.STATE_REGISTERED, sdram.getIntVolatile(entry + ProcessTableLayout.STATE_OFFSET),
            "still registered: its pages are not given away before it retired its mappings");
        assertEquals(pagesHeld, freePages(image));
        assertTrue(otherWait.isAlive(), "the other process's wait goes on");

        process.send(DriverProtocol.DEREGISTER).deregistered();
        assertEquals(0, sdram.getIntVolatile(entry + ProcessTableLayout.PID_OFFSET));
        assertTrue(freePages(image) > pagesHeld, "the de-registration gave the pages back");

        requestClose(image, otherRegistered, -7);
        otherWait.join(60_000);
        assertTrue(!otherWait.isAlive(), "any non-zero value ends the writer's own waits");
        assertEquals(ViplResult.INVALID_STATE.code(), other.viaFailed("closed its NIC during the connection wait"));
    }

    /**
     * VipDisconnect of a VI whose peer request is not matched yet withdraws the request: the VI is Idle,
     * its outcome is INVALID_STATE, and the peer's request that comes after is not matched with it (it
     * waits for its own timeout, as with no request on the other side).
     */
    @Test
    void aDisconnectWithdrawsAnUnmatchedPeerRequest() throws Exception
    {
        final int node0 = NicCoordinates.ofIndex(0, 2).packed();
        final int node1 = NicCoordinates.ofIndex(1, 2).packed();
        final int vi = createVi(process);
        // Node 0-0 asks node 1-0; both discriminators empty (a length of 0).
        process.send(DriverProtocol.VIA_CONNECT_PEER_REQUEST, vi, 0, node1, 0, 600_000L).ok();
        assertEquals(ViTableEntry.STATE_PENDING, vi(vi).state());

        process.send(DriverProtocol.VIA_DISCONNECT, vi).ok();
        assertEquals(ViTableEntry.STATE_IDLE, vi(vi).state(), "Idle, its request withdrawn");
        process.send(DriverProtocol.VIA_CONNECT_PEER_DONE, vi);
        assertEquals(ViplResult.INVALID_STATE.code(), process.viaFailed("no peer connection request outstanding"));

        final SocketlessConnection peer = registered(cluster.connect(1));
        final int peerVi = createVi(peer);
        peer.send(DriverProtocol.VIA_CONNECT_PEER_REQUEST, peerVi, 0, node0, 0, 600_000L).ok();
        peer.send(DriverProtocol.VIA_CONNECT_PEER_DONE, peerVi);
        assertEquals(ViplResult.NOT_DONE.code(), peer.viaFailed("NOT_DONE"), "not matched with the withdrawn one");
        assertEquals(ViTableEntry.STATE_IDLE, vi(vi).state());
        assertEquals(ViTableEntry.STATE_PENDING, vi(cluster.images.get(1), peerVi).state());
    }

    /**
     * VipConnectAccept with a VI that is not Idle is refused INVALID_STATE and leaves the request asked:
     * the server accepts it with an Idle VI, and the client, waiting with a ten-minute timeout, is connected.
     */
    @Test
    void anAcceptRefusedForAViThatIsNotIdleLeavesTheRequestToAnswer() throws Exception
    {
        final SocketlessConnection server = registered(cluster.connect(1));
        final int busy = createVi(server);
        final int idle = createVi(server);
        final Thread client = requestConnection(createVi(process));
        final int handle = server.send(DriverProtocol.VIA_CONNECT_WAIT, 0, TIMEOUT_MS).viaConnectionAsked().handle();

        final ViTableEntry busyEntry = vi(cluster.images.get(1), busy);
        busyEntry.connect(7, 0, 0, 1);
        server.send(DriverProtocol.VIA_CONNECT_ACCEPT, handle, busy);
        assertEquals(ViplResult.INVALID_STATE.code(), server.viaFailed("cannot accept"));
        busyEntry.publishState(ViTableEntry.STATE_IDLE);

        server.send(DriverProtocol.VIA_CONNECT_ACCEPT, handle, idle).ok();
        client.join(60_000);
        assertTrue(!client.isAlive(), "the client's request ended");
        assertEquals(NicCoordinates.ofIndex(1, 2).packed(), process.viaConnected().node());
        assertEquals(ViTableEntry.STATE_CONNECTED, vi(cluster.images.get(1), idle).state());
    }

    /** A server that dies after a refused accept rejects the request, as it would had it never tried. */
    @Test
    void aServerThatDiesAfterARefusedAcceptRejectsTheRequest() throws Exception
    {
        final SocketlessConnection server = registered(cluster.connect(1));
        final int busy = createVi(server);
        final Thread client = requestConnection(createVi(process));
        final int handle = server.send(DriverProtocol.VIA_CONNECT_WAIT, 0, TIMEOUT_MS).viaConnectionAsked().handle();
        vi(cluster.images.get(1), busy).connect(7, 0, 0, 1);
        server.send(DriverProtocol.VIA_CONNECT_ACCEPT, handle, busy);
        assertEquals(ViplResult.INVALID_STATE.code(), server.viaFailed("cannot accept"));

        server.close();
        client.join(60_000);
        assertTrue(!client.isAlive(), "the client's request ended when its server died, not at its timeout");
        assertEquals(ViplResult.REJECT.code(), process.viaFailed("REJECT"));
    }

    /**
     * A NIC that looks alive (its heartbeat goes on) but takes no driver command, as one stopped at a
     * breakpoint until its heartbeat timeout: an accept on it waits for its Driver Doorbell, and
     * meanwhile a connection on another NIC is requested, accepted and made. Once that NIC is taken for
     * dead, the accept ends too (the driver writes the dead NIC's table itself) and its client is connected.
     */
    @Test
    void anAcceptOnASilentNicHoldsUpNoConnectionOnAnotherNic() throws Exception
    {
        final SocketlessConnection server = registered(cluster.connect(1));
        final int serverVi = createVi(server);
        final Thread client = requestConnection(createVi(process));
        final int handle = server.send(DriverProtocol.VIA_CONNECT_WAIT, 0, TIMEOUT_MS).viaConnectionAsked().handle();

        final SilentNic silent = new SilentNic(1);
        final Thread accept = start(new Thread(() -> server.send(DriverProtocol.VIA_CONNECT_ACCEPT, handle, serverVi)));
        silent.whileWaitedForBy(accept);
        accept.join(60_000);
        client.join(60_000);
        assertTrue(!accept.isAlive() && !client.isAlive(), "both ended once the NIC was taken for dead");
        server.ok();
        assertEquals(NicCoordinates.ofIndex(1, 2).packed(), process.viaConnected().node());
        assertEquals(ViTableEntry.STATE_CONNECTED, vi(cluster.images.get(1), serverVi).state());
    }

    /**
     * A disconnect whose peer's NIC is silent (as above): it waits to tell that NIC the connection is
     * lost, and meanwhile a connection on another NIC is made. The disconnected VI is Idle at once.
     */
    @Test
    void aDisconnectFromAPeerOnASilentNicHoldsUpNoConnectionOnAnotherNic() throws Exception
    {
        final int clientVi = connectedToANewServer();

        final SilentNic silent = new SilentNic(1);
        final Thread disconnect = start(new Thread(() -> process.send(DriverProtocol.VIA_DISCONNECT, clientVi)));
        silent.whileWaitedForBy(disconnect);
        disconnect.join(60_000);
        assertTrue(!disconnect.isAlive(), "the disconnect ended once the NIC was taken for dead");
        process.ok();
        assertEquals(ViTableEntry.STATE_IDLE, vi(clientVi).state());
    }

    /**
     * A CQ resize the driver gave up on (its NIC silent) may still be taken when the NIC resumes: the
     * CQ's entry is not given to a CQ made after the destroy while that can happen, so that the NIC
     * cannot point a newer CQ at the given-up resize's ring; once the NIC is seen stopped, it is.
     */
    @Test
    void aCqEntryWhoseResizeTheNicMayStillTakeIsNotReusedUntilTheNicStops() throws Exception
    {
        final int cq = process.send(DriverProtocol.VIA_CQ_CREATE, 8).viaCq().cq();
        final SilentNic silent = new SilentNic(0);
        silent.goQuiet();

        process.send(DriverProtocol.VIA_CQ_RESIZE, cq, 16);
        assertEquals(ViplResult.INVALID_STATE.code(), process.viaFailed("did not take the resize"));
        process.send(DriverProtocol.VIA_CQ_DESTROY, cq).ok();
        final int made = process.send(DriverProtocol.VIA_CQ_CREATE, 8).viaCq().cq();
        assertNotEquals(cq, made, "the entry the NIC may still resize is not reused");

        silent.stop();
        process.send(DriverProtocol.VIA_CQ_DESTROY, made).ok();
        assertEquals(cq, process.send(DriverProtocol.VIA_CQ_CREATE, 8).viaCq().cq(),
            "reused once the NIC does no DMA any more");
    }

    /**
     * A disconnect whose NIC is quiet: the driver sets the VI Idle itself, and the Via_Disconnect it gave
     * up on may still be taken, after a packet of the connection the NIC still holds. The VI can be
     * destroyed, but its entry is not given to a VI made after while that can happen, so that the packet
     * cannot reach a VI of another process; once the NIC is seen stopped, it is.
     */
    @Test
    void aViEntryWhoseDisconnectTheNicMayStillTakeIsNotReusedUntilTheNicStops() throws Exception
    {
        final int clientVi = connectedToANewServer();
        final SilentNic silent = new SilentNic(0);
        silent.goQuiet();

        process.send(DriverProtocol.VIA_DISCONNECT, clientVi).ok();
        assertEquals(ViTableEntry.STATE_IDLE, vi(clientVi).state(), "set Idle by the driver");
        process.send(DriverProtocol.VIA_VI_DESTROY, clientVi).ok();
        final int made = createVi(process);
        assertNotEquals(clientVi, made, "the entry the NIC may still take the disconnect for is not reused");

        silent.stop();
        process.send(DriverProtocol.VIA_VI_DESTROY, made).ok();
        assertEquals(clientVi, createVi(process), "reused once the NIC does no DMA any more");
    }

    /** The NIC of a node stopped, but its heartbeat kept going by the test: alive to the driver, deaf to its commands. */
    private final class SilentNic
    {
        private final int node;
        /** A process of the node, registered while its NIC still took commands. */
        private final SocketlessConnection onSilentNode;
        private final int onSilentNodeVi;
        private final ControlProgramSegment control;
        private final AtomicBoolean beating = new AtomicBoolean(true);
        private final Thread heartbeat;

        SilentNic(final int node)
        {
            this.node = node;
            onSilentNode = registered(cluster.connect(node));
            onSilentNodeVi = createVi(onSilentNode);
            cluster.stopNic(node);
            control = cluster.images.get(node).controlSegment();
            control.running();
            heartbeat = start(new Thread(() ->
            {
                for (long beat = 1; beating.get() && !Thread.currentThread().isInterrupted(); beat++)
                {
                    control.beat(beat, HostClock.millis());
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                }
            }));
        }

        /**
         * Once {@code waiter} waits in the driver for this NIC's Driver Doorbell: a process on this
         * NIC's node requests a connection (its VI goes Connect Pending in this node's tables, under the
         * connection manager's monitor) and waits for a server, and a connection is made on node 0-0
         * between two new processes, {@code waiter} still waiting after; then this NIC stops beating and
         * is stopped, which ends {@code waiter}'s wait and the request's (ERROR_RESOURCE).
         */
        void whileWaitedForBy(final Thread waiter) throws InterruptedException
        {
            try
            {
                awaitWaitingIn(waiter, ViaTables.class, "command");
                final Thread onSilentNodeRequest = start(new Thread(() -> onSilentNode.send(
                    DriverProtocol.VIA_CONNECT_REQUEST, onSilentNodeVi, cluster.images.get(node).node().packed(), 0,
                    600_000L)));
                awaitWaitingIn(onSilentNodeRequest, "connectRequest");
                final int node0 = NicCoordinates.ofIndex(0, 2).packed();
                final SocketlessConnection otherClient = registered(cluster.connect(0));
                final int otherClientVi = createVi(otherClient);
                final Thread otherRequest = start(new Thread(() ->
                    otherClient.send(DriverProtocol.VIA_CONNECT_REQUEST, otherClientVi, node0, 0, 600_000L)));
                final SocketlessConnection otherServer = registered(cluster.connect(0));
                final int otherServerVi = createVi(otherServer);
                final int otherHandle =
                    otherServer.send(DriverProtocol.VIA_CONNECT_WAIT, 0, TIMEOUT_MS).viaConnectionAsked().handle();
                otherServer.send(DriverProtocol.VIA_CONNECT_ACCEPT, otherHandle, otherServerVi).ok();
                otherRequest.join(60_000);
                assertTrue(!otherRequest.isAlive(), "the other connection's request ended");
                assertEquals(node0, otherClient.viaConnected().node());
                assertEquals(ViTableEntry.STATE_CONNECTED, vi(otherClientVi).state());
                assertTrue(isIn(waiter, ViaTables.class, "command"),
                    "the other connection was made while the silent NIC was still waited for");
            }
            finally
            {
                goQuiet();
                control.stopped();
            }
        }

        /**
         * Its heartbeat stops, dated past the heartbeat timeout: the driver takes the NIC for dead at its
         * next look, but it may still do DMA (its state Running, its firmware's process this live JVM),
         * as a NIC at a breakpoint that may resume.
         */
        void goQuiet() throws InterruptedException
        {
            beating.set(false);
            heartbeat.join(60_000);
            control.beat(Long.MAX_VALUE, HostClock.millis() - 10 * ControlProgramLayout.HEARTBEAT_TIMEOUT_MS);
        }

        /** Its control program is seen stopped: it does no DMA any more. */
        void stop()
        {
            control.stopped();
        }
    }

    /**
     * An address (node, discriminator) is the uid's whose process first used it as its own, until the last
     * such process of that uid ends: in a cluster shared with a group, a process of another user may
     * neither wait on it as a server nor name it as a peer request's local address, and so is never given
     * the requests meant for that user's servers. Processes of one uid share it, as VIA lets them.
     */
    @Test
    void anAddressInUseByOneUidIsRefusedToAnotherUntilItsLastUserEnds() throws Exception
    {
        final SocketlessConnection server = registered(cluster.connect(1));
        final SocketlessConnection sameUid = registered(cluster.connect(1));
        final SocketlessConnection otherUser = registered(cluster.connect(1, new PeerCredentials(
            (int)ProcessHandle.current().pid(), PeerCredentials.ownUid() + 1, PeerCredentials.ownGid())));
        final int otherVi = createVi(otherUser);
        server.send(DriverProtocol.VIA_CONNECT_WAIT, 0, 1L);
        assertEquals(ViplResult.TIMEOUT.code(), server.viaFailed("no connection request"));

        otherUser.send(DriverProtocol.VIA_CONNECT_WAIT, 0, TIMEOUT_MS);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), otherUser.viaFailed("in use by a process of uid"));
        otherUser.send(DriverProtocol.VIA_CONNECT_PEER_REQUEST, otherVi, 0, NicCoordinates.ofIndex(0, 2).packed(), 0,
            TIMEOUT_MS);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), otherUser.viaFailed("in use by a process of uid"));
        assertEquals(ViTableEntry.STATE_IDLE, vi(cluster.images.get(1), otherVi).state(), "its VI left Idle");

        // A client's request goes to a server of the uid, never to the other user's.
        final int clientVi = createVi(process);
        final Thread client = requestConnection(clientVi);
        awaitConnectPending(clientVi);
        otherUser.send(DriverProtocol.VIA_CONNECT_WAIT, 0, TIMEOUT_MS);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), otherUser.viaFailed("in use by a process of uid"));
        final int sameUidVi = createVi(sameUid);
        final int handle = sameUid.send(DriverProtocol.VIA_CONNECT_WAIT, 0, TIMEOUT_MS).viaConnectionAsked().handle();
        sameUid.send(DriverProtocol.VIA_CONNECT_ACCEPT, handle, sameUidVi).ok();
        client.join(60_000);
        assertEquals(NicCoordinates.ofIndex(1, 2).packed(), process.viaConnected().node());

        server.close();
        otherUser.send(DriverProtocol.VIA_CONNECT_WAIT, 0, 1L);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), otherUser.viaFailed("in use by a process of uid"),
            "still held by the uid's other process");
        sameUid.close();
        otherUser.send(DriverProtocol.VIA_CONNECT_WAIT, 0, 1L);
        assertEquals(ViplResult.TIMEOUT.code(), otherUser.viaFailed("no connection request"), "free once both ended");
    }

    /**
     * A VIA process whose connection ends in the middle of a request while it lives (its library gave up
     * waiting for the driver) may still map its VIA Process Structures, regions and CQ rings: its entry
     * and pages are held until it exits, as a QNIX process's are.
     */
    @Test
    void aViaProcessThatLostItsConnectionMidRequestAliveKeepsItsEntryUntilItExits() throws Exception
    {
        final NodeImage node1 = cluster.images.get(1);
        final int free = freePages(node1);
        final Process alive = new ProcessBuilder("sleep", "600").start();
        try
        {
            final SocketlessConnection lost = cluster.connect(1, (int)alive.pid());
            final SocketlessConnection.ViaRegistered held = lost.viaRegister(TIMEOUT_MS).viaRegistered();
            lost.hangUp(false);
            assertThrows(UncheckedIOException.class, () -> lost.request(DriverProtocol.VIA_PTAG_CREATE));
            lost.close();
            final int flag = (int)node1.hostLayout().processFlagOffset(held.index());
            assertEquals((int)alive.pid(), node1.hostMemory().getIntVolatile(flag), "the entry is not claimable");
            assertTrue(freePages(node1) < free, "its pages are not free");

            alive.destroyForcibly().waitFor();
            assertEquals(1, cluster.registrars.get(1).releaseQuarantined(), "released once it exited");
            assertEquals(0, node1.hostMemory().getIntVolatile(flag));
            assertEquals(free, freePages(node1));
        }
        finally
        {
            alive.destroyForcibly();
        }
    }

    /**
     * Each address a process used as its own is kept for its uid until the process ends, so a process may
     * use at most {@link ViaConnections#MAX_ADDRESSES_PER_PROCESS}: a loop of waits over new
     * discriminators cannot make the daemon keep an unbounded number. One it uses already stays usable,
     * and its end frees them all.
     */
    @Test
    void aProcessUsesABoundedNumberOfAddresses() throws Exception
    {
        final SocketlessConnection server = registered(cluster.connect(1));
        for (int i = 0; i < ViaConnections.MAX_ADDRESSES_PER_PROCESS; i++)
        {
            // A 4-byte discriminator: the int i.
            server.send(DriverProtocol.VIA_CONNECT_WAIT, 4, i, 0L);
            assertEquals(ViplResult.TIMEOUT.code(), server.viaFailed("no connection request for discriminator 0x"));
        }
        server.send(DriverProtocol.VIA_CONNECT_WAIT, 4, ViaConnections.MAX_ADDRESSES_PER_PROCESS, 0L);
        assertEquals(ViplResult.ERROR_RESOURCE.code(), server.viaFailed("connection addresses already"));
        server.send(DriverProtocol.VIA_CONNECT_WAIT, 4, 7, 0L);
        assertEquals(ViplResult.TIMEOUT.code(), server.viaFailed("no connection request"), "one of its own");

        final SocketlessConnection otherUser = registered(cluster.connect(1, new PeerCredentials(
            (int)ProcessHandle.current().pid(), PeerCredentials.ownUid() + 1, PeerCredentials.ownGid())));
        otherUser.send(DriverProtocol.VIA_CONNECT_WAIT, 4, 7, 0L);
        assertEquals(ViplResult.INVALID_PARAMETER.code(), otherUser.viaFailed("in use by a process of uid"));
        server.close();
        otherUser.send(DriverProtocol.VIA_CONNECT_WAIT, 4, 7, 0L);
        assertEquals(ViplResult.TIMEOUT.code(), otherUser.viaFailed("no connection request"), "freed at its end");
    }

    /**
     * A server whose process closes its NIC (its connection) during a ten-minute VipConnectWait: the
     * driver sees the hang-up and ends the wait then, so a request that comes after waits for the next
     * server instead of being asked of the gone one.
     */
    @Test
    void aServerThatHangsUpInItsWaitIsAskedNothingAfter() throws Exception
    {
        final SocketlessConnection gone = registered(cluster.connect(1));
        final Thread goneWait = waitForRequest(gone);
        gone.hangUp(true);
        goneWait.join(60_000);
        assertTrue(!goneWait.isAlive(), "the wait ended at the hang-up, not at its timeout");
        gone.close();

        final Thread client = requestConnection(createVi(process));
        acceptTheRequestOnANewServer();
        client.join(60_000);
        assertEquals(NicCoordinates.ofIndex(1, 2).packed(), process.viaConnected().node());
    }

    /**
     * A server whose process closes its connection just as the driver hands it a request (the reply
     * cannot be written): the request was never asked of anyone, so it goes back to wait, is not REJECTed
     * when the gone server's resources go, and the next server accepts it.
     */
    @Test
    void aRequestTheServerNeverReceivedWaitsForTheNextServer() throws Exception
    {
        final SocketlessConnection gone = registered(cluster.connect(1));
        final Thread goneWait = waitForRequest(gone);
        gone.hangUp(false);
        final Thread client = requestConnection(createVi(process));
        goneWait.join(60_000);
        assertTrue(!goneWait.isAlive(), "the gone server's wait took the request and failed to tell it");
        gone.close();

        acceptTheRequestOnANewServer();
        client.join(60_000);
        assertTrue(!client.isAlive(), "the client's request ended");
        assertEquals(NicCoordinates.ofIndex(1, 2).packed(), process.viaConnected().node());
    }

    /**
     * A server whose process closes its NIC (Close requested) takes no request in a connection wait, not
     * even one that waits already: it goes to the next server rather than to the closing one, which would
     * never answer it (its de-registration would REJECT it).
     */
    @Test
    void aRequestThatReachesAClosingServersWaitWaitsForTheNextServer() throws Exception
    {
        final SocketlessConnection closing = cluster.connect(1);
        final SocketlessConnection.ViaRegistered closingRegistered = closing.viaRegister(TIMEOUT_MS).viaRegistered();
        final int clientVi = createVi(process);
        final Thread client = requestConnection(clientVi);
        awaitConnectPending(clientVi);
        requestClose(cluster.images.get(1), closingRegistered, 1);
        final Thread closingWait = startWaitForRequest(closing);
        closingWait.join(60_000);
        assertTrue(!closingWait.isAlive(), "the closing server's wait ended");
        assertEquals(ViplResult.INVALID_STATE.code(), closing.viaFailed("closed its NIC during the connection wait"));

        acceptTheRequestOnANewServer();
        client.join(60_000);
        assertTrue(!client.isAlive(), "the client's request ended");
        assertEquals(NicCoordinates.ofIndex(1, 2).packed(), process.viaConnected().node());
    }

    /** Waits until {@code vi} is Connect Pending in the NIC's VI table: its request is with the driver. */
    private void awaitConnectPending(final int vi) throws InterruptedException
    {
        while (ViTableEntry.STATE_PENDING != vi(vi).state())
        {
            Thread.sleep(1);
        }
    }

    /** Writes {@code value} into Close requested, as the process's ViplNic.close() writes 1. */
    private static void requestClose(final NodeImage nic, final SocketlessConnection.ViaRegistered process,
        final int value)
    {
        // Read by the driver in each connection wait of the process.
        nic.hostMemory().putIntRelease(
            (int)process.structuresAddress() + ViaProcessStructuresLayout.CLOSE_REQUESTED_OFFSET, value);
    }

    /** @return {@code process}, VIA-registered. */
    private static SocketlessConnection registered(final SocketlessConnection process)
    {
        process.viaRegister(TIMEOUT_MS).viaRegistered();
        return process;
    }

    /**
     * @return a started thread in which {@code server} waits ten minutes for a request with an empty
     * discriminator, once it is inside the driver's wait.
     */
    private Thread waitForRequest(final SocketlessConnection server) throws InterruptedException
    {
        final Thread wait = startWaitForRequest(server);
        awaitWaitingIn(wait, "connectWait");
        return wait;
    }

    /** @return a started thread in which {@code server} asks for a connection request, waiting ten minutes at most. */
    private Thread startWaitForRequest(final SocketlessConnection server)
    {
        final Thread wait = new Thread(() ->
        {
            try
            {
                server.send(DriverProtocol.VIA_CONNECT_WAIT, 0, 600_000L);
            }
            catch (final java.io.UncheckedIOException expected)
            {
                // The reply to a process that closed its connection.
            }
        });
        return start(wait);
    }

    /**
     * Waits until {@code thread} is inside the driver's wait {@code method} of {@link ViaConnections},
     * between two looks (its monitor's timed wait): what a test does next happens during the wait.
     */
    private static void awaitWaitingIn(final Thread thread, final String method) throws InterruptedException
    {
        awaitWaitingIn(thread, ViaConnections.class, method);
    }

    /** Waits until {@code thread} is in a timed wait inside {@code owner}'s {@code method}. */
    private static void awaitWaitingIn(final Thread thread, final Class<?> owner, final String method)
        throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!isWaitingIn(thread, owner, method))
        {
            assertTrue(thread.isAlive(), "the wait in " + method + " ended before the test acted");
            assertTrue(System.nanoTime() - deadline < 0, "never waiting in " + method + ": " + thread.getState());
            Thread.sleep(1);
        }
    }

    /** @return whether {@code thread} runs inside {@code owner}'s {@code method}, in whatever state. */
    private static boolean isIn(final Thread thread, final Class<?> owner, final String method)
    {
        for (final StackTraceElement frame : thread.getStackTrace())
        {
            if (owner.getName().equals(frame.getClassName()) && method.equals(frame.getMethodName()))
            {
                return true;
            }
        }
        return false;
    }

    private static boolean isWaitingIn(final Thread thread, final Class<?> owner, final String method)
    {
        return Thread.State.TIMED_WAITING == thread.getState() && isIn(thread, owner, method);
    }

    /** @return a new VI of {@link #process}, connected to one of a new server on node 1-0. */
    private int connectedToANewServer() throws InterruptedException
    {
        final int clientVi = createVi(process);
        final Thread client = requestConnection(clientVi);
        acceptTheRequestOnANewServer();
        client.join(60_000);
        assertEquals(NicCoordinates.ofIndex(1, 2).packed(), process.viaConnected().node());
        return clientVi;
    }

    private void acceptTheRequestOnANewServer()
    {
        final SocketlessConnection server = registered(cluster.connect(1));
        final int vi = createVi(server);
        final int handle = server.send(DriverProtocol.VIA_CONNECT_WAIT, 0, TIMEOUT_MS).viaConnectionAsked().handle();
        server.send(DriverProtocol.VIA_CONNECT_ACCEPT, handle, vi).ok();
        assertEquals(ViTableEntry.STATE_CONNECTED, vi(cluster.images.get(1), vi).state());
    }

    /** @return a started thread in which {@link #process}'s VI asks node 1-0 to connect, for ten minutes at most. */
    private Thread requestConnection(final int clientVi)
    {
        // An empty discriminator: a length of 0.
        return start(new Thread(() -> process.send(DriverProtocol.VIA_CONNECT_REQUEST, clientVi,
            NicCoordinates.ofIndex(1, 2).packed(), 0, 600_000L)));
    }

    private static ViTableEntry vi(final NodeImage nic, final int vi)
    {
        return new ViTableEntry().wrap(nic.sdram(), (int)nic.sdramLayout().via().viOffset(vi));
    }

    /** @return a new Idle VI of {@code owner}, Reliable Delivery, with a ptag of its own and no CQ. */
    private static int createVi(final SocketlessConnection owner)
    {
        final int ptag = owner.send(DriverProtocol.VIA_PTAG_CREATE).viaHandle();
        return owner.send(DriverProtocol.VIA_VI_CREATE, ptag, 0, ViTableEntry.RELIABLE_DELIVERY, 1024, ViTableEntry.NO_CQ,
            ViTableEntry.NO_CQ).viaVi().vi();
    }

    private SocketlessConnection.Buffer allocate(final int bytes)
    {
        return process.send(DriverProtocol.BUFFER_ALLOCATE, bytes, 0, 0).buffer();
    }

    private MemoryRegionEntry region(final int handle)
    {
        return new MemoryRegionEntry().wrap(sdram, (int)via.regionOffset(MemoryRegionEntry.slot(handle)));
    }

    private ViTableEntry vi(final int vi)
    {
        return new ViTableEntry().wrap(sdram, (int)via.viOffset(vi));
    }

    private int protectionLockCount(final long address)
    {
        return ProtectionTableLayout.lockCount(sdram.getIntVolatile((int)layout.protectionEntryOffset(address)));
    }
}
