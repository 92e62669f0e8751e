package org.qnix.tools;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.CqTableEntry;
import org.qnix.abi.Doorbell;
import org.qnix.abi.FileDescriptorBlock;
import org.qnix.abi.HostClock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.MappedFile;
import org.qnix.abi.MemoryRegionEntry;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicProcessor;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessFlagArray;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableEntry;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ProtectionTableLayout;
import org.qnix.abi.PublishedTables;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.daemon.ClusterState;
import org.qnix.daemon.FirmwareProcess;

/**
 * A snapshot of a running cluster read straight from its files: each NIC's control program area,
 * Process Table, Process Flag Array and Name/Group Tables, and its VIA tables (VIs, memory regions,
 * CQs; issue 14). What {@code qnix cluster status} prints and what the tests check.
 *
 * <pre>{@code
 * ClusterStatus status = ClusterStatus.read(ClusterDirectory.of("t"));
 * status.print(System.out);
 * }</pre>
 */
public final class ClusterStatus
{
    /** One NIC. */
    public record Node(NicCoordinates node, long firmwarePid, int firmwareState, boolean firmwareGone, int mode,
        int debugPort, long heartbeatAgeMs, int freePages, long totalPages, List<PublishedTables.NameEntry> names,
        List<PublishedTables.GroupEntry> groups)
    {
        /**
         * @return "running", "stalled" (running but silent past the heartbeat timeout: a breakpoint, SIGSTOP,
         * a long pause), "gone" (silent, and its firmware process exited: killed), "stopped" or "absent".
         */
        public String firmwareStateName()
        {
            if (ControlProgramLayout.STATE_RUNNING == firmwareState)
            {
                if (heartbeatAgeMs <= ControlProgramLayout.HEARTBEAT_TIMEOUT_MS)
                {
                    return "running";
                }
                return firmwareGone ? "gone" : "stalled";
            }
            return ControlProgramLayout.STATE_STOPPED == firmwareState ? "stopped" : "absent";
        }
    }

    /**
     * One registered process, from the Process Table of its NIC, with what it holds: Send and Receive
     * Contexts whose doorbells are not Free (from its Host Process Structures; -1 if the table's address
     * of them is not a sane one), and the host pages its NIC PID owns in the Protection Table, of which
     * {@code pagesLocked} have a lock count (its Host Process Structures included).
     */
    public record Process(ProcessName name, int group, int groupSize, NicCoordinates node, int nicPid, int osPid,
        int state, int sendContextsInUse, int receiveContextsInUse, long pagesHeld, long pagesLocked)
    {
    }

    /**
     * A VIA process (issue 14): a Process Table entry of Kind VIA, which {@link #processes()} lists too
     * (it takes a slot) under the name 0.0 it has no use for.
     *
     * @param slot its Process Table index, which the VIA tables name as the owner.
     */
    public record ViplProcess(NicCoordinates node, int slot, int nicPid, int osPid, int state)
    {
    }

    /**
     * A VI table entry that is not free. {@code peer}, {@code peerVi} and {@code connectionId} are the
     * connection the daemon matched (null, 0, 0 while not connected).
     *
     * @param owner the Process Table index of the VIA process holding it.
     */
    public record ViplVi(NicCoordinates node, int index, int owner, int state, int reliability, int ptag,
        int attributes, int maxTransfer, int sendCq, int receiveCq, int connectionId, NicCoordinates peer, int peerVi,
        int dropped)
    {
        /** @return "unreliable", "reliable delivery" or "reliable reception" (vipl.h's VIP_SERVICE_*). */
        public String reliabilityName()
        {
            switch (reliability)
            {
                case ViTableEntry.UNRELIABLE: return "unreliable";
                case ViTableEntry.RELIABLE_DELIVERY: return "reliable delivery";
                case ViTableEntry.RELIABLE_RECEPTION: return "reliable reception";
                default: return "level " + reliability;
            }
        }
    }

    /** A registered memory region ({@code VipRegisterMem}): its handle, ptag, VIA address and length. */
    public record ViplRegion(NicCoordinates node, int handle, int owner, int ptag, long address, long length,
        int attributes)
    {
    }

