package org.qnix.daemon;

import java.io.IOException;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.HostClock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicMemoryInfo;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessFlagArray;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessStartTicks;
import org.qnix.abi.ProcessTableEntry;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.PublishedTables;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplResult;
import org.qnix.abi.VniLayout;
import org.qnix.firmware.NodeImage;

/**
 * The registration and de-registration steps of one node's driver (thesis 3.4): a Process Table entry
 * claimed in the Process Flag Array, its VNI cleared, the Host Process Structures pages, the entry
 * written, New_Process posted and the group awaited; and back again with Delete_Process, the process's
 * pages freed and the entry released. Shared by every connection of the node: the Process Flag Array
 * is claimed under this object's monitor, the allocator, the Driver Command Queue writer and the
 * cluster registry are synchronized.
 *
 * <p>A process whose NIC does not complete its deletion keeps its entry, pages and name until it does
 * ({@link DeletionQuarantine}); one whose connection ended mid-request while it lived keeps its entry and
 * pages until it exits ({@link LingeringProcesses}).
 *
 * <pre>{@code
 * ProcessRegistrar registrar = new ProcessRegistrar(image, registry, heartbeats);
 * ProcessRegistrar.Registered p = registrar.register(new ProcessName(1, 0), 1, 2, pid, 10_000, replies, hungUp);
 * ...
 * registrar.deregister(p, false);   // DEREGISTER, or the connection closed between requests
 * }</pre>
 */
final class ProcessRegistrar
{
    /** A wait for the NIC looks again after this at first: a registration takes a few duty cycles. */
    private static final long POLL_MS = 1;
    /** A wait for the NIC that has lasted {@code w} ms looks again {@code w >> 3} ms later ({@link #pause}). */
    private static final int POLL_BACK_OFF_SHIFT = 3;
    /** ... and at most this far apart: a group completes at most this long before its first members know. */
    private static final long POLL_MAX_MS = 20;
    private static final long LIVENESS_CHECK_MS = 50;
    /** How long a registration waits for room in the Driver Command Queue at most ({@link ViaTables#COMMAND_TIMEOUT_MS}). */
    private static final long POST_TIMEOUT_MS = ViaTables.COMMAND_TIMEOUT_MS;

    private final NicCoordinates node;
    private final ClusterParameters params;
    private final NicSdramLayout layout;
    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    private final PageAllocator allocator;
    private final DriverCommandQueueWriter commandQueue;
    private final ClusterRegistry registry;
    private final NicHeartbeats heartbeats;
    private final ViaTables viaTables;
    /** Processes whose NIC has not completed their deletion, held back until it does. */
    private final DeletionQuarantine quarantine;
    /** Processes that may still map what they were given, held back until they exit. */
    private final LingeringProcesses lingering = new LingeringProcesses();
    /** Guarded by this object's monitor: a claim is a look and a write. */
    private final ProcessFlagArray processFlags = new ProcessFlagArray();

    /**
     * A process registered through this driver, with its memory for DMA.
     *
     * @param index      its Process Table entry, VNI and Process Flag Array slot.
     * @param osStartTicks its process's start ({@link ProcessStartTicks}) at registration: who it is.
     * @param memory     the regions it holds and their lock counts.
     */
    record Registered(
        ProcessName name, int index, int osPid, long osStartTicks, int group, int groupSize,
        ProcessProtectionTable memory)
    {
    }

    /**
     * A VIA process registered through this driver (issue 14): its entry, its memory for DMA and its
     * VIA resources. It has no QNIX name; {@link #name()} only labels it in messages.
     */
    record ViaRegistered(ProcessName name, int index, int osPid, long osStartTicks, ProcessProtectionTable memory,
        ViaResources via, long hpsAddress, long structuresAddress, int structuresPages)
    {
    }

