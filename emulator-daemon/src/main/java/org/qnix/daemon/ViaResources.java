package org.qnix.daemon;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaAddressSpace;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplResult;

/**
 * One VIA process's resources as its driver (VIA's kernel agent) sees them (issue 14): its ptags,
 * memory regions, completion queues and VIs, and the checks every request about them passes before
 * anything is written into the NIC's {@link ViaTables}: the owner, the ptag, the range, the limits, and
 * what is still in use. A refusal is a {@link ViaRefusal} carrying the VIPL code the library reports.
 * {@link #releaseAll()} is process death: every VI, region and CQ of the process leaves the tables.
 * Its connection calls are {@link ViaConnectionRequests}', which it owns.
 *
 * <p>Used by its process's one connection thread; the tables it shares with the node's other
 * processes are synchronized.
 *
 * <pre>{@code
 * int ptag = resources.createPtag();
 * int handle = resources.registerMem(allocation, 0, 8192, ptag, 0);
 * ViaResources.Vi vi = resources.createVi(ptag, 0, ViTableEntry.RELIABLE_DELIVERY, 4096, -1, -1);
 * resources.releaseAll();
 * }</pre>
 */
final class ViaResources
{
    private final ViaTables tables;
    private final ProcessProtectionTable memory;
    private final ClusterParameters params;
    private final NicCoordinates node;
    private final int owner;
    private final long structuresAddress;
    private final Map<Integer, Integer> ptags = new LinkedHashMap<>();
    private final Map<Integer, Region> regions = new LinkedHashMap<>();
    private final Map<Integer, Cq> cqs = new LinkedHashMap<>();
    private final Map<Integer, Vi> vis = new LinkedHashMap<>();
    private final BitSet numbers = new BitSet(ViaProcessStructuresLayout.MAX_VIS);
    /** The connection calls, checked for this process's VIs. */
    private final ViaConnectionRequests requests;

    /** A registered region: its handle, the allocation it lies in and its ptag. */
    record Region(int handle, int allocation, int ptag)
    {
    }

    /**
     * A completion queue, the pages of its ring, and the rings it had before a {@code VipResizeCQ}: the
     * process may still have a thread asleep on an old ring's Tail, so an old ring stays the process's
     * until the CQ is destroyed.
     */
    record Cq(int cq, int entries, ProcessProtectionTable.Entry ring, List<ProcessProtectionTable.Entry> retired)
    {
        Cq resized(final int newEntries, final ProcessProtectionTable.Entry newRing)
        {
            final List<ProcessProtectionTable.Entry> rings = new ArrayList<>(retired);
            rings.add(ring);
            return new Cq(cq, newEntries, newRing, List.copyOf(rings));
        }

        /** A ring the NIC may have taken up although it never said so: kept with the old ones. */
        Cq keeping(final ProcessProtectionTable.Entry mayBeInUse)
        {
            final List<ProcessProtectionTable.Entry> rings = new ArrayList<>(retired);
            rings.add(mayBeInUse);
            return new Cq(cq, entries, ring, List.copyOf(rings));
        }
    }

    /** A VI: its NIC VI table index, its number in the process, its ptag and CQs. */
    record Vi(int vi, int number, int ptag, int sendCq, int receiveCq, int reliability, int maxTransfer,
        int attributes)
    {
    }

    /**
     * @param owner             the process's Process Table index.
     * @param uid               the process's uid, as the kernel gave it for its driver connection.
     * @param host              the node's host memory, which holds the process's VIA Process Structures.
     * @param structuresAddress where its VIA Process Structures are in host memory.
     */
    ViaResources(final ViaTables tables, final ViaConnections connections, final ProcessProtectionTable memory,
        final ClusterParameters params, final NicCoordinates node, final int owner, final int uid,
        final AtomicBuffer host, final long structuresAddress)
    {
        this.tables = tables;
        this.memory = memory;
        this.params = params;
        this.node = node;
        this.owner = owner;
        this.structuresAddress = structuresAddress;
        this.requests = new ViaConnectionRequests(connections, tables, node, owner, uid, this::ownVi, host,
            structuresAddress);
    }

    int owner()
    {
        return owner;
    }

    /** @return the process's connection calls and its Close requested word. */
    ViaConnectionRequests requests()
    {
        return requests;
    }

    /** {@code VipCreatePtag}. */
    int createPtag() throws ViaRefusal
    {
        if (ptags.size() >= ViaTablesLayout.MAX_PTAGS_PER_PROCESS)
        {
            throw new ViaRefusal(ViplResult.ERROR_RESOURCE, "the process already holds " + ptags.size() +
                " protection tags, the most one process may (" + ViaTablesLayout.MAX_PTAGS_PER_PROCESS + ")");
        }
        final int ptag = tables.newPtag();
        ptags.put(ptag, 0);
        return ptag;
    }

