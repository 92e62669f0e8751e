package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueEntry;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.ContextRegionDescriptor;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ProtectionTableLayout;
import org.qnix.abi.VniContext;
import org.qnix.abi.VniLayout;

/**
 * A user process of a {@link SteppedCluster}, written by hand against the same memory the real driver
 * and libqnix write: its Process Table entry and Host Process Structures page, locked pages in the
 * Protection Table, Contexts, Context Regions and Command Queue entries. Each process owns a fixed
 * area of {@link #AREA_PAGES} host pages for its buffers.
 */
final class SteppedProcess
{
    static final int AREA_PAGES = 24;

    final SteppedCluster cluster;
    final int node;
    final int index;
    final ProcessName name;
    final int osPid;
    private final ClusterParameters params;
    private final NicSdramLayout layout;
    private final VniLayout vni;
    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    private final long hps;
    private final long area;
    private final long[] areaPages = new long[AREA_PAGES];
    private final CommandQueueEntry entry = new CommandQueueEntry();
    private final VniContext context = new VniContext();
    private final ContextRegionDescriptor region = new ContextRegionDescriptor();
    private int commandTail;

    SteppedProcess(final SteppedCluster cluster, final int node, final int index, final ProcessName name)
    {
        this.cluster = cluster;
        this.node = node;
        this.index = index;
        this.name = name;
        this.osPid = 10_000 + node * 100 + index;
        this.params = cluster.params;
        final NodeImage image = cluster.images.get(node);
        this.layout = image.sdramLayout();
        this.vni = layout.vni();
        this.sdram = image.sdram();
        this.host = image.hostMemory();
        final int page = params.pageSize();
        final long pool = image.hostLayout().pagePoolOffset();
        final int hpsPages = HostProcessStructuresLayout.pages(params.contextsPerProcess(), page);
        this.hps = pool + (long)index * hpsPages * page;
        this.area = pool + ((long)params.maxProcessesPerNic() * hpsPages + (long)index * AREA_PAGES) * page;
        if (area + (long)AREA_PAGES * page > params.hostMemoryBytes())
        {
            throw new IllegalStateException("host memory too small for process area " + index);
        }
        for (int p = 0; p < AREA_PAGES; p++)
        {
            areaPages[p] = area + (long)p * page;
        }
    }

    /** Registration steps 3-5 as the driver does them, then New_Process (step 2). */
    int register(final int group, final int groupSize)
    {
        final int contexts = params.contextsPerProcess();
        sdram.setMemory((int)layout.vniOffset(index), vni.length(), (byte)0);
        host.setMemory((int)hps, HostProcessStructuresLayout.length(contexts), (byte)0);
        final int entry = (int)layout.processEntryOffset(index);
        sdram.putLong(entry + ProcessTableLayout.SEND_DOORBELLS_OFFSET, hps + HostProcessStructuresLayout.sendDoorbellOffset(0));
        sdram.putLong(entry + ProcessTableLayout.RECEIVE_DOORBELLS_OFFSET,
            hps + HostProcessStructuresLayout.receiveDoorbellOffset(contexts, 0));
        sdram.putLong(entry + ProcessTableLayout.PROCESS_CQ_HEAD_OFFSET, hps + HostProcessStructuresLayout.CQ_HEAD_OFFSET);
        commandTail = 0;
        return cluster.newProcess(node, index, name, osPid, group, groupSize);
    }

    int delete()
    {
        return cluster.deleteProcess(node, index, name, osPid);
    }

    /** @return the physical address of byte {@code offset} of this process's area. */
    long areaAddress(final int offset)
    {
        return area + offset;
    }

    /** Locks (or unlocks, count 0) the area's pages in the Protection Table, as the driver does. */
    void lockArea(final int lockCount)
    {
        for (int p = 0; p < AREA_PAGES; p++)
        {
            final long address = area + (long)p * params.pageSize();
            sdram.putIntRelease((int)layout.protectionEntryOffset(address),
                ProtectionTableLayout.entry(ProcessTableLayout.nicPid(index), lockCount));
        }
    }

    void fill(final int offset, final int length, final int seed)
    {
        for (int i = 0; i < length; i++)
        {
            host.putByte((int)area + offset + i, pattern(seed, i));
        }
    }

    static byte pattern(final int seed, final int i)
    {
        return (byte)(seed * 31 + i * 7 + (i >> 8));
    }

    byte areaByte(final int offset)
    {
        return host.getByte((int)area + offset);
    }

    /** A Send Context whose Context Region holds the page table of area bytes [offset, offset+length). */
    void sendContext(final int context, final ProcessName receiver, final int tag, final int offset, final int length)
    {
        final int c = (int)(layout.vniOffset(index) + vni.sendContextOffset(context));
        final int region = (int)(layout.vniOffset(index) + vni.sendContextRegionOffset(context));
        writeContext(c, receiver.ai(), receiver.pi(), tag, length, pageTable(region, offset, length));
    }