    /**
     * Takes over the node's page pool (its Translation and Protection Table is cleared) and the driver's
     * end of its Driver Command Queue.
     *
     * @param heartbeats of every NIC of the cluster: a registration needs them all.
     */
    ProcessRegistrar(final NodeImage image, final ClusterRegistry registry, final NicHeartbeats heartbeats)
    {
        this.node = image.node();
        this.params = image.parameters();
        this.layout = image.sdramLayout();
        final HostMemoryLayout hostLayout = image.hostLayout();
        this.sdram = image.sdram();
        this.host = image.hostMemory();
        processFlags.wrap(host, hostLayout, params.maxProcessesPerNic());
        this.registry = registry;
        this.heartbeats = heartbeats;
        final NicWakeUp wakeUp = image.wakeUp();
        this.allocator = new PageAllocator(host, hostLayout, sdram, layout, wakeUp);
        this.commandQueue = new DriverCommandQueueWriter(sdram, host, layout, hostLayout, wakeUp);
        this.viaTables = new ViaTables(sdram, layout, node, commandQueue, heartbeats, image.controlSegment());
        this.quarantine = new DeletionQuarantine(node, commandQueue, heartbeats, image.controlSegment(), this::release);
        registry.viaConnections().attach(node.packed(), viaTables);
    }

    /**
     * Releases the entries and pages of deleted processes whose NIC has since completed their deletion,
     * or stopped ({@link DeletionQuarantine#releaseCompleted}): from the driver's timer.
     *
     * @return how many entries were released.
     */
    int releaseQuarantined() throws InterruptedException
    {
        return quarantine.releaseCompleted() + releaseExited();
    }

    /** Frees the entries and pages {@link LingeringProcesses} kept whose process has exited. @return how many. */
    private int releaseExited()
    {
        final List<Integer> exited = lingering.exited();
        for (final int index : exited)
        {
            freeEntry(index);
            System.err.println("driver " + node + ": freed Process Table entry " + index + " and its pages: the " +
                "process whose connection failed mid-request has exited");
        }
        return exited.size();
    }

    /** @return the node's VIA tables (issue 14). */
    ViaTables viaTables()
    {
        return viaTables;
    }

    NicCoordinates node()
    {
        return node;
    }