    /** A completion queue ({@code VipCreateCQ}): its CQ table index and ring capacity. */
    public record ViplCq(NicCoordinates node, int index, int owner, int entries)
    {
    }

    /** What the VIA processes of the cluster hold, node by node in torus order. */
    public record Vipl(List<ViplProcess> processes, List<ViplVi> vis, List<ViplRegion> regions, List<ViplCq> cqs)
    {
        public boolean isEmpty()
        {
            return processes.isEmpty() && vis.isEmpty() && regions.isEmpty() && cqs.isEmpty();
        }
    }

    private final ClusterDirectory dir;
    private final ClusterProperties props;
    private final List<Node> nodes;
    private final List<Process> processes;
    private final Vipl vipl;

    private ClusterStatus(final ClusterDirectory dir, final ClusterProperties props, final List<Node> nodes,
        final List<Process> processes, final Vipl vipl)
    {
        this.dir = dir;
        this.props = props;
        this.nodes = nodes;
        this.processes = processes;
        this.vipl = vipl;
    }

    /**
     * @throws IllegalStateException if the cluster is not up (absent or stale), saying which.
     */
    public static ClusterStatus read(final ClusterDirectory dir)
    {
        final ClusterProperties props = liveProperties(dir);
        final ClusterParameters params = props.parameters();
        final NicSdramLayout layout = new NicSdramLayout(params);
        final HostMemoryLayout hostLayout = new HostMemoryLayout(params);
        final List<Node> nodes = new ArrayList<>();
        final List<Process> processes = new ArrayList<>();
        final Vipl vipl = new Vipl(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        for (int i = 0; i < params.nodeCount(); i++)
        {
            final NicCoordinates node = NicCoordinates.ofIndex(i, params.torusWidth());
            try (MappedFile sdramFile = MappedFile.mapExisting(dir.nicSdram(node));
                MappedFile hostFile = MappedFile.mapExisting(dir.hostMemory(node)))
            {
                final AtomicBuffer sdram = sdramFile.buffer();
                final AtomicBuffer host = hostFile.buffer();
                FileDescriptorBlock.verify(sdram, FileDescriptorBlock.TYPE_NIC_SDRAM, dir.nicSdram(node).toString());
                FileDescriptorBlock.verify(host, FileDescriptorBlock.TYPE_HOST_MEMORY, dir.hostMemory(node).toString());
                final ControlProgramSegment control =
                    new ControlProgramSegment().wrap(sdram, (int)layout.controlProgramOffset());
                final long heartbeatAgeMs = control.silenceMs(HostClock.millis());
                nodes.add(new Node(node,
                    control.pid(),
                    control.state(),
                    // Only a silent NIC's process is looked up in /proc: firmwareStateName asks no more.
                    heartbeatAgeMs > ControlProgramLayout.HEARTBEAT_TIMEOUT_MS && FirmwareProcess.isGone(control),
                    control.mode(),
                    control.debugPort(),
                    heartbeatAgeMs,
                    host.getIntVolatile((int)(hostLayout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_FREE_PAGES_OFFSET)),
                    hostLayout.pagePoolPages(),
                    PublishedTables.names(sdram, layout),
                    PublishedTables.groups(sdram, layout)));
                final long[] held = new long[params.maxProcessesPerNic() + 1];
                final long[] locked = new long[params.maxProcessesPerNic() + 1];
                pagesByOwner(params, layout, hostLayout, sdram, held, locked);
                final ProcessFlagArray flags = new ProcessFlagArray().wrap(host, hostLayout, params.maxProcessesPerNic());
                for (int p = 0; p < params.maxProcessesPerNic(); p++)
                {
                    final int osPid = flags.osPid(p);
                    if (0 == osPid)
                    {
                        continue;
                    }
                    final ProcessTableEntry entry =
                        new ProcessTableEntry().wrap(sdram, (int)layout.processEntryOffset(p));
                    final int nicPid = ProcessTableLayout.nicPid(p);
                    final long hps = entry.hpsAddress();
                    processes.add(new Process(new ProcessName(entry.nameAi(), entry.namePi()), entry.group(),
                        entry.groupSize(), node, nicPid, osPid, entry.state(),
                        contextsInUse(params, host, hps, true), contextsInUse(params, host, hps, false),
                        nicPid < held.length ? held[nicPid] : 0, nicPid < locked.length ? locked[nicPid] : 0));
                    if (ProcessTableLayout.KIND_VIA == entry.kind())
                    {
                        vipl.processes().add(new ViplProcess(node, p, nicPid, osPid, entry.state()));
                    }
                }
                readViaTables(node, layout.via(), sdram, vipl);
            }
        }
        return new ClusterStatus(dir, props, nodes, processes, vipl);
    }

    /**
     * The entries of a NIC's VIA tables that are in use. The driver writes an entry's fields before the
     * word that says it is in use (State, Handle, Owner) with release; a snapshot taken while it
     * changes may mix two of its lives, as any reading of a live table may.
     */
    private static void readViaTables(final NicCoordinates node, final ViaTablesLayout via, final AtomicBuffer sdram,
        final Vipl out)
    {
        final ViTableEntry vi = new ViTableEntry();
        for (int i = 0; i < via.viEntries(); i++)
        {
            vi.wrap(sdram, (int)via.viOffset(i));
            final int state = vi.state();
            if (ViTableEntry.STATE_FREE == state)
            {
                continue;
            }
            final boolean joined = ViTableEntry.STATE_CONNECTED == state || ViTableEntry.STATE_ERROR == state;
            out.vis().add(new ViplVi(node, i, vi.owner(), state, vi.reliability(), vi.ptag(), vi.attributes(),
                vi.maxTransfer(), vi.sendCq(), vi.receiveCq(), joined ? vi.connectionId() : 0,
                joined ? NicCoordinates.unpack(vi.peerNic()) : null, joined ? vi.peerVi() : 0, vi.dropped()));
        }
        final MemoryRegionEntry region = new MemoryRegionEntry();
        for (int i = 0; i < via.regionEntries(); i++)
        {
            region.wrap(sdram, (int)via.regionOffset(i));
            final int handle = region.handle();
            if (0 != handle)
            {
                out.regions().add(new ViplRegion(node, handle, region.owner(), region.ptag(), region.base(),
                    region.length(), region.attributes()));
            }
        }
        final CqTableEntry cq = new CqTableEntry();
        for (int i = 0; i < via.cqEntries(); i++)
        {
            cq.wrap(sdram, (int)via.cqOffset(i));
            final int owner = cq.owner();
            if (owner >= 0)
            {
                out.cqs().add(new ViplCq(node, i, owner, cq.entries()));
            }
        }
    }

    /**
     * @return the properties of a cluster that is up, without reading its nodes.
     * @throws IllegalStateException if it is not up (absent or stale), saying which.
     */
    public static ClusterProperties liveProperties(final ClusterDirectory dir)
    {
        final ClusterState state = ClusterState.inspect(dir);
        if (!state.isLive())
        {
            throw new IllegalStateException(state.isAbsent() || state.isForeign() ?
                "no cluster '" + dir.name() + "' (" + state.reason() + ")" :
                "cluster '" + dir.name() + "' is stale: " + state.reason() +
                ". `qnix cluster down --name " + dir.name() + "` removes it");
        }
        return state.properties().orElseThrow();
    }

    /**
     * @return true if {@code hps}, read from a Process Table entry, can be the address of Host Process
     * Structures: page aligned, inside host memory with room for them.
     */
    static boolean isSaneHpsAddress(final ClusterParameters params, final long hps)
    {
        return hps > 0 && hps % params.pageSize() == 0 &&
            hps + HostProcessStructuresLayout.length(params.contextsPerProcess()) <= params.hostMemoryBytes();
    }

    /** Counts, per owner NIC PID, the pool pages the Protection Table gives it and those it has locked. */
    private static void pagesByOwner(final ClusterParameters params, final NicSdramLayout layout,
        final HostMemoryLayout hostLayout, final AtomicBuffer sdram, final long[] held, final long[] locked)
    {
        final long first = hostLayout.pagePoolOffset();
        for (long address = first; address + params.pageSize() <= params.hostMemoryBytes(); address += params.pageSize())
        {
            // Writer: the driver, with release, whenever it hands out, locks, unlocks or takes back a page.
            final int entry = sdram.getIntVolatile((int)layout.protectionEntryOffset(address));
            final int owner = ProtectionTableLayout.owner(entry);
            if (owner > 0 && owner < held.length)
            {
                held[owner]++;
                if (ProtectionTableLayout.lockCount(entry) > 0)
                {
                    locked[owner]++;
                }
            }
        }
    }

    /** @return doorbells of one direction that are not Free, or -1 if {@code hps} is not a sane address. */
    private static int contextsInUse(final ClusterParameters params, final AtomicBuffer host, final long hps,
        final boolean send)
    {
        final int contexts = params.contextsPerProcess();
        if (!isSaneHpsAddress(params, hps))
        {
            return -1;
        }
        int inUse = 0;
        for (int c = 0; c < contexts; c++)
        {
            final int offset = send ? HostProcessStructuresLayout.sendDoorbellOffset(c) :
                HostProcessStructuresLayout.receiveDoorbellOffset(contexts, c);
            // Writers: the process (Used, Free) and the NIC (Done or an error), both with release.
            if (Doorbell.FREE != host.getIntVolatile((int)(hps + offset)))
            {
                inUse++;
            }
        }
        return inUse;
    }

    public List<Node> nodes()
    {
        return nodes;
    }

    public List<Process> processes()
    {
        return processes;
    }

    /** @return processes whose NIC completed their registration. */
    public List<Process> registered()
    {
        return processes.stream().filter(p -> ProcessTableLayout.STATE_REGISTERED == p.state()).toList();
    }

    /** @return the VIA processes and the VIs, memory regions and CQs they hold. */
    public Vipl vipl()
    {
        return vipl;
    }

    public ClusterProperties properties()
    {
        return props;
    }

    /** @return where the NICs' processor is, and whether the firmware JVM really runs there (NicProcessor). */
    private String nicCpu()
    {
        if (props.nicCpu() < 0)
        {
            return "";
        }
        final SortedSet<Integer> allowed = nodes.isEmpty() ? new TreeSet<>() :
            NicProcessor.allowedCpus(nodes.get(0).firmwarePid());
        return " on CPU " + props.nicCpu() + (allowed.isEmpty() || allowed.equals(new TreeSet<>(List.of(props.nicCpu()))) ?
            "" : " (not bound: its JVM may run on CPUs " + allowed + ")");
    }

    public void print(final PrintStream out)
    {
        final ClusterParameters params = props.parameters();
        out.printf("cluster '%s': up, %s torus, firmware as %s%s, daemon pid %d, files in %s%n", dir.name(),
            params.torus(), props.firmwareMode(), nicCpu(), props.daemonPid(), dir.path());
        out.printf("%-6s %-13s %-10s %-14s %-10s %-16s%n",
            "node", "firmware pid", "state", "heartbeat age", "processes", "free host pages");
        for (final Node node : nodes)
        {
            final long count = processes.stream().filter(p -> p.node().equals(node.node())).count();
            final String state = node.firmwareStateName();
            out.printf("%-6s %-13s %-10s %-14s %-10d %d/%d%s%n", node.node(),
                node.firmwarePid() + (node.mode() == ControlProgramLayout.MODE_THREAD ? " (thread)" : ""),
                state, node.heartbeatAgeMs() + " ms", count, node.freePages(), node.totalPages(),
                node.debugPort() > 0 ? "   JDWP port " + node.debugPort() : "");
        }
        final List<Process> qnix = processes.stream().filter(p -> !isVipl(p)).toList();
        if (qnix.isEmpty())
        {
            out.println("no processes registered");
        }
        else
        {
            out.printf("registered processes (%d):%n", qnix.size());
            out.printf("  %-12s %-8s %-6s %-8s %-8s %s%n", "name", "group", "node", "NIC PID", "OS pid", "state");
            for (final Process p : qnix)
            {
                out.printf("  %-12s %-8s %-6s %-8d %-8d %s%n", p.name(), p.group() + "/" + p.groupSize(), p.node(),
                    p.nicPid(), p.osPid(), ProcessTableLayout.stateName(p.state()));
            }
        }
        printVipl(out);
    }

    private boolean isVipl(final Process p)
    {
        return vipl.processes().stream().anyMatch(v -> v.node().equals(p.node()) && v.nicPid() == p.nicPid());
    }

    /** The VIA processes and what they hold, as the NIC's VIA tables say (issue 14). */
    private void printVipl(final PrintStream out)
    {
        if (vipl.isEmpty())
        {
            return;
        }
        out.printf("VIPL processes (%d):%n", vipl.processes().size());
        out.printf("  %-6s %-5s %-8s %-8s %-11s %-4s %-8s %s%n", "node", "slot", "NIC PID", "OS pid", "state", "VIs",
            "regions", "CQs");
        for (final ViplProcess p : vipl.processes())
        {
            out.printf("  %-6s %-5d %-8d %-8d %-11s %-4d %-8d %d%n", p.node(), p.slot(), p.nicPid(), p.osPid(),
                ProcessTableLayout.stateName(p.state()),
                vipl.vis().stream().filter(v -> v.node().equals(p.node()) && v.owner() == p.slot()).count(),
                vipl.regions().stream().filter(r -> r.node().equals(p.node()) && r.owner() == p.slot()).count(),
                vipl.cqs().stream().filter(c -> c.node().equals(p.node()) && c.owner() == p.slot()).count());
        }
        out.printf("VIs (%d):%n", vipl.vis().size());
        if (!vipl.vis().isEmpty())
        {
            out.printf("  %-6s %-4s %-5s %-16s %-19s %-10s %-11s %-5s %-9s %-10s %s%n", "node", "VI", "slot", "state",
                "reliability", "peer", "connection", "ptag", "max xfer", "CQ s/r", "dropped");
        }
        for (final ViplVi v : vipl.vis())
        {
            out.printf("  %-6s %-4d %-5d %-16s %-19s %-10s %-11s %-5d %-9d %-10s %d%n", v.node(), v.index(), v.owner(),
                ViTableEntry.stateName(v.state()), v.reliabilityName(),
                null == v.peer() ? "-" : v.peer() + "/" + v.peerVi(),
                0 == v.connectionId() ? "-" : Integer.toString(v.connectionId()), v.ptag(), v.maxTransfer(),
                cq(v.sendCq()) + "/" + cq(v.receiveCq()), v.dropped());
        }
        out.printf("memory regions (%d):%n", vipl.regions().size());
        if (!vipl.regions().isEmpty())
        {
            out.printf("  %-6s %-12s %-5s %-5s %-20s %-10s %s%n", "node", "handle", "slot", "ptag", "address", "length",
                "attributes");
        }
        for (final ViplRegion r : vipl.regions())
        {
            out.printf("  %-6s 0x%-10x %-5d %-5d 0x%-18x %-10d %s%n", r.node(), r.handle(), r.owner(), r.ptag(),
                r.address(), r.length(), attributesName(r.attributes()));
        }
        out.printf("completion queues (%d):%n", vipl.cqs().size());
        if (!vipl.cqs().isEmpty())
        {
            out.printf("  %-6s %-4s %-5s %s%n", "node", "CQ", "slot", "entries");
        }
        for (final ViplCq c : vipl.cqs())
        {
            out.printf("  %-6s %-4d %-5d %d%n", c.node(), c.index(), c.owner(), c.entries());
        }
    }

    private static String cq(final int index)
    {
        return ViTableEntry.NO_CQ == index ? "-" : Integer.toString(index);
    }

    /** @return "rdma-write,rdma-read", one of them, or "none": a region's or a VI's RDMA enables. */
    static String attributesName(final int attributes)
    {
        final boolean write = 0 != (attributes & ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final boolean read = 0 != (attributes & ViTableEntry.ATTRIBUTE_RDMA_READ);
        return write && read ? "rdma-write,rdma-read" : write ? "rdma-write" : read ? "rdma-read" : "none";
    }
}
