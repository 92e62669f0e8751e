package org.qnix.tools;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueEntry;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.ContextRegionDescriptor;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.Doorbell;
import org.qnix.abi.FileDescriptorBlock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessFlagArray;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableEntry;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.PublishedTables;
import org.qnix.abi.RxFifo;
import org.qnix.abi.RxFifoLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.VniContext;
import org.qnix.abi.VniLayout;
import org.qnix.firmware.NicCounters;

/**
 * Decodes, read-only, what a process or a NIC holds in the cluster's shared memory: a process's
 * Virtual Network Interface (Command Queue with head, tail and pending entries; each Send and Receive
 * Context in use with its doorbell and page table) or a NIC's tables (Process, Name and Group Tables,
 * VIA processes with their VIs, memory regions and CQs, staging use, input FIFO fill). Nothing is stopped or written. What a process wrote is untrusted: a
 * value that cannot be (a length past the largest message, a page count past K, a doorbell code that
 * does not exist) is shown as {@code "impossible: ..."} and not followed. The Name and Group Tables are
 * read under the sequence locks the NIC writes them with.
 *
 * <p>The result is a tree of maps, lists, strings and numbers that {@code qnix inspect} prints as
 * indented text or as JSON.
 *
 * <pre>{@code
 * Map<String, Object> vni = ClusterInspector.process(ClusterDirectory.of("default"), new ProcessName(101, 0));
 * }</pre>
 */
public final class ClusterInspector
{
    private ClusterInspector()
    {
    }

    /**
     * @throws IllegalArgumentException if no NIC of the cluster has {@code name} in its Process Table.
     */
    public static Map<String, Object> process(final ClusterDirectory dir, final ProcessName name)
    {
        final ClusterStatus status = ClusterStatus.read(dir);
        final ClusterParameters params = status.properties().parameters();
        final ClusterStatus.Process process = status.processes().stream().filter(p -> p.name().equals(name))
            .findFirst().orElseThrow(() -> new IllegalArgumentException("no process " + name + " is registered in " +
                "cluster '" + dir.name() + "' (`qnix ps --cluster " + dir.name() + "` lists them)"));
        final NicSdramLayout layout = new NicSdramLayout(params);
        final VniLayout vniLayout = layout.vni();
        final int index = ProcessTableLayout.index(process.nicPid());
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("name", name.toString());
        out.put("node", process.node().toString());
        out.put("nicPid", process.nicPid());
        out.put("osPid", process.osPid());
        out.put("state", ProcessTableLayout.stateName(process.state()));
        try (MappedFile sdramFile = MappedFile.mapExisting(dir.nicSdram(process.node()));
            MappedFile hostFile = MappedFile.mapExisting(dir.hostMemory(process.node())))
        {
            final AtomicBuffer sdram = sdramFile.buffer();
            final AtomicBuffer host = hostFile.buffer();
            final int vni = (int)layout.vniOffset(index);
            final long hps = new ProcessTableEntry().wrap(sdram, (int)layout.processEntryOffset(index)).hpsAddress();
            final int contexts = params.contextsPerProcess();
            final boolean hpsSane = ClusterStatus.isSaneHpsAddress(params, hps);
            out.put("hostProcessStructures", hpsSane ? hps : impossible("address " + hps));
            out.put("commandQueue", commandQueue(params, vniLayout, sdram, vni, hpsSane ? host : null, hps));
            final List<Object> send = new ArrayList<>();
            final List<Object> receive = new ArrayList<>();
            for (int c = 0; c < contexts; c++)
            {
                final int sendDoorbell = hpsSane ?
                    host.getIntVolatile((int)(hps + HostProcessStructuresLayout.sendDoorbellOffset(c))) : -1;
                final int receiveDoorbell = hpsSane ?
                    host.getIntVolatile((int)(hps + HostProcessStructuresLayout.receiveDoorbellOffset(contexts, c))) : -1;
                if (Doorbell.FREE != sendDoorbell)
                {
                    send.add(context(params, sdram, c, sendDoorbell, vni + vniLayout.sendContextOffset(c),
                        vni + vniLayout.sendContextRegionOffset(c), false));
                }
                if (Doorbell.FREE != receiveDoorbell)
                {
                    receive.add(context(params, sdram, c, receiveDoorbell, vni + vniLayout.receiveContextOffset(c),
                        vni + vniLayout.receiveContextRegionOffset(c), true));
                }
            }
            out.put("sendContextsInUse", send);
            out.put("receiveContextsInUse", receive);
        }
        return out;
    }

