package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.DriverCommandEntry;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.GroupTableLayout;
import org.qnix.abi.HostClock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessStartTicks;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ProtectionTableLayout;
import org.qnix.abi.PublishedTables;
import org.qnix.abi.VniLayout;
import org.qnix.firmware.NodeImage;

/**
 * The driver's registration and de-registration steps (thesis 3.4) as a process asks for them, through
 * {@link DriverRequests} with no socket, over real node images and NIC control programs running on
 * threads: what the driver writes into the Process Table, the Process Flag Array and the Host Process
 * Structures, and the specific reply to each request it refuses.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ProcessRegistrationTest
{
    private static final long TIMEOUT_MS = 20_000;
    private static final int PID = (int)ProcessHandle.current().pid();

    @TempDir
    Path base;

    private DriverTestCluster cluster;

    @AfterEach
    void tearDown()
    {
        if (null != cluster)
        {
            cluster.close();
        }
    }

    @Test
    void registrationFillsTheProcessTableEntryAndTheHostProcessStructures() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final NodeImage image = cluster.images.get(0);
        final AtomicBuffer sdram = image.sdram();
        final AtomicBuffer host = image.hostMemory();
        final NicSdramLayout layout = image.sdramLayout();
        final SocketlessConnection process = cluster.connect(0);

        final SocketlessConnection.Registered r = process.register(1, 0, 1, 1, TIMEOUT_MS).registered();
        assertTrue(process.registerRequestSeen());
        assertTrue(process.registrationHeld(), "exempt from the idle rule while registered");
        assertEquals(ProcessTableLayout.nicPid(r.index()), r.nicPid());
        assertEquals(layout.vniOffset(r.index()), r.vniAddress());
        assertEquals(layout.vni().length(), r.vniLength());
        assertEquals(PID, host.getIntVolatile((int)image.hostLayout().processFlagOffset(r.index())), "Process Flag Array");

        final int entry = (int)layout.processEntryOffset(r.index());
        assertEquals(PID, sdram.getIntVolatile(entry + ProcessTableLayout.PID_OFFSET));
        assertEquals(ProcessTableLayout.STATE_REGISTERED, sdram.getIntVolatile(entry + ProcessTableLayout.STATE_OFFSET));
        assertEquals(1, sdram.getInt(entry + ProcessTableLayout.NAME_AI_OFFSET));
        assertEquals(0, sdram.getInt(entry + ProcessTableLayout.NAME_PI_OFFSET));
        assertEquals(1, sdram.getInt(entry + ProcessTableLayout.GROUP_OFFSET));
        assertEquals(1, sdram.getInt(entry + ProcessTableLayout.GROUP_SIZE_OFFSET));
        final long hps = r.hpsAddress();
        assertEquals(hps, sdram.getLong(entry + ProcessTableLayout.HPS_ADDRESS_OFFSET));
        assertEquals(hps + HostProcessStructuresLayout.sendDoorbellOffset(0),
            sdram.getLong(entry + ProcessTableLayout.SEND_DOORBELLS_OFFSET));
        assertEquals(hps + HostProcessStructuresLayout.receiveDoorbellOffset(cluster.params.contextsPerProcess(), 0),
            sdram.getLong(entry + ProcessTableLayout.RECEIVE_DOORBELLS_OFFSET));
        assertEquals(hps + HostProcessStructuresLayout.CQ_HEAD_OFFSET,
            sdram.getLong(entry + ProcessTableLayout.PROCESS_CQ_HEAD_OFFSET));

        // The Host Process Structures page: the VNI's parts where the process maps them (thesis 3.4, step 4).
        final VniLayout vni = layout.vni();
        final long v = r.vniAddress();
        assertEquals(v + vni.commandQueueOffset(), host.getLong((int)hps + HostProcessStructuresLayout.COMMAND_QUEUE_ADDRESS_OFFSET));
        assertEquals(v + vni.sendContextListOffset(),
            host.getLong((int)hps + HostProcessStructuresLayout.SEND_CONTEXTS_ADDRESS_OFFSET));
        assertEquals(v + vni.receiveContextListOffset(),
            host.getLong((int)hps + HostProcessStructuresLayout.RECEIVE_CONTEXTS_ADDRESS_OFFSET));
        assertEquals(v + vni.contextRegionsOffset(),
            host.getLong((int)hps + HostProcessStructuresLayout.CONTEXT_REGIONS_ADDRESS_OFFSET));
        assertEquals(v + vni.bufferPoolOffset(), host.getLong((int)hps + HostProcessStructuresLayout.BUFFER_POOL_ADDRESS_OFFSET));
        assertEquals(vni.length(), host.getLong((int)hps + HostProcessStructuresLayout.VNI_LENGTH_OFFSET));
        // Non-swappable: locked for the process's life.
        final int hpsProtection = sdram.getIntVolatile((int)layout.protectionEntryOffset(hps));
        assertEquals(r.nicPid(), ProtectionTableLayout.owner(hpsProtection));
        assertEquals(1, ProtectionTableLayout.lockCount(hpsProtection));

        assertTrue(PublishedTables.names(sdram, layout).stream()
            .anyMatch(n -> n.name().equals(new ProcessName(1, 0)) && n.node().equals(image.node())), "Name Table");
        assertFalse(process.hasReply());
    }

    @Test
    void deregistrationFreesTheEntryTheFlagThePagesAndTheName() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final NodeImage image = cluster.images.get(0);
        final int freeBefore = freePages(image);
        final SocketlessConnection process = cluster.connect(0);
        final SocketlessConnection.Registered r = process.register(1, 0, 1, 1, TIMEOUT_MS).registered();
        final int region = process.send(DriverProtocol.BUFFER_ALLOCATE, 2048, 0, 1).buffer().id();
        process.send(DriverProtocol.BUFFER_LOCK, region).lockCount();
        assertTrue(freePages(image) < freeBefore);

        process.send(DriverProtocol.DEREGISTER).deregistered();
        assertFalse(process.registrationHeld(), "idle again once de-registered");
        assertDeregistered(image, r, freeBefore);
        assertNull(process.requests.registered());
        process.send(DriverProtocol.BUFFER_LOCK, region).failed();

        // The same name registers again afterwards, through the same connection.
        process.register(1, 0, 1, 1, TIMEOUT_MS).registered();
    }

    /**
     * A connection that ends in the middle of a request while its process lives is what a library's
     * watchdog does to a driver that stopped answering (a debugger in the daemon, SIGSTOP): the process
     * is de-registered (its name is free again), but it may still map its VNI, its Host Process Structures
     * and its buffers, so its entry and its pages stay held until it exits. Given out at once, they let it
     * read and write the next owner's data. A process already gone is released at once.
     */
    @Test
    void aConnectionLostMidRequestWithItsProcessAliveHoldsItsEntryAndPagesUntilItExits() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final NodeImage image = cluster.images.get(0);
        final int freeBefore = freePages(image);
        final Process alive = new ProcessBuilder("sleep", "600").start();
        try
        {
            final SocketlessConnection lost = cluster.connect(0, (int)alive.pid());
            final SocketlessConnection.Registered r = lost.register(1, 0, 1, 1, TIMEOUT_MS).registered();
            lost.send(DriverProtocol.BUFFER_POOL, 2).buffer();
            lost.hangUp(false);
            assertThrows(UncheckedIOException.class, () -> lost.request(DriverProtocol.BUFFER_POOL, 1));
            lost.close();

            final int flag = (int)image.hostLayout().processFlagOffset(r.index());
            assertEquals((int)alive.pid(), image.hostMemory().getIntVolatile(flag), "the entry is not claimable");
            assertTrue(freePages(image) < freeBefore, "its pages are not free");
            final ProcessRegistrar registrar = cluster.registrars.get(0);
            assertEquals(0, registrar.releaseQuarantined(), "held while the process lives");
            final SocketlessConnection next = cluster.connect(0);
            final SocketlessConnection.Registered again = next.register(1, 0, 1, 1, TIMEOUT_MS).registered();
            assertNotEquals(r.index(), again.index(), "its name registers again at once, in another entry");
            next.send(DriverProtocol.DEREGISTER).deregistered();

            alive.destroyForcibly().waitFor();
            assertEquals(1, registrar.releaseQuarantined(), "released once it exited");
            assertDeregistered(image, r, freeBefore);
        }
        finally
        {
            alive.destroyForcibly();
        }

        final Process gone = new ProcessBuilder("sleep", "600").start();
        final SocketlessConnection lostDead = cluster.connect(0, (int)gone.pid());
        final SocketlessConnection.Registered d = lostDead.register(1, 0, 1, 1, TIMEOUT_MS).registered();
        lostDead.hangUp(false);
        gone.destroyForcibly().waitFor();
        assertThrows(UncheckedIOException.class, () -> lostDead.request(DriverProtocol.BUFFER_POOL, 1));
        lostDead.close();
        assertDeregistered(image, d, freeBefore);
    }

    @Test
    void aConnectionThatEndsDeregistersItsProcessAsAtExit() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final NodeImage image = cluster.images.get(0);
        final int freeBefore = freePages(image);
        final SocketlessConnection process = cluster.connect(0);
        final SocketlessConnection.Registered r = process.register(1, 0, 1, 1, TIMEOUT_MS).registered();
        process.send(DriverProtocol.BUFFER_POOL, 2).buffer();

        process.close();
        assertDeregistered(image, r, freeBefore);
        cluster.connect(0).register(1, 0, 1, 1, TIMEOUT_MS).registered();
    }

    @Test
    void aBadRegistrationIsRefusedBeforeAnyEntryIsClaimed() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final SocketlessConnection process = cluster.connect(0);
        final int t = cluster.params.nameTableEntries();

        assertRefused(process.register(1, 0, 2, 1, TIMEOUT_MS), "names group 2: a process registers in its application's group");
        assertTrue(process.registerRequestSeen());
        assertFalse(process.registrationHeld(), "a refused registration leaves the connection idle");
        assertRefused(process.register(1, 0, 1, 0, TIMEOUT_MS), "bad registration request: pid " + PID + ", group size 0 (1.." + t);
        assertRefused(process.register(1, 0, 1, t + 1, TIMEOUT_MS), "group size " + (t + 1));
        assertRefused(process.register(1, 0, 1, 1, 0L), "timeout 0 ms");
        assertRefused(cluster.connect(0, 0).register(1, 0, 1, 1, TIMEOUT_MS), "bad registration request: pid 0");
        assertNoEntryClaimed(cluster.images.get(0));
        assertNull(process.requests.registered());

        // Still free to register properly.
        process.register(1, 0, 1, 1, TIMEOUT_MS).registered();
    }

    @Test
    void aNameOrAConnectionRegistersOnce() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final SocketlessConnection first = cluster.connect(0);
        first.register(1, 0, 1, 1, TIMEOUT_MS).registered();

        assertRefused(first.register(2, 0, 2, 1, TIMEOUT_MS), "this connection already registered (1,0)");
        assertRefused(cluster.connect(0).register(1, 0, 1, 1, TIMEOUT_MS), "name (1,0) is already registered on node");
        final SocketlessConnection third = cluster.connect(0);
        third.register(3, 0, 3, 1, TIMEOUT_MS).registered();
        assertRefused(third.register(3, 1, 3, 2, TIMEOUT_MS), "this connection already registered (3,0)");
        assertEquals(new ProcessName(3, 0), third.requests.registered().name());
    }

    @Test
    void theCallersPidIsTheKernelsNotTheOneItClaims() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final SocketlessConnection process = cluster.connect(0);
        final SocketlessConnection.Registered r =
            process.send(DriverProtocol.REGISTER, 1, 0, 1, 1, PID + 1, TIMEOUT_MS).registered();
        final NodeImage image = cluster.images.get(0);
        assertEquals(PID, image.sdram().getIntVolatile((int)image.sdramLayout().processEntryOffset(r.index()) +
            ProcessTableLayout.PID_OFFSET));
        assertEquals(PID, image.hostMemory().getIntVolatile((int)image.hostLayout().processFlagOffset(r.index())));
    }

    @Test
    void whenEveryVirtualNetworkInterfaceIsTakenTheNextRegistrationIsRefused() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final int p = cluster.params.maxProcessesPerNic();
        for (int i = 1; i <= p; i++)
        {
            cluster.connect(0).register(i, 0, i, 1, TIMEOUT_MS).registered();
        }
        assertRefused(cluster.connect(0).register(p + 1, 0, p + 1, 1, TIMEOUT_MS),
            "no free Virtual Network Interface on node 0-0: all P=" + p + " are in use");
    }

    @Test
    void aGroupThatDoesNotCompleteTimesOutNamingItsMissingMembersAndStaysRegistered() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final NodeImage image = cluster.images.get(0);
        final int freeBefore = freePages(image);
        final SocketlessConnection process = cluster.connect(0);

        final SocketlessConnection.TimedOut timedOut = process.register(4, 1, 4, 3, 300L).timedOut();
        assertEquals(List.of(new ProcessName(4, 0), new ProcessName(4, 2)), timedOut.missing());
        assertTrue(timedOut.message().startsWith("qx_init of (4,1) timed out after 300 ms: group 4 has 1 of 3"),
            timedOut.message());
        final ProcessRegistrar.Registered registered = process.requests.registered();
        assertNotNull(registered, "a process that timed out stays registered until it de-registers");
        assertTrue(process.registrationHeld(), "and its connection is not idle");

        process.close();
        assertEquals(0, image.hostMemory().getIntVolatile((int)image.hostLayout().processFlagOffset(registered.index())));
        assertEquals(freeBefore, freePages(image));
    }

    @Test
    void aProcessThatDiesBeforeItsRegisteredAnswerIsDeregisteredAtOnce() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final NodeImage image = cluster.images.get(0);
        final int freeBefore = freePages(image);
        // kill -9 between the NIC's registration and the driver's answer: the answer's write fails.
        assertThrows(IOException.class, () -> cluster.registrars.get(0).register(new ProcessName(9, 0), 9, 1,
            PID, TIMEOUT_MS, brokenPipe(), () -> false));
        assertNoEntryClaimed(image);
        assertEquals(freeBefore, freePages(image), "its pages back");
        assertTrue(PublishedTables.names(image.sdram(), image.sdramLayout()).isEmpty(), "no NIC knows it");
        // And its name can register again at once.
        assertNotNull(cluster.connect(0).register(9, 0, 9, 1, TIMEOUT_MS).registered());
    }

    /**
     * The client closed its socket during a registration that then timed out, its process alive: the
     * TIMED_OUT cannot be written, and no connection will ever de-register what the driver holds for it.
     */
    @Test
    void aRegistrationWhoseTimedOutAnswerCannotBeWrittenIsDeregistered() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final NodeImage image = cluster.images.get(0);
        final int freeBefore = freePages(image);
        // Group 9 of 2 members: the other never comes, so the registration times out.
        assertThrows(IOException.class, () -> cluster.registrars.get(0).register(new ProcessName(9, 0), 9, 2,
            PID, 300, brokenPipe(), () -> false));

        assertNoEntryClaimed(image);
        assertEquals(freeBefore, freePages(image), "its pages back");
        assertTrue(cluster.registry.members(9).isEmpty(), "the cluster registry forgot it");
        final long deadline = HostClock.millis() + TIMEOUT_MS;
        while (PublishedTables.names(image.sdram(), image.sdramLayout()).stream()
            .anyMatch(n -> n.name().equals(new ProcessName(9, 0))))
        {
            assertTrue(HostClock.millis() < deadline, "Delete_Process took the name out of the Name Table");
            Thread.sleep(1);
        }
        assertNotNull(cluster.connect(0).register(9, 0, 9, 1, TIMEOUT_MS).registered(), "its name registers again");
    }

    /**
     * A registration waiting for a group that never completes, with a timeout of years, whose process
     * closes its connection but lives on: the driver sees the hang-up at its next look and ends the
     * wait, releasing the entry and the name (they register again at once), rather than holding them
     * for the timeout.
     */
    @Test
    void aRegistrationWhoseCallerHangsUpEndsAndHoldsNothing() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final SocketlessConnection first = cluster.connect(0);
        final CompletableFuture<Void> waiting = CompletableFuture.runAsync(() ->
        {
            try
            {
                first.register(6, 0, 6, 2, Long.MAX_VALUE);
            }
            catch (final UncheckedIOException expected)
            {
                // Nothing to read a reply.
            }
        });
        final long deadline = HostClock.millis() + TIMEOUT_MS;
        while (cluster.registry.members(6).isEmpty())
        {
            assertTrue(HostClock.millis() < deadline, "the first member was admitted");
            Thread.sleep(1);
        }

        first.hangUp(true);
        waiting.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        assertTrue(cluster.registry.members(6).isEmpty(), "the cluster registry forgot it");
        assertNotNull(cluster.connect(0).register(6, 0, 6, 1, TIMEOUT_MS).registered(), "its name registers again");
    }

    /** A timeout no clock can add: the registration waits as long as its process lives, here for its group. */
    @Test
    void aHugeRegistrationTimeoutWaitsForTheGroup() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final SocketlessConnection first = cluster.connect(0);
        final CompletableFuture<Integer> firstReply = CompletableFuture.supplyAsync(() ->
        {
            first.register(6, 0, 6, 2, Long.MAX_VALUE);
            return first.nextReplyType();
        });
        // The second member comes once the first is admitted (or already answered, before the fix).
        final long deadline = HostClock.millis() + TIMEOUT_MS;
        while (cluster.registry.members(6).isEmpty() && !firstReply.isDone())
        {
            assertTrue(HostClock.millis() < deadline, "the first member was admitted");
            Thread.sleep(1);
        }
        cluster.connect(0).register(6, 1, 6, 2, TIMEOUT_MS).registered();
        assertEquals(DriverProtocol.REGISTERED, firstReply.get(TIMEOUT_MS, TimeUnit.MILLISECONDS),
            "the first member waited for the second rather than timing out at once");
        first.registered();

        cluster.connect(0).viaRegister(Long.MAX_VALUE).viaRegistered();
    }

    @Test
    void aGroupAcrossNodesRegistersAndItsQueryNamesEachMembersNic() throws Exception
    {
        cluster = new DriverTestCluster(base, 2, true);
        final SocketlessConnection first = cluster.connect(0);
        final SocketlessConnection second = cluster.connect(1);
        // Each registration waits for the other: one of them on another thread.
        final CompletableFuture<SocketlessConnection.Registered> other =
            CompletableFuture.supplyAsync(() -> second.register(5, 1, 5, 2, TIMEOUT_MS).registered());
        first.register(5, 0, 5, 2, TIMEOUT_MS).registered();
        other.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);

        final SocketlessConnection.GroupInfo group = first.send(DriverProtocol.GROUP_QUERY, 5).groupInfo();
        assertEquals(2, group.expectedSize());
        assertEquals(List.of(
            new SocketlessConnection.Member(new ProcessName(5, 0), cluster.images.get(0).node()),
            new SocketlessConnection.Member(new ProcessName(5, 1), cluster.images.get(1).node())), group.members());
        assertEquals(new SocketlessConnection.GroupInfo(0, List.of()),
            second.send(DriverProtocol.GROUP_QUERY, 9).groupInfo(), "an unknown group");
        assertEquals(group, cluster.connect(1).send(DriverProtocol.GROUP_QUERY, 5).groupInfo(), "unregistered callers may ask");
    }

    /**
     * The driver's advice in REGISTERED (issue 13): of a group of four processes on a machine of two CPUs,
     * rank 3 runs on the NICs' CPU, whatever order the replies go out in; a process that leaves takes its
     * place out of the count, so the next VIA process goes on the NICs' CPU.
     */
    @Test
    void rankThreeOfAGroupOfFourIsPlacedOnTheNicsCpuAndALeaverLeavesTheCount() throws Exception
    {
        cluster = new DriverTestCluster(base, 2, true);
        final List<Process> processes = new ArrayList<>();
        try
        {
            final List<CompletableFuture<SocketlessConnection.Registered>> replies = new ArrayList<>();
            final List<SocketlessConnection> members = new ArrayList<>();
            for (int pi = 0; pi < 5; pi++)
            {
                processes.add(new ProcessBuilder("sleep", "600").start());
            }
            // Ranks register in reverse: the placement follows the rank, not the order.
            for (int pi = 3; pi >= 0; pi--)
            {
                final SocketlessConnection member = cluster.connect(pi % 2, (int)processes.get(pi).pid());
                members.add(0, member);
                final int rank = pi;
                replies.add(0, CompletableFuture.supplyAsync(() -> member.register(7, rank, 7, 4, TIMEOUT_MS).registered()));
            }
            final List<Boolean> onNicCpu = new ArrayList<>();
            for (final CompletableFuture<SocketlessConnection.Registered> reply : replies)
            {
                onNicCpu.add(reply.get(TIMEOUT_MS, TimeUnit.MILLISECONDS).onNicCpu());
            }
            assertEquals(List.of(false, false, false, true), onNicCpu);
            assertEquals(1, cluster.registry.placement().onNicCpuCount());

            members.get(3).send(DriverProtocol.DEREGISTER).deregistered();
            assertEquals(0, cluster.registry.placement().onNicCpuCount(), "rank 3 left");
            final SocketlessConnection via = cluster.connect(0, (int)processes.get(4).pid());
            assertTrue(via.viaRegister(TIMEOUT_MS).viaRegistered().onNicCpu(), "three off it, none on it");
        }
        finally
        {
            for (final Process process : processes)
            {
                process.destroyForcibly().waitFor();
            }
        }
    }

    /**
     * A group query while the NIC's Group Table has no consistent snapshot (its sequence odd: a write
     * that never ends, as with a NIC killed or stopped at a breakpoint half-way through): answered
     * FAILED NIC_DEAD after the read's 2 s, and the caller keeps its connection and its registration.
     */
    @Test
    void aGroupQueryWithNoConsistentTableIsAnsweredAndCostsTheCallerNothing() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final SocketlessConnection process = cluster.connect(0);
        process.register(5, 0, 5, 1, TIMEOUT_MS).registered();
        final NodeImage image = cluster.images.get(0);
        final int sequence = (int)image.sdramLayout().groupTableOffset() + GroupTableLayout.SEQUENCE_OFFSET;
        final long even = image.sdram().getLongVolatile(sequence);

        image.sdram().putLongVolatile(sequence, even + 1);
        final SocketlessConnection.Failed failed = process.send(DriverProtocol.GROUP_QUERY, 5).failed();
        assertEquals(DriverProtocol.NIC_DEAD, failed.code(), failed.message());
        assertTrue(failed.message().contains("no consistent snapshot"), failed.message());

        image.sdram().putLongVolatile(sequence, even + 2);
        assertEquals(1, process.send(DriverProtocol.GROUP_QUERY, 5).groupInfo().members().size(),
            "the same connection asks again");
        process.send(DriverProtocol.DEREGISTER).deregistered();
    }

    @Test
    void aRegistrationWithADeadNicFailsAtOnceNamingIt() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, false);
        final SocketlessConnection.Failed failed = cluster.connect(0).register(1, 0, 1, 1, TIMEOUT_MS).failed();
        assertEquals(DriverProtocol.NIC_DEAD, failed.code());
        assertTrue(failed.message().contains("the NIC control program of node 0-0 is not running"), failed.message());
        assertNoEntryClaimed(cluster.images.get(0));
    }

    @Test
    void anUnknownRequestIsRefusedAndEndsTheConnection() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, false);
        final SocketlessConnection process = cluster.connect(0);
        assertFalse(process.request(99));
        assertRefused(process, "unknown driver request 99");
    }

    @Test
    void aRequestCutShortIsAnEndOfStreamAndAHalfRegisterLeavesTheConnectionIdle() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final SocketlessConnection process = cluster.connect(0);
        final UncheckedIOException cut = assertThrows(UncheckedIOException.class,
            () -> process.request(DriverProtocol.REGISTER, 1, 0, 1, 1));
        assertTrue(cut.getCause() instanceof EOFException, cut.toString());
        assertFalse(process.registerRequestSeen(), "the idle check still closes a connection that sent half a REGISTER");
        assertFalse(process.hasReply());
        assertNoEntryClaimed(cluster.images.get(0));

        final UncheckedIOException cutVia = assertThrows(UncheckedIOException.class,
            () -> process.request(DriverProtocol.VIA_REGISTER, PID));
        assertTrue(cutVia.getCause() instanceof EOFException, cutVia.toString());
        assertFalse(process.registerRequestSeen(), "nor half a VIA_REGISTER");
        assertNoEntryClaimed(cluster.images.get(0));

        final UncheckedIOException cutBuffer = assertThrows(UncheckedIOException.class,
            () -> process.request(DriverProtocol.BUFFER_ALLOCATE, 1024));
        assertTrue(cutBuffer.getCause() instanceof EOFException, cutBuffer.toString());
    }

    /**
     * A NIC that is only silent (its state RUNNING, its heartbeat old: a firmware at a debugger breakpoint)
     * may resume with the process resident and ring doorbells into its Host Process Structures: the
     * driver holds its entry, pages and name until the NIC takes Delete_Process. Before, it released them
     * at once, for the next process to be given.
     */
    @Test
    void aProcessWhoseSilentNicHasNotTakenItsDeletionKeepsItsEntryAndPagesUntilTheNicTakesIt() throws Exception
    {
        final OnSilentNic p = processOnSilentNic(false);

        p.process().send(DriverProtocol.DEREGISTER).deregistered();
        final ProcessRegistrar registrar = cluster.registrars.get(0);
        assertEquals(0, registrar.releaseQuarantined(), "nothing completed Delete_Process");
        p.assertHeld();
        assertEquals(1, cluster.registry.members(1).size(), "its NIC still knows the name");

        // The NIC resumes and takes the command, as its Driver Command Reader does.
        assertEquals(1, completeDriverCommands(p.image(), DriverCommand.DELETE_PROCESS));
        assertEquals(1, registrar.releaseQuarantined());
        p.assertReleased();
        assertTrue(cluster.registry.members(1).isEmpty(), "the name is free again");
        assertEquals(0, registrar.releaseQuarantined(), "released once");
    }

    /** A NIC seen stopped does no DMA any more: what a VIA process held for it is released then. */
    @Test
    void aViaProcessWhoseSilentNicHasNotTakenItsDeletionIsReleasedOnceTheNicStops() throws Exception
    {
        final OnSilentNic p = processOnSilentNic(true);

        p.process().close();
        final ProcessRegistrar registrar = cluster.registrars.get(0);
        assertEquals(0, registrar.releaseQuarantined(), "nothing completed Delete_Via_Process");
        p.assertHeld();

        p.image().sdram().putIntVolatile(controlProgram(p.image()) + ControlProgramLayout.STATE_OFFSET,
            ControlProgramLayout.STATE_STOPPED);
        assertEquals(1, registrar.releaseQuarantined());
        p.assertReleased();
    }

    /**
     * A firmware JVM killed with SIGKILL leaves its NIC RUNNING and silent, as a breakpoint does. Once
     * the process that ran the control program is gone, the NIC does no DMA any more: what the driver held
     * back for it is released at the next check, and the NIC-dead message names the gone process.
     */
    @Test
    void aProcessHeldForASilentNicIsReleasedOnceTheNicsFirmwareProcessIsGone() throws Exception
    {
        final OnSilentNic p = processOnSilentNic(false);
        final NodeImage image = p.image();
        final Process firmware = new ProcessBuilder("sleep", "600").start();
        try
        {
            // What the control program writes at its start, as if this process ran it.
            final int control = controlProgram(image);
            image.sdram().putLongVolatile(control + ControlProgramLayout.PID_OFFSET, firmware.pid());
            image.sdram().putLongVolatile(control + ControlProgramLayout.PROCESS_START_TICKS_OFFSET,
                ProcessStartTicks.of(firmware.pid()));

            p.process().send(DriverProtocol.DEREGISTER).deregistered();
            final ProcessRegistrar registrar = cluster.registrars.get(0);
            assertEquals(0, registrar.releaseQuarantined(), "its firmware process lives: the NIC may resume");
            p.assertHeld();

            firmware.destroyForcibly().waitFor();
            final String dead = registrar.viaTables().deadNic();
            assertTrue(dead.contains("firmware process " + firmware.pid() + " is gone"), dead);
            assertEquals(1, registrar.releaseQuarantined());
            p.assertReleased();
        }
        finally
        {
            firmware.destroyForcibly();
        }
    }

    /** A process registered on the one NIC of the test's cluster, which then went silent ({@link #silence}). */
    private record OnSilentNic(NodeImage image, int freeBefore, SocketlessConnection process, int index, int nicPid,
        long hpsAddress)
    {
        /** The driver still holds its entry, flag and pages for the NIC. */
        void assertHeld()
        {
            ProcessRegistrationTest.assertHeld(image, index, hpsAddress, nicPid, freeBefore);
        }

        void assertReleased()
        {
            ProcessRegistrationTest.assertReleased(image, index, hpsAddress, freeBefore);
        }
    }

    /** @return a QNIX process, or a VIA one, registered on a new one-node cluster whose NIC then went silent. */
    private OnSilentNic processOnSilentNic(final boolean via) throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        final NodeImage image = cluster.images.get(0);
        final int freeBefore = freePages(image);
        final SocketlessConnection process = cluster.connect(0);
        final OnSilentNic registered;
        if (via)
        {
            final SocketlessConnection.ViaRegistered r = process.viaRegister(TIMEOUT_MS).viaRegistered();
            registered = new OnSilentNic(image, freeBefore, process, r.index(), r.nicPid(), r.hpsAddress());
        }
        else
        {
            final SocketlessConnection.Registered r = process.register(1, 0, 1, 1, TIMEOUT_MS).registered();
            registered = new OnSilentNic(image, freeBefore, process, r.index(), r.nicPid(), r.hpsAddress());
        }
        silence(image);
        return registered;
    }

    /** Stops the NIC's control program and makes it look as one that only stopped beating: RUNNING, silent. */
    private void silence(final NodeImage image)
    {
        cluster.stopNic(0);
        final AtomicBuffer sdram = image.sdram();
        final int control = controlProgram(image);
        sdram.putLongVolatile(control + ControlProgramLayout.HEARTBEAT_TIME_OFFSET,
            HostClock.millis() - 10 * ControlProgramLayout.HEARTBEAT_TIMEOUT_MS);
        sdram.putIntVolatile(control + ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
        assertNotNull(cluster.registrars.get(0).viaTables().deadNic(), "the driver takes the NIC for dead");
    }

    private static int controlProgram(final NodeImage image)
    {
        return (int)image.sdramLayout().controlProgramOffset();
    }

    /** Takes each posted {@code command} off the Driver Command Queue, ringing its doorbell DONE. @return how many. */
    private static int completeDriverCommands(final NodeImage image, final int command)
    {
        final DriverCommandEntry entry = new DriverCommandEntry();
        int completed = 0;
        for (int position = 0; position < image.parameters().driverCommandQueueEntries(); position++)
        {
            entry.wrap(image.sdram(), (int)image.sdramLayout().driverCommandOffset(position));
            if (command == entry.command())
            {
                entry.consume();
                image.hostMemory().putIntRelease((int)image.hostLayout().driverDoorbellOffset(position), Doorbell.DONE);
                completed++;
            }
        }
        return completed;
    }

    private static void assertHeld(final NodeImage image, final int index, final long hps, final int nicPid,
        final int freeBefore)
    {
        assertEquals(PID, image.hostMemory().getIntVolatile((int)image.hostLayout().processFlagOffset(index)),
            "the Process Table entry is not claimable");
        assertTrue(freePages(image) < freeBefore, "its pages are not free");
        assertEquals(nicPid, ProtectionTableLayout.owner(
            image.sdram().getIntVolatile((int)image.sdramLayout().protectionEntryOffset(hps))),
            "its Host Process Structures page is still its own");
    }

    private static void assertReleased(final NodeImage image, final int index, final long hps, final int freeBefore)
    {
        assertEquals(0, image.hostMemory().getIntVolatile((int)image.hostLayout().processFlagOffset(index)), "flag");
        assertEquals(freeBefore, freePages(image), "every page back");
        assertEquals(0, image.sdram().getIntVolatile((int)image.sdramLayout().protectionEntryOffset(hps)));
    }

    static void assertRefused(final SocketlessConnection connection, final String expected)
    {
        final SocketlessConnection.Failed failed = connection.failed();
        assertEquals(DriverProtocol.REFUSED, failed.code(), failed.message());
        assertTrue(failed.message().contains(expected), failed.message());
    }

    static int freePages(final NodeImage image)
    {
        return image.hostMemory().getIntVolatile(
            (int)(image.hostLayout().nicStatusOffset() + HostMemoryLayout.NIC_STATUS_FREE_PAGES_OFFSET));
    }

    /** @return replies to a connection whose other end is gone: every write fails, as a closed socket's. */
    private static DriverReplies brokenPipe()
    {
        return new DriverReplies(SocketlessConnection.breakablePipe(OutputStream.nullOutputStream(), () -> true));
    }

    private static void assertNoEntryClaimed(final NodeImage image)
    {
        for (int i = 0; i < image.parameters().maxProcessesPerNic(); i++)
        {
            assertEquals(0, image.hostMemory().getIntVolatile((int)image.hostLayout().processFlagOffset(i)), "flag " + i);
        }
    }

    private static void assertDeregistered(final NodeImage image, final SocketlessConnection.Registered r,
        final int freeBefore)
    {
        final AtomicBuffer sdram = image.sdram();
        final NicSdramLayout layout = image.sdramLayout();
        assertEquals(0, sdram.getIntVolatile((int)layout.processEntryOffset(r.index()) + ProcessTableLayout.PID_OFFSET));
        assertEquals(0, image.hostMemory().getIntVolatile((int)image.hostLayout().processFlagOffset(r.index())));
        assertEquals(freeBefore, freePages(image), "every page back, the Host Process Structures page too");
        assertEquals(0, sdram.getIntVolatile((int)layout.protectionEntryOffset(r.hpsAddress())));
        // The NIC takes the name out of its Name Table when its own Delete_Process broadcast comes back.
        final long deadline = HostClock.millis() + TIMEOUT_MS;
        while (PublishedTables.names(sdram, layout).stream().anyMatch(n -> n.name().equals(new ProcessName(1, 0))))
        {
            assertTrue(HostClock.millis() < deadline, "Delete_Process took the name out of the Name Table");
            Thread.onSpinWait();
        }
    }
}
