package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.CqTableEntry;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.MemoryRegionEntry;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaAddressSpace;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * A VIA process of a {@link SteppedCluster}, set up the way the driver does it (issue 14): its Process
 * Table entry (Kind VIA, VIA Process Structures) and New_Via_Process; its DMA memory is the area of a
 * {@link SteppedProcess} (locked in the Protection Table) as allocation {@link #allocation}, registered
 * as memory regions with their page translations; VIs and CQs written into the tables; connections
 * through Via_Connect. Descriptors are written with the qnix-abi flyweight and posted on its Command
 * Queue, as libvipl does.
 */
final class SteppedViaProcess
{
    private static final ProcessName NO_NAME = new ProcessName(0, 0);
    /** Where the VIA Process Structures and CQ rings of entry i live: high in host memory, clear of the areas. */
    private static final int STRUCTURES_SPAN = 32 * 1024;

    final SteppedCluster cluster;
    final int node;
    final int index;
    final int pid;
    final SteppedProcess memory;
    final int allocation;
    final long structures;
    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    private final NicSdramLayout layout;
    private final ViaTablesLayout via;
    private final int pageSize;

    SteppedViaProcess(final SteppedCluster cluster, final int node, final int index)
    {
        this.cluster = cluster;
        this.node = node;
        this.index = index;
        this.pid = 20_000 + node * 100 + index;
        this.memory = new SteppedProcess(cluster, node, index, NO_NAME);
        this.allocation = 1 + node * 100 + index;
        final NodeImage image = cluster.images.get(node);
        this.sdram = image.sdram();
        this.host = image.hostMemory();
        this.layout = image.sdramLayout();
        this.via = layout.via();
        this.pageSize = cluster.params.pageSize();
        this.structures = cluster.params.hostMemoryBytes() / 2 + (long)index * STRUCTURES_SPAN;
        memory.lockArea(1);
    }

    /** Registration as the driver does it, then New_Via_Process. @return the driver command's position. */
    int register()
    {
        final int contexts = cluster.params.contextsPerProcess();
        final int hpsPages = HostProcessStructuresLayout.pages(contexts, pageSize);
        final long hps = cluster.images.get(node).hostLayout().pagePoolOffset() + (long)index * hpsPages * pageSize;
        sdram.setMemory((int)layout.vniOffset(index), layout.vni().length(), (byte)0);
        host.setMemory((int)hps, HostProcessStructuresLayout.length(contexts), (byte)0);
        host.setMemory((int)structures, ViaProcessStructuresLayout.LENGTH, (byte)0);
        final int entry = (int)layout.processEntryOffset(index);
        sdram.putLong(entry + ProcessTableLayout.SEND_DOORBELLS_OFFSET, hps + HostProcessStructuresLayout.sendDoorbellOffset(0));
        sdram.putLong(entry + ProcessTableLayout.RECEIVE_DOORBELLS_OFFSET,
            hps + HostProcessStructuresLayout.receiveDoorbellOffset(contexts, 0));
        sdram.putLong(entry + ProcessTableLayout.PROCESS_CQ_HEAD_OFFSET, hps + HostProcessStructuresLayout.CQ_HEAD_OFFSET);
        sdram.putInt(entry + ProcessTableLayout.KIND_OFFSET, ProcessTableLayout.KIND_VIA);
        sdram.putLong(entry + ProcessTableLayout.VIA_STRUCTURES_OFFSET, structures);
        sdram.putIntRelease(entry + ProcessTableLayout.PID_OFFSET, pid);
        return cluster.post(node, DriverCommand.NEW_VIA_PROCESS, NO_NAME, pid, index, 0, 0);
    }

    /** @return the VIA address of byte {@code offset} of the area. */
    long address(final int offset)
    {
        return ViaAddressSpace.address(allocation, offset);
    }

    /**
     * Registers area bytes [offset, offset + length) under {@code ptag} in region-table slot
     * {@code slot}, with the translations of the pages from the one holding {@code offset}.
     *
     * @return the memory handle.
     */
    int registerRegion(final int slot, final int offset, final int length, final int ptag)
    {
        return registerRegion(slot, offset, length, ptag, 0);
    }

    /** @param attributes {@code ViTableEntry.ATTRIBUTE_RDMA_WRITE} and _READ, as VipRegisterMem's enables. */
    int registerRegion(final int slot, final int offset, final int length, final int ptag, final int attributes)
    {
        final int firstPage = offset / pageSize;
        final int pages = (offset + length - 1) / pageSize - firstPage + 1;
        final int firstTranslation = slot * SteppedProcess.AREA_PAGES;
        for (int p = 0; p < pages; p++)
        {
            sdram.putLong((int)via.translationOffset(firstTranslation + p), memory.areaAddress((firstPage + p) * pageSize));
        }
        final int handle = MemoryRegionEntry.handle(1, slot);
        new MemoryRegionEntry().wrap(sdram, (int)via.regionOffset(slot))
            .publish(handle, index, ptag, attributes, address(offset), length, firstTranslation, pages, allocation);
        return handle;
    }

    /** A CQ of {@code entries} in table entry {@code cq}, its ring after the VIA Process Structures. */
    long createCq(final int cq, final int entries)
    {
        final long ring = structures + ViaProcessStructuresLayout.LENGTH + Long.BYTES * 8;
        host.setMemory((int)ring, CqRingLayout.length(entries), (byte)0);
        new CqTableEntry().wrap(sdram, (int)via.cqOffset(cq)).publish(index, entries, ring, 1);
        return ring;
    }

    /**
     * Via_Resize_Cq of CQ {@code cq} (made by {@link #createCq}, generation 1) to a zeroed ring of
     * {@code entries} in the second half of this process's structures span, as the driver does it.
     *
     * @return the driver command's position.
     */
    int resizeCq(final int cq, final int entries, final int generation)
    {
        final long ring = newRing();
        host.setMemory((int)ring, CqRingLayout.length(entries), (byte)0);
        final CqTableEntry e = new CqTableEntry().wrap(sdram, (int)via.cqOffset(cq));
        return cluster.post(node, DriverCommand.VIA_RESIZE_CQ, new ProcessName((int)ring, (int)e.ringAddress()),
            entries, cq, 0, index, generation);
    }

    /** @return where {@link #resizeCq} puts the new ring. */
    long newRing()
    {
        return structures + STRUCTURES_SPAN / 2;
    }

    /** VI table entry {@code vi}, this process's VI number {@code number}, Idle. */
    ViTableEntry createVi(final int vi, final int number, final int ptag, final int reliability, final int receiveCq)
    {
        return createVi(vi, number, ptag, reliability, receiveCq, 0);
    }

    ViTableEntry createVi(final int vi, final int number, final int ptag, final int reliability, final int receiveCq,
        final int attributes)
    {
        final ViTableEntry e = new ViTableEntry().wrap(sdram, (int)via.viOffset(vi));
        e.create(index, ptag, attributes, reliability, 64 * 1024, ViTableEntry.NO_CQ, receiveCq,
            structures + ViaProcessStructuresLayout.sendCompletionOffset(number),
            structures + ViaProcessStructuresLayout.receiveCompletionOffset(number));
        return e;
    }

    ViTableEntry vi(final int vi)
    {
        return new ViTableEntry().wrap(sdram, (int)via.viOffset(vi));
    }

    /** Via_Connect of {@code vi} to {@code peerVi} of {@code peer}. @return the driver command's position. */
    int connect(final int vi, final SteppedViaProcess peer, final int peerVi, final int connectionId)
    {
        final int peerNic = NicCoordinates.packedOfIndex(peer.node, cluster.params.torusWidth());
        return connectionCommand(DriverCommand.VIA_CONNECT, vi, new ProcessName(peerNic, peerVi), connectionId,
            ProcessTableLayout.nicPid(peer.index));
    }

    /** Via_Disconnect of {@code vi}. @return the driver command's position. */
    int disconnect(final int vi)
    {
        return connectionCommand(DriverCommand.VIA_DISCONNECT, vi, new ProcessName(0, 0), 0, 0);
    }

    /** Via_Connection_Lost of connection {@code connectionId} on {@code vi}. @return the driver command's position. */
    int connectionLost(final int vi, final int connectionId)
    {
        return connectionCommand(DriverCommand.VIA_CONNECTION_LOST, vi, new ProcessName(0, 0), connectionId, 0);
    }

    /**
     * A connection command for {@code vi} of this process, for the VI its entry holds now (its
     * Generation), as the driver posts it.
     */
    private int connectionCommand(final int command, final int vi, final ProcessName name, final int pid,
        final int group)
    {
        return cluster.post(node, command, name, pid, vi, group, index, vi(vi).generation());
    }

    /** A descriptor at area byte {@code offset}, reset. */
    ViplDescriptor descriptor(final int offset)
    {
        return new ViplDescriptor().wrap(host, (int)memory.areaAddress(offset)).reset();
    }

    /** The descriptor at {@code offset} of the region whose base is area byte {@code regionOffset}. */
    void postSend(final int vi, final int handle, final int offset)
    {
        memory.post(ProcessCommand.VIA_POST_SEND, vi, handle, offset);
    }

    void postRecv(final int vi, final int handle, final int offset)
    {
        memory.post(ProcessCommand.VIA_POST_RECV, vi, handle, offset);
    }

    int sendsCompleted(final int number)
    {
        return host.getIntVolatile((int)structures + ViaProcessStructuresLayout.sendCompletionOffset(number));
    }

    int receivesCompleted(final int number)
    {
        return host.getIntVolatile((int)structures + ViaProcessStructuresLayout.receiveCompletionOffset(number));
    }

    int asyncEvents()
    {
        return host.getIntVolatile((int)structures + ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET);
    }

    /** @return the error code of async event {@code n}. */
    int asyncError(final int n)
    {
        return host.getInt((int)structures + ViaProcessStructuresLayout.asyncEventOffset(n) +
            ViaProcessStructuresLayout.EVENT_ERROR_OFFSET);
    }
}