    /** The Command Queue from the NIC's published Head to the process's Tail, entries as they are now. */
    private static Map<String, Object> commandQueue(final ClusterParameters params, final VniLayout vniLayout,
        final AtomicBuffer sdram, final int vni, final AtomicBuffer host, final long hps)
    {
        final int entries = params.commandQueueEntries();
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("entries", entries);
        final CommandQueueEntry entry = new CommandQueueEntry();
        if (null != host)
        {
            // Writers: the NIC (Head, every 8 commands and when it finds the queue empty), the process (Tail).
            final int head = host.getIntVolatile((int)(hps + HostProcessStructuresLayout.CQ_HEAD_OFFSET));
            final int tail = host.getIntVolatile((int)(hps + HostProcessStructuresLayout.CQ_TAIL_OFFSET));
            out.put("head", head >= 0 && head < entries ? head : impossible("head " + head));
            out.put("tail", tail >= 0 && tail < entries ? tail : impossible("tail " + tail));
        }
        final List<Object> pending = new ArrayList<>();
        int position = 0;
        while (position < entries)
        {
            entry.wrap(sdram, vni + vniLayout.commandOffset(position));
            final int command = entry.command();
            if (ProcessCommand.NONE == command)
            {
                position++;
                continue;
            }
            final Map<String, Object> e = new LinkedHashMap<>();
            e.put("position", position);
            final String name = ProcessCommand.name(command);
            e.put("command", name.startsWith("ProcessCommand(") ? impossible("command code " + command) : name);
            e.put("context", entry.context());
            e.put("group", entry.group());
            e.put("size", entry.size());
            position++;
            if ((ProcessCommand.MULTICAST == command || ProcessCommand.MULTICAST_SHORT == command) && entry.size() > 0 &&
                entry.size() <= CommandQueueLayout.maxMulticastReceivers(params))
            {
                final List<Object> receivers = new ArrayList<>();
                for (int i = 0; i < entry.size(); i++)
                {
                    final CommandQueueEntry names = new CommandQueueEntry().wrap(sdram,
                        vni + vniLayout.commandOffset((position + i / CommandQueueLayout.NAMES_PER_ENTRY) % entries));
                    final int n = i % CommandQueueLayout.NAMES_PER_ENTRY;
                    receivers.add(new ProcessName(names.nameAi(n), names.namePi(n)).toString());
                }
                e.put("receivers", receivers);
                position += CommandQueueLayout.namesEntries(entry.size());
            }
            pending.add(e);
        }
        out.put("pending", pending);
        return out;
    }

    private static Map<String, Object> context(final ClusterParameters params, final AtomicBuffer sdram, final int c,
        final int doorbell, final int contextAddress, final int regionAddress, final boolean receive)
    {
        final VniContext context = new VniContext().wrap(sdram, contextAddress);
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("context", c);
        out.put("doorbell", doorbell(doorbell));
        out.put(receive ? "sender" : "receiver", name(context.peerAi(), context.peerPi()));
        out.put("tag", ContextLayout.ANY == context.tag() ? "ANY_TAG" : context.tag());
        out.put("doorbellFlag", context.doorbellFlag());
        final long length = context.length();
        out.put("length", length >= 0 && length <= params.maxMessageBytes() ? length :
            impossible(length + " bytes, the largest message is " + params.maxMessageBytes()));
        final int pool = context.bufferPoolIndex();
        if (ContextLayout.NO_BUFFER_POOL != pool)
        {
            out.put("bufferPoolIndex", pool >= 0 && pool < params.bufferPoolPages() ? pool :
                impossible("page " + pool + " of " + params.bufferPoolPages()));
        }
        else
        {
            final int pages = context.pages();
            final ContextRegionDescriptor region = new ContextRegionDescriptor().wrap(sdram, regionAddress);
            if (pages < 0 || pages > params.descriptorsPerRegion())
            {
                out.put("pageTable", impossible(pages + " Descriptors, a Context Region holds " +
                    params.descriptorsPerRegion()));
            }
            else if (length <= params.shortThreshold() && !receive && pages <= 1 && !anyValid(region, pages))
            {
                out.put("pageTable", "none (a short message's data in the Context Region)");
            }
            else
            {
                final List<Object> table = new ArrayList<>();
                for (int d = 0; d < pages; d++)
                {
                    final Map<String, Object> descriptor = new LinkedHashMap<>();
                    final long address = region.address(d);
                    descriptor.put("page", address > 0 && address % params.pageSize() == 0 &&
                        address < params.hostMemoryBytes() ? address : impossible("address " + address));
                    descriptor.put("offset", region.offsetInPage(d));
                    descriptor.put("length", region.length(d));
                    if (!region.isValid(d))
                    {
                        descriptor.put("valid", false);
                    }
                    table.add(descriptor);
                }
                out.put("pageTable", table);
            }
        }
        if (receive && Doorbell.isComplete(doorbell))
        {
            out.put("source", name(context.sourceAi(), context.sourcePi()));
            out.put("sourceTag", context.sourceTag());
            out.put("messageLength", context.completionLength());
        }
        return out;
    }