    /** {@code VipDestroyPtag}: refused while a VI or a memory region uses the tag. */
    void destroyPtag(final int ptag) throws ViaRefusal
    {
        final int users = users(ptag);
        if (users > 0)
        {
            throw new ViaRefusal(ViplResult.ERROR_RESOURCE, "protection tag " + ptag + " is in use by " + users +
                " VI(s) and memory region(s): destroy or deregister them first");
        }
        ptags.remove(ptag);
    }

    /**
     * {@code VipRegisterMem}: {@code [offset, offset + length)} of DMA allocation {@code allocation}, which
     * is locked once more for as long as the region is registered. The same range may be registered
     * again, under another ptag or with other attributes.
     *
     * @return the memory handle.
     */
    int registerMem(final int allocation, final long offset, final long length, final int ptag,
        final int attributes) throws ViaRefusal
    {
        final ProcessProtectionTable.Entry entry = memory.region(allocation);
        if (null == entry || entry.isPool() || entry.isFixed())
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "no DMA memory " + allocation + " of this process on node " +
                node + " to register");
        }
        final int pageSize = params.pageSize();
        final long bytes = (long)entry.pages() * pageSize;
        if (offset < 0 || length < 1 || offset > bytes - length)
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "bytes [" + offset + ", " + (offset + length) +
                ") are not inside DMA memory " + allocation + " of " + bytes + " bytes (a region is at least a byte)");
        }
        checkPtag(ptag);
        checkAttributes(attributes);
        final int firstPage = (int)(offset / pageSize);
        final int lastPage = (int)((offset + length - 1) / pageSize);
        final long[] pages = new long[lastPage - firstPage + 1];
        for (int i = 0; i < pages.length; i++)
        {
            pages[i] = entry.address(firstPage + i);
        }
        try
        {
            memory.registerVia(allocation);
        }
        catch (final ProcessProtectionTable.Refusal ex)
        {
            throw new ViaRefusal(ViplResult.ERROR_RESOURCE, ex.getMessage());
        }
        final int handle = tables.registerRegion(owner, ptag, attributes, ViaAddressSpace.address(allocation, offset),
            length, pages, allocation);
        if (handle <= 0)
        {
            undoRegistration(allocation);
            throw new ViaRefusal(ViplResult.ERROR_RESOURCE, 0 == handle ?
                "the memory-region table of NIC " + node + " is full (" + tables.layout().regionEntries() + " regions)" :
                "the page translations of NIC " + node + " have no run of " + pages.length + " free entries (" +
                tables.layout().translationEntries() + " in all)");
        }
        regions.put(handle, new Region(handle, allocation, ptag));
        ptags.merge(ptag, 1, Integer::sum);
        return handle;
    }

    /** {@code VipDeregisterMem}: the NIC stops honouring the handle; the allocation loses a lock. */
    void deregisterMem(final int handle) throws ViaRefusal
    {
        final Region region = region(handle);
        tables.deregisterRegion(handle);
        regions.remove(handle);
        ptags.merge(region.ptag(), -1, Integer::sum);
        undoRegistration(region.allocation());
    }

    /** {@code VipSetMemAttributes}: a new ptag and RDMA enables for a registered region. */
    void setMemAttributes(final int handle, final int ptag, final int attributes) throws ViaRefusal
    {
        final Region region = region(handle);
        checkPtag(ptag);
        checkAttributes(attributes);
        tables.setRegionAttributes(handle, ptag, attributes);
        ptags.merge(region.ptag(), -1, Integer::sum);
        ptags.merge(ptag, 1, Integer::sum);
        regions.put(handle, new Region(handle, region.allocation(), ptag));
    }

    /** {@code VipCreateCQ}: a ring of {@code entries} in host pages the process maps. */
    Cq createCq(final int entries) throws ViaRefusal
    {
        final ProcessProtectionTable.Entry ring = allocateRing(entries);
        final int cq = tables.createCq(owner, entries, ring.address(0));
        if (cq < 0)
        {
            memory.releaseFixed(ring);
            throw new ViaRefusal(ViplResult.ERROR_RESOURCE, "the CQ table of NIC " + node + " has no free entry (" +
                tables.layout().cqEntries() + " completion queues in use, or held back until the NIC takes a " +
                "resize the driver gave up on)");
        }
        final Cq created = new Cq(cq, entries, ring, List.of());
        cqs.put(cq, created);
        return created;
    }

    /** @return the zeroed, locked pages of a ring of {@code entries}, refused if none or out of range. */
    private ProcessProtectionTable.Entry allocateRing(final int entries) throws ViaRefusal
    {
        if (entries < 1 || entries > ViaTablesLayout.MAX_CQ_ENTRIES)
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "a completion queue of " + entries +
                " entries is outside [1, " + ViaTablesLayout.MAX_CQ_ENTRIES + "]");
        }
        final ProcessProtectionTable.Entry ring = memory.allocateFixed(CqRingLayout.pages(entries, params.pageSize()));
        if (null == ring)
        {
            throw new ViaRefusal(ViplResult.ERROR_RESOURCE, "host memory of node " + node + " has no " +
                CqRingLayout.pages(entries, params.pageSize()) + " contiguous pages for a ring of " + entries + " entries");
        }
        return ring;
    }

    /** {@code VipDestroyCQ}: refused while a work queue of a VI is attached to it. */
    void destroyCq(final int cq) throws ViaRefusal
    {
        final Cq queue = cqs.get(cq);
        if (null == queue)
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "no completion queue " + cq + " of this process");
        }
        final long attached = vis.values().stream().filter(v -> v.sendCq() == cq || v.receiveCq() == cq).count();
        if (attached > 0)
        {
            throw new ViaRefusal(ViplResult.ERROR_RESOURCE, "completion queue " + cq + " has work queues of " + attached +
                " VI(s) attached: destroy them first");
        }
        tables.destroyCq(cq);
        cqs.remove(cq);
        memory.releaseFixed(queue.ring());
        queue.retired().forEach(memory::releaseFixed);
    }

    /**
     * {@code VipResizeCQ}: a new ring of {@code entries}, which the NIC takes up with the entries queued
     * (Via_Resize_Cq). Refused ({@code INVALID_PARAMETER}) if the CQ holds more entries than that;
     * {@code INVALID_STATE} if the NIC did not take the command, after which the CQ cannot be trusted.
     */
    Cq resizeCq(final int cq, final int entries) throws ViaRefusal, InterruptedException
    {
        final Cq queue = cqs.get(cq);
        if (null == queue)
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "no completion queue " + cq + " of this process");
        }
        final ProcessProtectionTable.Entry ring = allocateRing(entries);
        switch (tables.resizeCq(cq, owner, entries, ring.address(0)))
        {
            case DONE ->
            {
                final Cq resized = queue.resized(entries, ring);
                cqs.put(cq, resized);
                return resized;
            }
            case TOO_MANY_QUEUED ->
            {
                memory.releaseFixed(ring);
                throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "completion queue " + cq +
                    " holds more completions than " + entries + ": take some first");
            }
            case REFUSED ->
            {
                memory.releaseFixed(ring);
                throw new ViaRefusal(ViplResult.ERROR_RESOURCE, "NIC " + node + " refused to resize completion queue " + cq);
            }
            default ->
            {
                cqs.put(cq, queue.keeping(ring));
                throw new ViaRefusal(ViplResult.INVALID_STATE, "NIC " + node + " did not take the resize of completion " +
                    "queue " + cq + " (stopped, or not running its loop): destroy the CQ");
            }
        }
    }

    /** {@code VipCreateVi}: a VI in state Idle, its completion lines in the VIA Process Structures. */
    Vi createVi(final int ptag, final int attributes, final int reliability, final int maxTransfer, final int sendCq,
        final int receiveCq) throws ViaRefusal
    {
        if (ViTableEntry.UNRELIABLE != reliability && ViTableEntry.RELIABLE_DELIVERY != reliability &&
            ViTableEntry.RELIABLE_RECEPTION != reliability)
        {
            throw new ViaRefusal(ViplResult.INVALID_RELIABILITY_LEVEL, "reliability level " + reliability +
                " is none of Unreliable (1), Reliable Delivery (2), Reliable Reception (4)");
        }
        if (maxTransfer < 0 || maxTransfer > params.maxMessageBytes())
        {
            throw new ViaRefusal(ViplResult.INVALID_MTU, "max transfer size " + maxTransfer + " is outside [0, " +
                params.maxMessageBytes() + "], the NIC's largest transfer");
        }
        checkPtag(ptag);
        checkAttributes(attributes);
        if (0 != (attributes & ViTableEntry.ATTRIBUTE_RDMA_READ) && ViTableEntry.UNRELIABLE == reliability)
        {
            throw new ViaRefusal(ViplResult.INVALID_RDMAREAD, "RDMA read needs a reliable VI (VIA 1.0)");
        }
        checkCq(sendCq, "send");
        checkCq(receiveCq, "receive");
        final int number = numbers.nextClearBit(0);
        if (number >= ViaProcessStructuresLayout.MAX_VIS)
        {
            throw new ViaRefusal(ViplResult.ERROR_RESOURCE, "the process already holds " + vis.size() +
                " VIs, the most one process may (" + ViaProcessStructuresLayout.MAX_VIS + ")");
        }
        final int vi = tables.createVi(owner, ptag, attributes, reliability, maxTransfer, sendCq, receiveCq,
            structuresAddress + ViaProcessStructuresLayout.sendCompletionOffset(number),
            structuresAddress + ViaProcessStructuresLayout.receiveCompletionOffset(number));
        if (vi < 0)
        {
            throw new ViaRefusal(ViplResult.ERROR_RESOURCE, "the VI table of NIC " + node + " has no free entry (" +
                tables.layout().viEntries() + " VIs in use, or held back until the NIC takes a connection command " +
                "the driver gave up on)");
        }
        numbers.set(number);
        final Vi created = new Vi(vi, number, ptag, sendCq, receiveCq, reliability, maxTransfer, attributes);
        vis.put(vi, created);
        ptags.merge(ptag, 1, Integer::sum);
        return created;
    }

    /** {@code VipDestroyVi}: only an Idle VI (VIA 1.0: disconnect first). */
    void destroyVi(final int vi) throws ViaRefusal
    {
        final Vi created = vis.get(vi);
        if (null == created)
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "no VI " + vi + " of this process");
        }
        final int state = tables.viState(vi);
        if (ViTableEntry.STATE_IDLE != state)
        {
            throw new ViaRefusal(ViplResult.INVALID_STATE, "VI " + vi + " is " + ViTableEntry.stateName(state) +
                ": only an idle VI can be destroyed (disconnect it first)");
        }
        requests.forgetVi(vi);
        forget(created);
    }

    /** {@code VipQueryVi}: the State the VI table holds, where the NIC or a departed peer may have put Error. */
    int viState(final int vi) throws ViaRefusal
    {
        ownVi(vi);
        return tables.viState(vi);
    }

    /** Process death or de-registration: every VI, region and CQ leaves the NIC's tables, VIs first. */
    void releaseAll() throws InterruptedException
    {
        requests.forgetAsked();
        for (final Vi vi : vis.values().toArray(new Vi[0]))
        {
            // The peers of its connected VIs see the connection lost (issue 14).
            requests.endConnection(vi.vi());
            forget(vi);
        }
        for (final Region region : regions.values().toArray(new Region[0]))
        {
            tables.deregisterRegion(region.handle());
            regions.remove(region.handle());
        }
        for (final Cq cq : cqs.values().toArray(new Cq[0]))
        {
            tables.destroyCq(cq.cq());
            cqs.remove(cq.cq());
        }
        ptags.clear();
        // The pages (allocations, rings, structures) go with the process's other pages (PageAllocator.freeAll).
    }

    private void forget(final Vi vi)
    {
        tables.destroyVi(vi.vi());
        vis.remove(vi.vi());
        numbers.clear(vi.number());
        ptags.merge(vi.ptag(), -1, Integer::sum);
    }

    private Vi ownVi(final int vi) throws ViaRefusal
    {
        final Vi own = vis.get(vi);
        if (null == own)
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "no VI " + vi + " of this process");
        }
        return own;
    }

    private int users(final int ptag) throws ViaRefusal
    {
        final Integer users = ptags.get(ptag);
        if (null == users)
        {
            throw new ViaRefusal(ViplResult.INVALID_PTAG, "protection tag " + ptag + " is not one of this process's");
        }
        return users;
    }

    private void checkPtag(final int ptag) throws ViaRefusal
    {
        users(ptag);
    }

    private static void checkAttributes(final int attributes) throws ViaRefusal
    {
        if (0 != (attributes & ~(ViTableEntry.ATTRIBUTE_RDMA_WRITE | ViTableEntry.ATTRIBUTE_RDMA_READ)))
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "attributes " + attributes +
                " name more than RDMA write (1) and RDMA read (2)");
        }
    }

    private void checkCq(final int cq, final String queue) throws ViaRefusal
    {
        if (ViTableEntry.NO_CQ != cq && !cqs.containsKey(cq))
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "the " + queue + " queue's completion queue " + cq +
                " is not one of this process's");
        }
    }

    private Region region(final int handle) throws ViaRefusal
    {
        final Region region = regions.get(handle);
        if (null == region)
        {
            throw new ViaRefusal(ViplResult.INVALID_PARAMETER, "memory handle " + handle +
                " names no region this process registered");
        }
        return region;
    }

    private void undoRegistration(final int allocation)
    {
        try
        {
            memory.deregisterVia(allocation);
        }
        catch (final ProcessProtectionTable.Refusal ex)
        {
            throw new IllegalStateException(ex.getMessage(), ex);
        }
    }
}
