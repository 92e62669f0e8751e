package org.qnix.tools;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.FileDescriptorBlock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ProtectionTableLayout;
import org.qnix.abi.PublishedTables;
import org.qnix.daemon.ClusterState;

/**
 * A snapshot of a running cluster read straight from its files: each NIC's control program area,
 * Process Table, Process Flag Array and Name/Group Tables. What {@code qnix cluster status} prints and
 * what the tests check.
 *
 * <pre>{@code
 * ClusterStatus status = ClusterStatus.read(ClusterDirectory.of("t"));
 * status.print(System.out);
 * }</pre>
 */
public final class ClusterStatus
{
    /** One NIC. */
    public record Node(NicCoordinates node, long firmwarePid, int firmwareState, int mode, int debugPort,
        long heartbeatAgeMs, int freePages, long totalPages, List<PublishedTables.NameEntry> names,
        List<PublishedTables.GroupEntry> groups)
    {
        /** @return "running", "stalled" (running but silent past the heartbeat timeout), "stopped" or "absent". */
        public String firmwareStateName()
        {
            if (ControlProgramLayout.STATE_RUNNING == firmwareState)
            {
                return heartbeatAgeMs > ControlProgramLayout.HEARTBEAT_TIMEOUT_MS ? "stalled" : "running";
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

    private final ClusterDirectory dir;
    private final ClusterProperties props;
    private final List<Node> nodes;
    private final List<Process> processes;

    private ClusterStatus(final ClusterDirectory dir, final ClusterProperties props, final List<Node> nodes,
        final List<Process> processes)
    {
        this.dir = dir;
        this.props = props;
        this.nodes = nodes;
        this.processes = processes;
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
                final int control = (int)layout.controlProgramOffset();
                nodes.add(new Node(node,
                    sdram.getLongVolatile(control + ControlProgramLayout.PID_OFFSET),
                    sdram.getIntVolatile(control + ControlProgramLayout.STATE_OFFSET),
                    sdram.getInt(control + ControlProgramLayout.MODE_OFFSET),
                    sdram.getInt(control + ControlProgramLayout.DEBUG_PORT_OFFSET),
                    Math.max(0, System.currentTimeMillis() -
                        sdram.getLongVolatile(control + ControlProgramLayout.HEARTBEAT_TIME_OFFSET)),
                    host.getIntVolatile((int)(hostLayout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_FREE_PAGES_OFFSET)),
                    hostLayout.pagePoolPages(),
                    PublishedTables.names(sdram, layout),
                    PublishedTables.groups(sdram, layout)));
                final long[] held = new long[params.maxProcessesPerNic() + 1];
                final long[] locked = new long[params.maxProcessesPerNic() + 1];
                pagesByOwner(params, layout, hostLayout, sdram, held, locked);
                for (int p = 0; p < params.maxProcessesPerNic(); p++)
                {
                    final int osPid = host.getIntVolatile((int)hostLayout.processFlagOffset(p));
                    if (0 == osPid)
                    {
                        continue;
                    }
                    final int entry = (int)layout.processEntryOffset(p);
                    final int nicPid = ProcessTableLayout.nicPid(p);
                    final long hps = sdram.getLong(entry + ProcessTableLayout.HPS_ADDRESS_OFFSET);
                    processes.add(new Process(
                        new ProcessName(sdram.getInt(entry + ProcessTableLayout.NAME_AI_OFFSET),
                            sdram.getInt(entry + ProcessTableLayout.NAME_PI_OFFSET)),
                        sdram.getInt(entry + ProcessTableLayout.GROUP_OFFSET),
                        sdram.getInt(entry + ProcessTableLayout.GROUP_SIZE_OFFSET),
                        node, nicPid, osPid,
                        sdram.getIntVolatile(entry + ProcessTableLayout.STATE_OFFSET),
                        contextsInUse(params, host, hps, true), contextsInUse(params, host, hps, false),
                        nicPid < held.length ? held[nicPid] : 0, nicPid < locked.length ? locked[nicPid] : 0));
                }
            }
        }
        return new ClusterStatus(dir, props, nodes, processes);
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

    public ClusterProperties properties()
    {
        return props;
    }

    public void print(final PrintStream out)
    {
        final ClusterParameters params = props.parameters();
        out.printf("cluster '%s': up, %dx%d torus, firmware as %s, daemon pid %d, files in %s%n", dir.name(),
            params.torusWidth(), params.torusHeight(), props.firmwareMode(), props.daemonPid(), dir.path());
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
        if (processes.isEmpty())
        {
            out.println("no processes registered");
            return;
        }
        out.printf("registered processes (%d):%n", processes.size());
        out.printf("  %-12s %-8s %-6s %-8s %-8s %s%n", "name", "group", "node", "NIC PID", "OS pid", "state");
        for (final Process p : processes)
        {
            out.printf("  %-12s %-8s %-6s %-8d %-8d %s%n", p.name(), p.group() + "/" + p.groupSize(), p.node(),
                p.nicPid(), p.osPid(), ProcessTableLayout.stateName(p.state()));
        }
    }
}