    /**
     * Thesis 3.4, registration steps 1-6, answered on {@code replies}: REGISTERED, TIMED_OUT or FAILED.
     *
     * @param osPid  the caller's pid as the kernel gives it, never the one its request claims.
     * @param hungUp whether the caller closed its connection ({@link ClientHangUp}): the wait ends then,
     *               as when its process dies, and nothing is held.
     * @return the registered process, also after TIMED_OUT (it stays registered until it de-registers
     * or its connection closes), or null if the registration failed and nothing is held.
     */
    Registered register(final ProcessName name, final int group, final int groupSize, final int osPid,
        final long timeoutMs, final DriverReplies replies, final BooleanSupplier hungUp)
        throws IOException, InterruptedException
    {
        if (osPid <= 0 || groupSize < 1 || groupSize > params.nameTableEntries() || timeoutMs <= 0)
        {
            replies.refuse("bad registration request: pid " + osPid + ", group size " + groupSize +
                " (1.." + params.nameTableEntries() + "), timeout " + timeoutMs + " ms");
            return null;
        }
        if (group != name.ai())
        {
            replies.refuse("qx_init of " + name + " names group " + group + ": a process registers in its " +
                "application's group, named by its AI " + name.ai() + " (thesis 3.6); join other groups with joinGroup");
            return null;
        }
        final String deadAtStart = heartbeats.deadNic(HostClock.millis());
        if (null != deadAtStart)
        {
            replies.fail(DriverProtocol.NIC_DEAD, "qx_init of " + name + " cannot complete: " + deadAtStart);
            return null;
        }

        // Step 1: a free NIC Process Table entry, marked with the process's PID in the Process Flag Array.
        final int index = claimProcessTableEntry(osPid);
        if (index < 0)
        {
            replies.refuse("no free Virtual Network Interface on node " + node + ": all P=" +
                params.maxProcessesPerNic() + " are in use");
            return null;
        }
        final String refusal = registry.admit(
            new ClusterRegistry.Admitted(name, node, index, osPid, group, groupSize));
        if (null != refusal)
        {
            releaseProcessTableEntry(index);
            replies.refuse(refusal);
            return null;
        }

        // Step 4: the Host Process Structures pages, non-swappable (thesis 3.1): locked for life.
        final PageAllocator.Region hpsRegion = allocator.allocateContiguous(index,
            HostProcessStructuresLayout.pages(params.contextsPerProcess(), params.pageSize()));
        if (null == hpsRegion)
        {
            registry.remove(name, node, index);
            releaseProcessTableEntry(index);
            replies.refuse("host memory of node " + node + " is exhausted: no pages for the Host Process Structures");
            return null;
        }
        allocator.protect(hpsRegion, 1);
        final long hps = hpsRegion.address(0);
        final Registered registered = new Registered(name, index, osPid, ProcessStartTicks.of(osPid), group, groupSize,
            new ProcessProtectionTable(allocator, sdram, layout, node, name, index));

        // Step 3: the VNI statically tied to the entry, cleared of its previous owner's data.
        final long vni = layout.vniOffset(index);
        final VniLayout vniLayout = layout.vni();
        sdram.setMemory((int)vni, vniLayout.length(), (byte)0);
        initialiseHostProcessStructures(hps, vni, vniLayout);
        final ProcessTableEntry entry = writeProcessTableEntry(registered, hps);

        // Step 2: New_Process to the Driver Command Queue. The NIC takes it at once and rings its Driver
        // Doorbell; the registration's outcome is the Registration State it writes into the entry.
        // Room in the queue is waited for within the command timeout, not the caller's: the queue is full
        // only while the NIC takes no commands, and a caller's may be of years.
        final DriverCommandQueueWriter.Ticket ticket = commandQueue.post(
            DriverCommand.NEW_PROCESS, name, osPid, index, group, groupSize, postWaitMs(timeoutMs));
        if (null == ticket)
        {
            deregisterLocally(registered);
            replies.fail(Doorbell.NO_RESOURCES, commandQueueFull(timeoutMs));
            return null;
        }

        // Step 6: wait until the NIC took the command, then until the whole group is known to every NIC.
        final long started = HostClock.millis();
        final long deadline = started + timeoutMs;
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
                    deregister(registered, false);
                    replies.fail(doorbell, "NIC " + node + " refused New_Process for " + name + ": " +
                        Doorbell.name(doorbell) + (Doorbell.NO_RESOURCES == doorbell ? fullTables() : ""));
                    return null;
                }
                if (Doorbell.DONE == doorbell)
                {
                    commandQueue.release(ticket);
                    taken = true;
                }
            }
            // Writer: the NIC control program, with release semantics.
            final int state = taken ? entry.state() : -1;
            if (ProcessTableLayout.STATE_REGISTERED == state)
            {
                try
                {
                    // A member's rank is its PI (the group is its application's: checked above), so the
                    // same ranks are placed whoever of the group has registered or left by now.
                    final boolean onNicCpu = registry.placement().place(node, index, osPid,
                        registered.osStartTicks(), group, Math.max(0, Math.min(name.pi(), groupSize - 1)));
                    replies.registered(index, ProcessTableLayout.nicPid(index), vni, vniLayout.length(), hps, onNicCpu);
                }
                catch (final IOException ex)
                {
                    // The process died between the NIC's registration and this answer (kill -9 right after
                    // it showed up in the Process Table): every NIC knows it, and no connection will ever
                    // de-register it, so do it here as at process exit.
                    deregister(registered, false);
                    throw ex;
                }
                return registered;
            }
            if (ProcessTableLayout.STATE_FAILED == state)
            {
                deregister(registered, false);
                replies.fail(Doorbell.ABORTED, "NIC " + node + " aborted the registration of " + name);
                return null;
            }
            final long now = HostClock.millis();
            if (now >= nextLivenessCheck)
            {
                nextLivenessCheck = now + LIVENESS_CHECK_MS;
                if (!Processes.isAlive(osPid) || hungUp.getAsBoolean())
                {
                    // Nobody is left to read a reply: the process died, or closed its connection (a
                    // group that never completes, with a timeout of years, held its entry and pages).
                    giveUp(ticket, taken);
                    deregister(registered, false);
                    return null;
                }
                final String dead = heartbeats.deadNic(now);
                if (null != dead)
                {
                    // Every NIC must acknowledge New_Process: with one dead, waiting is for nothing.
                    giveUp(ticket, taken);
                    deregister(registered, false);
                    replies.fail(DriverProtocol.NIC_DEAD, "qx_init of " + name + " cannot complete: " + dead);
                    return null;
                }
            }
            if (now > deadline)
            {
                giveUp(ticket, taken);
                try
                {
                    timedOut(replies, name, group, groupSize, timeoutMs);
                }
                catch (final IOException ex)
                {
                    // The client closed its connection with its process alive: the exception skips the
                    // connection's record of the process, so nothing would ever de-register it.
                    deregister(registered, false);
                    throw ex;
                }
                return registered;
            }
            pause(started);
        }
    }

    /**
     * Sleeps before a wait for the NIC looks again: 1 ms at first, then an eighth of how long it has
     * waited, up to {@link #POLL_MAX_MS}. A qx_init waits here for the rest of its group, which may
     * take the whole init timeout (a member started late, by hand); at 1 ms a look, one such process cost
     * the daemon 0.018 cores for as long as it waited (30 s, {@code /proc/<pid>/stat}), and a registration
     * that completes within 15 ms is looked at as often as before.
     */
    static void pause(final long startedMs) throws InterruptedException
    {
        final long waited = HostClock.millis() - startedMs;
        Thread.sleep(Math.max(POLL_MS, Math.min(POLL_MAX_MS, waited >> POLL_BACK_OFF_SHIFT)));
    }

    /** Step 5: the Process Table entry; the PID last, so the NIC never sees half an entry. @return the entry. */
    private ProcessTableEntry writeProcessTableEntry(final Registered registered, final long hps)
    {
        final ProcessTableEntry entry = processTableEntry(registered.index());
        entry.publish(registered.osPid(), ProcessTableLayout.KIND_QNIX, registered.name().ai(), registered.name().pi(),
            registered.group(), registered.groupSize(), hps, params.contextsPerProcess(), 0);
        return entry;
    }

    /** @return a flyweight over entry {@code index}: one per call, since registrations run on several threads. */
    private ProcessTableEntry processTableEntry(final int index)
    {
        return new ProcessTableEntry().wrap(sdram, (int)layout.processEntryOffset(index));
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

    /** @return how long a registration of {@code timeoutMs} waits for room in the Driver Command Queue. */
    private static long postWaitMs(final long timeoutMs)
    {
        return Math.min(timeoutMs, POST_TIMEOUT_MS);
    }

    /** Why a command could not be posted: the queue is full only while the NIC does not take commands. */
    private String commandQueueFull(final long timeoutMs)
    {
        final String dead = heartbeats.deadNic(node, HostClock.millis());
        return "the Driver Command Queue of node " + node + " (D=" + params.driverCommandQueueEntries() +
            " entries) stayed full for " + postWaitMs(timeoutMs) + " ms: " +
            (null != dead ? dead : "its NIC control program has not taken the commands before");
    }

    private void initialiseHostProcessStructures(final long hps, final long vni, final VniLayout vniLayout)
    {
        // Reader: the process, once it has the reply (ProcessMappings); plain stores, see NicMemoryInfo.
        new NicMemoryInfo().wrap(host, (int)hps).publish(vni, vniLayout);
        // VNI Status and every Doorbell start at zero (Free): the allocator hands out zeroed pages.
    }

    private void timedOut(final DriverReplies replies, final ProcessName name, final int group, final int groupSize,
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
        replies.timedOut(message.toString(), missing);
    }

    /**
     * Thesis 3.4, de-registration steps 1-5.
     *
     * @param connectionLost its connection ended in the middle of a request: if the process still lives,
     *                       its entry and pages are freed only once it exits ({@link LingeringProcesses}).
     */
    void deregister(final Registered registered, final boolean connectionLost) throws InterruptedException
    {
        if (connectionLost)
        {
            lingering.watch(registered.index(), registered.osPid(), registered.osStartTicks());
        }
        leavePlacement(registered.index());
        // Step 1: a zero PID is never scheduled again, and aborts a registration still in progress.
        processTableEntry(registered.index()).clearPid();

        // Step 2: Delete_Process, so every NIC forgets the process. If it is held, the name stays admitted
        // too: its NIC still has it in its Name Table, and a New_Process of the same name elsewhere would
        // race this NIC's Delete_Process broadcast once it resumes. Nobody loses by it meanwhile: every
        // registration of the cluster fails NIC_DEAD while a NIC is silent.
        if (quarantine.deleteOrHold(
            DriverCommand.DELETE_PROCESS, registered.name(), registered.osPid(), registered.index()))
        {
            deregisterLocally(registered);
        }
    }

    /**
     * VIA registration (issue 14; {@code VipOpenNic}): a Process Table entry with its VNI (for the Command
     * Queue the posts use), Host Process Structures and VIA Process Structures, then New_Via_Process. The
     * NIC makes the entry active at once: there is no name to broadcast and no group to wait for.
     * Answered VIA_REGISTERED, or VIA_FAILED (ERROR_RESOURCE) / FAILED (NIC_DEAD, or the NIC's refusal).
     *
     * @param osPid the caller's pid as the kernel gives it.
     * @param uid   the caller's uid as the kernel gives it: whose connection addresses it may use.
     * @return the registered process, or null if nothing is held.
     */
    ViaRegistered registerVia(final int osPid, final int uid, final long timeoutMs, final DriverReplies replies)
        throws IOException, InterruptedException
    {
        final ProcessName label = new ProcessName(0, osPid);
        if (osPid <= 0 || timeoutMs <= 0)
        {
            replies.refuse("bad VIA registration request: pid " + osPid + ", timeout " + timeoutMs + " ms");
            return null;
        }
        final String dead = heartbeats.deadNic(node, HostClock.millis());
        if (null != dead)
        {
            replies.fail(DriverProtocol.NIC_DEAD, "VipOpenNic of pid " + osPid + " cannot complete: " + dead);
            return null;
        }
        final int index = claimProcessTableEntry(osPid);
        if (index < 0)
        {
            replies.viaFailed(ViplResult.ERROR_RESOURCE, "no free Process Table entry on node " + node + ": all P=" +
                params.maxProcessesPerNic() + " are in use");
            return null;
        }
        final PageAllocator.Region hpsRegion = allocator.allocateContiguous(index,
            HostProcessStructuresLayout.pages(params.contextsPerProcess(), params.pageSize()));
        final ProcessProtectionTable memory = new ProcessProtectionTable(allocator, sdram, layout, node, label, index);
        final int structuresPages = ViaProcessStructuresLayout.pages(params.pageSize());
        final ProcessProtectionTable.Entry structures = null == hpsRegion ? null : memory.allocateFixed(structuresPages);
        if (null == structures)
        {
            allocator.freeAll(index);
            releaseProcessTableEntry(index);
            replies.viaFailed(ViplResult.ERROR_RESOURCE, "host memory of node " + node + " is exhausted: no pages " +
                "for the Host Process Structures and the VIA Process Structures");
            return null;
        }
        allocator.protect(hpsRegion, 1);
        final long hps = hpsRegion.address(0);
        final long structuresAddress = structures.address(0);
        final ViaRegistered registered = new ViaRegistered(label, index, osPid, ProcessStartTicks.of(osPid), memory,
            new ViaResources(viaTables, registry.viaConnections(), memory, params, node, index, uid, host,
                structuresAddress), hps, structuresAddress, structuresPages);

        final long vni = layout.vniOffset(index);
        final VniLayout vniLayout = layout.vni();
        sdram.setMemory((int)vni, vniLayout.length(), (byte)0);
        initialiseHostProcessStructures(hps, vni, vniLayout);
        // A VIA process has no name and no group; the NIC checks the Kind against New_Via_Process.
        processTableEntry(index).publish(osPid, ProcessTableLayout.KIND_VIA, 0, 0, 0, 0, hps,
            params.contextsPerProcess(), structuresAddress);

        final DriverCommandQueueWriter.Ticket ticket =
            commandQueue.post(DriverCommand.NEW_VIA_PROCESS, label, osPid, index, 0, 0, postWaitMs(timeoutMs));
        if (null == ticket)
        {
            deregisterViaLocally(registered);
            replies.viaFailed(ViplResult.ERROR_RESOURCE, commandQueueFull(timeoutMs));
            return null;
        }
        final long started = HostClock.millis();
        final long deadline = started + timeoutMs;
        long nextLivenessCheck = 0;
        while (true)
        {
            final int doorbell = commandQueue.doorbell(ticket);
            if (Doorbell.DONE == doorbell)
            {
                commandQueue.release(ticket);
                try
                {
                    replies.viaRegistered(index, ProcessTableLayout.nicPid(index), vni, vniLayout.length(), hps,
                        structuresAddress, structuresPages,
                        registry.placement().place(node, index, osPid, registered.osStartTicks(),
                            NicCpuPlacement.NO_GROUP, 0));
                }
                catch (final IOException ex)
                {
                    deregisterVia(registered);
                    throw ex;
                }
                return registered;
            }
            if (Doorbell.isError(doorbell))
            {
                commandQueue.release(ticket);
                deregisterViaLocally(registered);
                replies.fail(doorbell, "NIC " + node + " refused New_Via_Process for pid " + osPid + ": " +
                    Doorbell.name(doorbell));
                return null;
            }
            final long now = HostClock.millis();
            if (now >= nextLivenessCheck)
            {
                nextLivenessCheck = now + LIVENESS_CHECK_MS;
                if (!Processes.isAlive(osPid))
                {
                    // Nobody is left to read a reply; with a huge timeout nothing else would end the wait.
                    commandQueue.abandon(ticket);
                    deregisterVia(registered);
                    return null;
                }
                final String deadNow = heartbeats.deadNic(node, now);
                if (null != deadNow || now > deadline)
                {
                    // The command stays posted: the driver abandons its position, and the entry goes.
                    commandQueue.abandon(ticket);
                    deregisterVia(registered);
                    replies.fail(DriverProtocol.NIC_DEAD, "VipOpenNic of pid " + osPid + " cannot complete: " +
                        (null != deadNow ? deadNow : "NIC " + node + " did not take New_Via_Process in " + timeoutMs + " ms"));
                    return null;
                }
            }
            pause(started);
        }
    }

    /**
     * Its process leaves the NICs' CPU's count with its last registration; the moves that followed are
     * logged. Whatever happens to them, the de-registration goes on: its pages must be freed.
     */
    private void leavePlacement(final int index)
    {
        try
        {
            for (final String move : registry.placement().leave(node, index))
            {
                System.err.println("driver " + node + ": placed again as process table entry " + index + " left: " +
                    move);
            }
        }
        catch (final RuntimeException ex)
        {
            System.err.println("driver " + node + ": placing again as process table entry " + index + " left " +
                "failed: " + ex);
        }
    }

    /**
     * Finishes a placement that a leave left waiting for a process to place itself
     * ({@link NicCpuPlacement#placeWaiting}); the node's driver calls it every second.
     */
    void placeWaiting()
    {
        try
        {
            for (final String move : registry.placement().placeWaiting(HostClock.millis()))
            {
                System.err.println("driver " + node + ": placed again once the process had placed itself: " + move);
            }
        }
        catch (final RuntimeException ex)
        {
            System.err.println("driver " + node + ": placing again failed: " + ex);
        }
    }

    /**
     * VIA de-registration (issue 14; {@code VipCloseNic}, or process death): the PID cleared, every VI,
     * region and CQ out of the VIA tables, Delete_Via_Process, then the pages and the entry.
     */
    void deregisterVia(final ViaRegistered registered) throws InterruptedException
    {
        deregisterVia(registered, false);
    }

    /** As {@link #deregisterVia(ViaRegistered)}; {@code connectionLost} as {@link #deregister(Registered, boolean)}'s. */
    void deregisterVia(final ViaRegistered registered, final boolean connectionLost) throws InterruptedException
    {
        if (connectionLost)
        {
            lingering.watch(registered.index(), registered.osPid(), registered.osStartTicks());
        }
        leavePlacement(registered.index());
        processTableEntry(registered.index()).clearPid();
        // Its VIA table entries go at once: the NIC honours none whose handle or generation it was not
        // given, and checks each page against the Protection Table, where the pages stay the process's.
        registered.via().releaseAll();
        if (quarantine.deleteOrHold(
            DriverCommand.DELETE_VIA_PROCESS, registered.name(), registered.osPid(), registered.index()))
        {
            deregisterViaLocally(registered);
        }
    }

    private void deregisterViaLocally(final ViaRegistered registered) throws InterruptedException
    {
        processTableEntry(registered.index()).clearPid();
        registered.via().releaseAll();
        release(registered.name(), registered.index(), false);
    }

    /** Steps 3-5: unmap (the process's own business), return the pages, free the entry. */
    private void deregisterLocally(final Registered registered)
    {
        processTableEntry(registered.index()).clearPid();
        release(registered.name(), registered.index(), true);
    }

    /**
     * The name out of the cluster registry if it is a QNIX process's ({@code named}; a VIA process has
     * none), then the pages back to the pool and the Process Table entry free for the next process, unless
     * {@link LingeringProcesses} keeps those two until the process exits.
     *
     * @return true if the entry and pages were freed, false if they are kept.
     */
    private boolean release(final ProcessName name, final int index, final boolean named)
    {
        if (named)
        {
            registry.remove(name, node, index);
        }
        if (lingering.keeps(index))
        {
            System.err.println("driver " + node + ": the connection of " + name + " failed in the middle of a " +
                "request with its process alive (a library that gave up waiting for the driver): its Process " +
                "Table entry " + index + " and its pages are kept until it exits, as it may still map them");
            return false;
        }
        freeEntry(index);
        return true;
    }

    private void freeEntry(final int index)
    {
        allocator.freeAll(index);
        releaseProcessTableEntry(index);
    }

    /**
     * Releases what the quarantine held and its NIC has since let go of, then claims a free entry. The
     * quarantine's monitor is taken before this object's, never while it is held.
     */
    private int claimProcessTableEntry(final int osPid) throws InterruptedException
    {
        quarantine.releaseCompleted();
        releaseExited();
        return claimFreeEntry(osPid);
    }

    private synchronized int claimFreeEntry(final int osPid)
    {
        return processFlags.claim(osPid);
    }

    private synchronized void releaseProcessTableEntry(final int index)
    {
        processFlags.release(index);
    }
}