    /** @return true if any of the first {@code pages} Descriptors of the region is marked valid. */
    private static boolean anyValid(final ContextRegionDescriptor region, final int pages)
    {
        for (int d = 0; d < pages; d++)
        {
            if (region.isValid(d))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * A NIC's tables as its firmware published them.
     *
     * @throws IllegalArgumentException if the cluster has no such node.
     */
    public static Map<String, Object> node(final ClusterDirectory dir, final NicCoordinates node)
    {
        final ClusterStatus status = ClusterStatus.read(dir);
        final ClusterParameters params = status.properties().parameters();
        final ClusterStatus.Node nic = status.nodes().stream().filter(n -> n.node().equals(node)).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("cluster '" + dir.name() + "' has no node " + node +
                ": it is a " + params.torus() + " torus"));
        final NicSdramLayout layout = new NicSdramLayout(params);
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("node", node.toString());
        out.put("firmware", nic.firmwareStateName());
        out.put("firmwarePid", nic.firmwarePid());
        out.put("heartbeatAgeMs", nic.heartbeatAgeMs());
        try (MappedFile sdramFile = MappedFile.mapExisting(dir.nicSdram(node));
            MappedFile hostFile = MappedFile.mapExisting(dir.hostMemory(node));
            MappedFile fifoFile = MappedFile.mapExisting(dir.rxFifo(node)))
        {
            final AtomicBuffer sdram = sdramFile.buffer();
            final AtomicBuffer host = hostFile.buffer();
            out.put("dutyCycles", new ControlProgramSegment().wrap(sdram, (int)layout.controlProgramOffset()).dutyCycles());
            final HostMemoryLayout hostLayout = new HostMemoryLayout(params);
            final List<Object> table = new ArrayList<>();
            final ProcessTableEntry entry = new ProcessTableEntry();
            final ProcessFlagArray flags = new ProcessFlagArray().wrap(host, hostLayout, params.maxProcessesPerNic());
            for (int p = 0; p < params.maxProcessesPerNic(); p++)
            {
                // Writer: the driver, which writes the PID last at registration and clears it first after.
                final int pid = entry.wrap(sdram, (int)layout.processEntryOffset(p)).pid();
                final int flag = flags.osPid(p);
                if (0 == pid && 0 == flag)
                {
                    continue;
                }
                final Map<String, Object> e = new LinkedHashMap<>();
                e.put("index", p);
                e.put("nicPid", ProcessTableLayout.nicPid(p));
                e.put("name", name(entry.nameAi(), entry.namePi()));
                e.put("group", entry.group());
                e.put("groupSize", entry.groupSize());
                e.put("osPid", pid);
                e.put("state", ProcessTableLayout.stateName(entry.state()));
                table.add(e);
            }
            out.put("processTable", table);
            final List<Object> names = new ArrayList<>();
            for (final PublishedTables.NameEntry n : nic.names())
            {
                names.add(n.name() + " on " + n.node() + " NIC PID " + n.nicPid() + " OS pid " + n.osPid());
            }
            out.put("nameTable", names);
            final List<Object> groups = new ArrayList<>();
            for (final PublishedTables.GroupEntry g : nic.groups())
            {
                final Map<String, Object> e = new LinkedHashMap<>();
                e.put("group", g.group());
                e.put("expectedSize", g.expectedSize());
                e.put("members", g.members().stream().map(ProcessName::toString).toList());
                groups.add(e);
            }
            out.put("groupTable", groups);
            out.put("vipl", vipl(status.vipl(), node));
            final Map<String, Long> counters = NicStatistics.counters(dir, node);
            final Map<String, Object> staging = new LinkedHashMap<>();
            staging.put("bytesInUse", counters.getOrDefault(NicCounters.STAGING_BYTES_IN_USE, 0L));
            staging.put("managedMemoryBytes", layout.managedMemoryLength());
            staging.put("messagesStagedSoFar", counters.getOrDefault(NicCounters.MESSAGES_STAGED, 0L));
            out.put("staging", staging);
            FileDescriptorBlock.verify(fifoFile.buffer(), FileDescriptorBlock.TYPE_RX_FIFO, dir.rxFifo(node).toString());
            final RxFifo fifo = new RxFifo(
                new UnsafeBuffer(fifoFile.buffer(), RxFifoLayout.RING_OFFSET, RxFifoLayout.ringLength(params)));
            final Map<String, Object> rx = new LinkedHashMap<>();
            rx.put("bytesWaiting", fifo.size());
            rx.put("capacity", fifo.capacity());
            out.put("inputFifo", rx);
        }
        return out;
    }

    /** What the VIA processes of {@code node} hold, from its VIA tables (issue 14). */
    private static Map<String, Object> vipl(final ClusterStatus.Vipl vipl, final NicCoordinates node)
    {
        final Map<String, Object> out = new LinkedHashMap<>();
        final List<Object> processes = new ArrayList<>();
        for (final ClusterStatus.ViplProcess p : vipl.processes())
        {
            if (p.node().equals(node))
            {
                final Map<String, Object> e = new LinkedHashMap<>();
                e.put("slot", p.slot());
                e.put("nicPid", p.nicPid());
                e.put("osPid", p.osPid());
                e.put("state", ProcessTableLayout.stateName(p.state()));
                processes.add(e);
            }
        }
        out.put("processes", processes);
        final List<Object> vis = new ArrayList<>();
        for (final ClusterStatus.ViplVi v : vipl.vis())
        {
            if (v.node().equals(node))
            {
                final Map<String, Object> e = new LinkedHashMap<>();
                e.put("vi", v.index());
                e.put("slot", v.owner());
                e.put("state", ViTableEntry.stateName(v.state()));
                e.put("reliability", v.reliabilityName());
                e.put("ptag", v.ptag());
                e.put("attributes", ClusterStatus.attributesName(v.attributes()));
                e.put("maxTransferSize", v.maxTransfer());
                e.put("sendCq", v.sendCq());
                e.put("receiveCq", v.receiveCq());
                if (null != v.peer())
                {
                    e.put("peer", v.peer().toString());
                    e.put("peerVi", v.peerVi());
                    e.put("connectionId", v.connectionId());
                }
                e.put("messagesDropped", v.dropped());
                vis.add(e);
            }
        }
        out.put("vis", vis);
        final List<Object> regions = new ArrayList<>();
        for (final ClusterStatus.ViplRegion r : vipl.regions())
        {
            if (r.node().equals(node))
            {
                final Map<String, Object> e = new LinkedHashMap<>();
                e.put("handle", r.handle());
                e.put("slot", r.owner());
                e.put("ptag", r.ptag());
                e.put("address", r.address());
                e.put("length", r.length());
                e.put("attributes", ClusterStatus.attributesName(r.attributes()));
                regions.add(e);
            }
        }
        out.put("memoryRegions", regions);
        final List<Object> cqs = new ArrayList<>();
        for (final ClusterStatus.ViplCq c : vipl.cqs())
        {
            if (c.node().equals(node))
            {
                final Map<String, Object> e = new LinkedHashMap<>();
                e.put("cq", c.index());
                e.put("slot", c.owner());
                e.put("entries", c.entries());
                cqs.add(e);
            }
        }
        out.put("completionQueues", cqs);
        return out;
    }

    private static String doorbell(final int value)
    {
        final String name = Doorbell.name(value);
        return name.startsWith("Doorbell(") ? impossible("doorbell code " + value) : name;
    }

    private static String name(final int ai, final int pi)
    {
        return ContextLayout.ANY == ai && ContextLayout.ANY == pi ? "ANY_PROC" : new ProcessName(ai, pi).toString();
    }

    private static String impossible(final String what)
    {
        return "impossible: " + what;
    }
}