    /** A Send Context for Send_Short: the data itself in the Context Region. */
    void shortContext(final int context, final ProcessName receiver, final int tag, final byte[] data)
    {
        final int c = (int)(layout.vniOffset(index) + vni.sendContextOffset(context));
        final int region = (int)(layout.vniOffset(index) + vni.sendContextRegionOffset(context));
        sdram.putBytes(region, data);
        writeContext(c, receiver.ai(), receiver.pi(), tag, data.length, 1);
    }

    void receiveContext(final int context, final int senderAi, final int senderPi, final int tag, final int offset,
        final int length)
    {
        final int c = (int)(layout.vniOffset(index) + vni.receiveContextOffset(context));
        final int region = (int)(layout.vniOffset(index) + vni.receiveContextRegionOffset(context));
        writeContext(c, senderAi, senderPi, tag, length, pageTable(region, offset, length));
    }

    /** Overwrites one Descriptor's page address, as a buggy or hostile process could. */
    void corruptSendDescriptor(final int context, final int descriptor, final long address)
    {
        region.wrap(sdram, (int)(layout.vniOffset(index) + vni.sendContextRegionOffset(context)))
            .put(descriptor, address, region.offsetInPage(descriptor), region.length(descriptor));
    }

    private void writeContext(final int c, final int ai, final int pi, final int tag, final int length, final int pages)
    {
        this.context.wrap(sdram, c).fill(ai, pi, tag, true, pages, length, ContextLayout.NO_BUFFER_POOL);
    }

    /** qx_buffer_translate of area bytes [offset, offset+length) into a Context Region, as libqnix does it. */
    private int pageTable(final int regionAddress, final int offset, final int length)
    {
        return region.wrap(sdram, regionAddress).translate(areaPages, params.pageSize(), offset, length,
            params.descriptorsPerRegion());
    }

    /** Posts a command: fields first, the Command field last with release (its reader is the NIC). */
    void post(final int command, final int context)
    {
        post(command, context, 0, 0);
    }

    void post(final int command, final int context, final int group, final int size)
    {
        entry(commandTail).publish(command, context, group, size);
        commandTail = (commandTail + 1) % params.commandQueueEntries();
    }

    /** A Multicast: the receiver names first, two per entry after the command's, then the command. */
    void postMulticast(final int command, final int context, final ProcessName... receivers)
    {
        final int first = commandTail;
        entry(first);
        for (int i = 0; i < receivers.length; i++)
        {
            final int n = i % CommandQueueLayout.NAMES_PER_ENTRY;
            if (0 == n)
            {
                // A name's AI overwrites the Command field: look for an empty entry before its first name.
                entry((first + 1 + i / CommandQueueLayout.NAMES_PER_ENTRY) % params.commandQueueEntries());
            }
            entry.putName(n, receivers[i].ai(), receivers[i].pi());
        }
        commandTail = (first + 1 + CommandQueueLayout.namesEntries(receivers.length)) % params.commandQueueEntries();
        entry(first).publish(command, context, 0, receivers.length);
    }

    /** @return the Command Queue entry at {@code position}, which must be empty. */
    private CommandQueueEntry entry(final int position)
    {
        entry.wrap(sdram, (int)(layout.vniOffset(index) + vni.commandOffset(position)));
        if (!entry.isEmpty())
        {
            throw new IllegalStateException("Command Queue full");
        }
        return entry;
    }

    /** What qx_poll_for_send/receive do after seeing a completion: the doorbell is Free again. */
    void freeDoorbells()
    {
        for (int c = 0; c < params.contextsPerProcess(); c++)
        {
            host.putIntRelease((int)hps + HostProcessStructuresLayout.sendDoorbellOffset(c), 0);
            host.putIntRelease(
                (int)hps + HostProcessStructuresLayout.receiveDoorbellOffset(params.contextsPerProcess(), c), 0);
        }
    }

    /** What qx_poll_for_send does after seeing a completion on one context. */
    void freeDoorbell(final int context)
    {
        host.putIntRelease((int)hps + HostProcessStructuresLayout.sendDoorbellOffset(context), 0);
    }

    /** What qx_poll_for_receive does after seeing a completion on one context. */
    void freeReceiveDoorbell(final int context)
    {
        host.putIntRelease(
            (int)hps + HostProcessStructuresLayout.receiveDoorbellOffset(params.contextsPerProcess(), context), 0);
    }

    int sendDoorbell(final int context)
    {
        return host.getIntVolatile((int)hps + HostProcessStructuresLayout.sendDoorbellOffset(context));
    }

    int receiveDoorbell(final int context)
    {
        return host.getIntVolatile(
            (int)hps + HostProcessStructuresLayout.receiveDoorbellOffset(params.contextsPerProcess(), context));
    }

    /** @return (source AI, source PI, tag, length) written by the NIC at completion. */
    long[] receiveCompletion(final int context)
    {
        final VniContext c = this.context.wrap(sdram, (int)(layout.vniOffset(index) + vni.receiveContextOffset(context)));
        return new long[] {c.sourceAi(), c.sourcePi(), c.sourceTag(), c.completionLength()};
    }
}
