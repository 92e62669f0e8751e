package org.qnix.daemon;

import java.util.BitSet;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.CqTableEntry;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.HostClock;
import org.qnix.abi.MemoryRegionEntry;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaTablesLayout;

/**
 * The driver's end of one NIC's VIA tables in NIC internal memory (issue 14; {@link ViaTablesLayout}):
 * which VI, memory-region, page-translation and CQ entries are taken, and the writes that create and
 * clear them, each entry's fields before its State, Handle or Owner word. The driver is the only
 * writer but for the NIC's words of a VI entry, and no process maps the tables. A connection's changes
 * go through the NIC as driver commands (Via_Connect, Via_Disconnect, Via_Connection_Lost: issue 14,
 * "NICs learn of them through driver commands"), which the NIC applies to the VI entry; Idle and
 * Connect Pending, which mean nothing to the NIC, are the driver's own writes. Shared by every
 * connection of the node: synchronized, but for the connection commands, which are posted and whose
 * Driver Doorbells are waited for outside the monitor, so that a NIC slow to take one (a breakpoint, up
 * to the heartbeat timeout) holds up no other call on the tables; what the driver writes itself once it
 * gives up on the NIC goes only to the VI the command was for (same Generation). It checks nothing
 * about who asks: that is {@link ViaResources}' job.
 *
 * <p>A region entry is reused as soon as it is cleared (a VI or CQ entry too, unless a command the
 * driver gave up on for it may still be taken: {@link #isOutstanding}). That is safe without the DMA epoch the
 * {@link PageAllocator} keeps for pages, because the NIC honours a memory handle only if the entry
 * holds that very value (a new region in the slot has another generation), and checks every page it
 * copies against the Translation and Protection Table, owner and lock count, as for QNIX: a stale
 * translation read just before the slot was reused leads to a page of another owner, which fails. Words
 * of two regions read together (the slot reused during the read) are refused when they do not hold
 * together ({@code MemoryRegionEntry.physicalAddress}: the byte's offset in its page, the region's
 * Pages), so a copy never starts mid-page in a page it checked and ends in one it did not.
 *
 * <pre>{@code
 * ViaTables tables = new ViaTables(sdram, layout, node, commandQueue, heartbeats, image.controlSegment());
 * int handle = tables.registerRegion(owner, ptag, 0, base, length, pageAddresses);
 * tables.deregisterRegion(handle);
 * }</pre>
 */
final class ViaTables
{
    /** How long the driver waits for the NIC to take a connection command before writing the entry itself. */
    static final long COMMAND_TIMEOUT_MS = DriverProtocol.NIC_COMMAND_TIMEOUT_MS;
    private static final long POLL_MS = 1;

    private final AtomicBuffer sdram;
    private final ViaTablesLayout via;
    private final NicCoordinates node;
    private final DriverCommandQueueWriter commandQueue;
    private final NicHeartbeats heartbeats;
    private final BitSet vis;
    private final BitSet regions;
    private final BitSet translations;
    private final BitSet cqs;
    private final int[] generations;
    private final int[] cqGenerations;
    /** Per CQ entry: a Via_Resize_Cq given up on that its NIC may still take ({@link #isOutstanding}). */
    private final DriverCommandQueueWriter.Ticket[] abandonedResizes;
    /** Per VI entry: the latest connection command given up on that its NIC may still take. */
    private final DriverCommandQueueWriter.Ticket[] abandonedViCommands;
    private final ControlProgramSegment control;
    private final ViTableEntry viEntry = new ViTableEntry();
    private final MemoryRegionEntry regionEntry = new MemoryRegionEntry();
    private final CqTableEntry cqEntry = new CqTableEntry();
    private int nextPtag = 1;

    /**
     * Takes the tables over: every entry starts free, whatever files the driver started on.
     *
     * @param commandQueue the node's Driver Command Queue, for the connection commands.
     * @param heartbeats   to stop waiting for a dead NIC.
     * @param control      the NIC's control program segment: whether it does DMA any more.
     */
    ViaTables(final AtomicBuffer sdram, final NicSdramLayout layout, final NicCoordinates node,
        final DriverCommandQueueWriter commandQueue, final NicHeartbeats heartbeats,
        final ControlProgramSegment control)
    {
        this.sdram = sdram;
        this.via = layout.via();
        this.node = node;
        this.commandQueue = commandQueue;
        this.heartbeats = heartbeats;
        this.vis = new BitSet(via.viEntries());
        this.regions = new BitSet(via.regionEntries());
        this.translations = new BitSet(via.translationEntries());
        this.cqs = new BitSet(via.cqEntries());
        this.generations = new int[via.regionEntries()];
        this.cqGenerations = new int[via.cqEntries()];
        this.abandonedResizes = new DriverCommandQueueWriter.Ticket[via.cqEntries()];
        this.abandonedViCommands = new DriverCommandQueueWriter.Ticket[via.viEntries()];
        this.control = control;
        sdram.setMemory((int)via.viTableOffset(), (int)(via.endOffset() - via.viTableOffset()), (byte)0);
    }

    ViaTablesLayout layout()
    {
        return via;
    }

    /** @return a ptag no process of this node has had yet. */
    synchronized int newPtag()
    {
        final int ptag = nextPtag;
        nextPtag = nextPtag == Integer.MAX_VALUE ? 1 : nextPtag + 1;
        return ptag;
    }

    /**
     * The entry's Generation goes one up ({@link ViTableEntry#create}), so the NIC drops whatever was
     * posted to the entry's previous VI, even one of the same process destroyed while Idle.
     *
     * @return the new VI's index, Idle, or -1 if the VI table is full.
     */
    synchronized int createVi(final int owner, final int ptag, final int attributes, final int reliability,
        final int maxTransfer, final int sendCq, final int receiveCq, final long sendCompletion,
        final long receiveCompletion)
    {
        final int vi = reusableEntry(vis, abandonedViCommands);
        if (vi < 0)
        {
            return -1;
        }
        vis.set(vi);
        vi(vi).create(owner, ptag, attributes, reliability, maxTransfer, sendCq, receiveCq, sendCompletion,
            receiveCompletion);
        return vi;
    }

    synchronized int viState(final int vi)
    {
        return vi(vi).state();
    }

    /** @return false unless the VI was Idle: it is now Connect Pending. */
    synchronized boolean pending(final int vi)
    {
        final ViTableEntry entry = vi(vi);
        if (ViTableEntry.STATE_IDLE != entry.state())
        {
            return false;
        }
        entry.publishState(ViTableEntry.STATE_PENDING);
        return true;
    }

    /** A Connect Pending VI goes back to Idle (rejected, timed out); another state is left alone. */
    synchronized void unpending(final int vi)
    {
        final ViTableEntry entry = vi(vi);
        if (ViTableEntry.STATE_PENDING == entry.state())
        {
            entry.publishState(ViTableEntry.STATE_IDLE);
        }
    }

    /**
     * The connection the connection manager matched, told to the NIC (Via_Connect), which writes the
     * peer and the connection id, then Connected. @return false if the NIC refused it.
     */
    boolean connect(final int vi, final int connectionId, final int peerNic, final int peerVi, final int peerNicPid)
        throws InterruptedException
    {
        final Target target = target(vi, false);
        final int done = command(abandonedViCommands, DriverCommand.VIA_CONNECT, vi, target.owner, target.generation,
            connectionId, peerNic, peerVi, peerNicPid);
        if (NIC_GONE == done)
        {
            synchronized (this)
            {
                if (!isSameVi(vi, target.generation))
                {
                    return false;
                }
                vi(vi).connect(connectionId, peerNic, peerVi, peerNicPid);
                return true;
            }
        }
        return Doorbell.DONE == done;
    }

    /** {@code VipDisconnect} of this VI, told to the NIC (Via_Disconnect): Idle. */
    void disconnect(final int vi) throws InterruptedException
    {
        final Target target = target(vi, true);
        if (null == target)
        {
            return;
        }
        if (NIC_GONE == command(abandonedViCommands, DriverCommand.VIA_DISCONNECT, vi, target.owner,
            target.generation, 0, 0, 0, 0))
        {
            synchronized (this)
            {
                if (isSameVi(vi, target.generation))
                {
                    vi(vi).disconnect();
                }
            }
        }
    }

    /** The peer of the VI's connection {@code connectionId} went away (Via_Connection_Lost): Connected to Error. */
    void connectionLost(final int vi, final int connectionId) throws InterruptedException
    {
        final Target target = target(vi, false);
        if (NIC_GONE == command(abandonedViCommands, DriverCommand.VIA_CONNECTION_LOST, vi, target.owner,
            target.generation, connectionId, 0, 0, 0))
        {
            synchronized (this)
            {
                if (isSameVi(vi, target.generation) && vi(vi).connectionId() == connectionId)
                {
                    vi(vi).breakConnection();
                }
            }
        }
    }

    /** Whom a connection command on a VI is for: its owner and Generation, read under the monitor. */
    private record Target(int owner, int generation)
    {
    }

    /** @return the VI's owner and Generation; null if {@code unlessIdle} and it is Idle with no connection. */
    private synchronized Target target(final int vi, final boolean unlessIdle)
    {
        final ViTableEntry entry = vi(vi);
        if (unlessIdle && ViTableEntry.STATE_IDLE == entry.state() && 0 == entry.connectionId())
        {
            return null;
        }
        return new Target(entry.owner(), entry.generation());
    }

    /**
     * @return whether entry {@code vi} still holds the VI a command was posted for: in use, and of the
     * same Generation (a VI destroyed and made again while the command waited has a newer one).
     */
    private boolean isSameVi(final int vi, final int generation)
    {
        return vis.get(vi) && vi(vi).generation() == generation;
    }

    synchronized int connectionId(final int vi)
    {
        return vi(vi).connectionId();
    }

    /**
     * @return why this node's NIC is taken for dead (its control program stopped or silent), or null while
     * it runs its loop: a connection wait of one of its processes ends then (issue 14: "A stopped NIC ends
     * waits with a NIC-dead exception"). Not synchronized: it reads only the control program's words.
     */
    String deadNic()
    {
        return heartbeats.deadNic(node, HostClock.millis());
    }

    /** A command's outcome when the NIC did not take it: dead, or not running its loop. */
    private static final int NIC_GONE = -1;

    /**
     * Posts a VIA command on entry {@code index} of the process in Process Table entry {@code owner}
     * (the other fields as {@link DriverCommand#VIA_CONNECT} and {@link DriverCommand#VIA_RESIZE_CQ}
     * reuse them) and waits for the NIC's Driver Doorbell. Called outside the monitor, so that a NIC slow
     * to take it (or a queue full meanwhile) holds up no other call on these tables. A command given up on
     * stays in the queue, and a NIC that was only silent takes it later: it carries the {@code generation}
     * of its VI or CQ, which makes the NIC refuse it if the VI or CQ has been destroyed and made again by
     * then, so that it cannot connect, flush, break or move the newer one; and it is kept in
     * {@code abandoned}, so that the entry is not reused while the NIC may still take it
     * ({@link #isOutstanding}).
     *
     * @param abandoned the given-up commands of the entries of {@code index}'s table (VIs or CQs).
     * @return the doorbell, or {@link #NIC_GONE} if the NIC did not take it (the queue stayed full, the NIC
     * is dead, or it did not take it within {@link #COMMAND_TIMEOUT_MS}).
     */
    private int command(final DriverCommandQueueWriter.Ticket[] abandoned, final int command, final int index,
        final int owner, final int generation, final int pid, final int nameAi, final int namePi, final int group)
        throws InterruptedException
    {
        final DriverCommandQueueWriter.Ticket ticket = commandQueue.post(command, new ProcessName(nameAi, namePi),
            pid, index, group, owner, generation, COMMAND_TIMEOUT_MS);
        if (null == ticket)
        {
            System.err.println("driver " + node + ": could not post " + DriverCommand.name(command) + " for entry " +
                index + " (Driver Command Queue full)");
            return NIC_GONE;
        }
        final long deadline = HostClock.millis() + COMMAND_TIMEOUT_MS;
        int doorbell;
        // Writer: the NIC, with release, once it applied the command.
        while (!Doorbell.isComplete(doorbell = commandQueue.doorbell(ticket)))
        {
            final long now = HostClock.millis();
            if (now > deadline || null != heartbeats.deadNic(node, now))
            {
                commandQueue.abandon(ticket);
                synchronized (this)
                {
                    givenUp(abandoned, index, ticket);
                }
                return NIC_GONE;
            }
            Thread.sleep(POLL_MS);
        }
        commandQueue.release(ticket);
        return doorbell;
    }

    synchronized int viOwner(final int vi)
    {
        return vi(vi).owner();
    }

    /** The VI entry is free: the NIC no longer honours packets or posts for it. */
    synchronized void destroyVi(final int vi)
    {
        vi(vi).publishState(ViTableEntry.STATE_FREE);
        vis.clear(vi);
    }

    /**
     * @param pages the physical address of each page from the one holding {@code base} to the one
     *              holding its last byte.
     * @return the new region's memory handle, 0 if the region table is full, -1 if the translations are.
     */
    synchronized int registerRegion(final int owner, final int ptag, final int attributes, final long base,
        final long length, final long[] pages, final int allocation)
    {
        final int slot = regions.nextClearBit(0);
        if (slot >= via.regionEntries())
        {
            return 0;
        }
        final int first = findRun(pages.length);
        if (first < 0)
        {
            return -1;
        }
        translations.set(first, first + pages.length);
        for (int i = 0; i < pages.length; i++)
        {
            sdram.putLong((int)via.translationOffset(first + i), pages[i]);
        }
        regions.set(slot);
        generations[slot] = MemoryRegionEntry.nextGeneration(generations[slot]);
        final int handle = MemoryRegionEntry.handle(generations[slot], slot);
        region(slot).publish(handle, owner, ptag, attributes, base, length, first, pages.length, allocation);
        return handle;
    }

    synchronized void setRegionAttributes(final int handle, final int ptag, final int attributes)
    {
        region(MemoryRegionEntry.slot(handle)).attributes(ptag, attributes);
    }

    /** The region's entry is cleared first (the NIC stops honouring its handle), then its translations go. */
    synchronized void deregisterRegion(final int handle)
    {
        final int slot = MemoryRegionEntry.slot(handle);
        final MemoryRegionEntry entry = region(slot);
        entry.clear();
        translations.clear(entry.firstTranslation(), entry.firstTranslation() + entry.pages());
        regions.clear(slot);
    }

    /** @return the new CQ's index, or -1 if the CQ table is full. */
    synchronized int createCq(final int owner, final int entries, final long ringAddress)
    {
        final int cq = reusableEntry(cqs, abandonedResizes);
        if (cq < 0)
        {
            return -1;
        }
        cqs.set(cq);
        cqGenerations[cq]++;
        cq(cq).publish(owner, entries, ringAddress, cqGenerations[cq]);
        return cq;
    }

    /** What {@link #resizeCq} can answer. */
    enum Resize
    {
        /** The CQ names the new ring. */
        DONE,
        /** The old ring holds more entries than the new one can: the CQ still names the old ring. */
        TOO_MANY_QUEUED,
        /** The NIC refused the command (the CQ is not as the driver wrote it): the CQ still names the old ring. */
        REFUSED,
        /** The NIC did not take the command (dead, or not running its loop): it may still take it later. */
        NIC_GONE
    }

    /**
     * {@code VipResizeCQ} of a CQ of {@code owner}, told to the NIC (Via_Resize_Cq): the NIC, the only
     * writer of the ring, moves the queued entries to {@code newRing} between two of its appends and
     * makes the entry name it. The driver cannot do it for a NIC that is gone, since a NIC that is only
     * slow would go on appending to the old ring.
     */
    Resize resizeCq(final int cq, final int owner, final int entries, final long newRing)
        throws InterruptedException
    {
        final int generation;
        final long oldRing;
        synchronized (this)
        {
            final CqTableEntry entry = cq(cq);
            generation = entry.generation();
            oldRing = entry.ringAddress();
        }
        final int done = command(abandonedResizes, DriverCommand.VIA_RESIZE_CQ, cq, owner, generation, entries,
            (int)newRing, (int)oldRing, 0);
        if (NIC_GONE == done)
        {
            return Resize.NIC_GONE;
        }
        if (Doorbell.DONE == done)
        {
            return Resize.DONE;
        }
        return Doorbell.NO_RESOURCES == done ? Resize.TOO_MANY_QUEUED : Resize.REFUSED;
    }

    /**
     * Under the monitor: the first entry of a table (VIs or CQs) that is free and has no given-up command
     * its NIC may still take ({@link #isOutstanding}).
     *
     * @param used      the table's entries in use.
     * @param abandoned the table's given-up commands, one slot per entry.
     * @return the entry, or -1 if there is none.
     */
    private int reusableEntry(final BitSet used, final DriverCommandQueueWriter.Ticket[] abandoned)
    {
        for (int index = used.nextClearBit(0); index < abandoned.length; index = used.nextClearBit(index + 1))
        {
            if (!isOutstanding(abandoned, index))
            {
                return index;
            }
        }
        return -1;
    }

    /** Under the monitor: {@code ticket}, a command on entry {@code index} given up on, may still be taken. */
    private static void givenUp(final DriverCommandQueueWriter.Ticket[] abandoned, final int index,
        final DriverCommandQueueWriter.Ticket ticket)
    {
        // Commands are taken in queue order: the latest posted of those given up on is the last to wait
        // for, whichever thread gave up on it last.
        if (null == abandoned[index] || ticket.sequence() > abandoned[index].sequence())
        {
            abandoned[index] = ticket;
        }
    }

    /**
     * @return true while a command the driver gave up on for entry {@code index} (a Via_Resize_Cq of a
     * CQ; a Via_Connect, Via_Disconnect or Via_Connection_Lost of a VI) may still be taken by its NIC:
     * until the NIC completed it or does no DMA any more. The entry is not given to a new CQ or VI
     * meanwhile. The NIC refuses such a command for a newer CQ or VI in the entry (its Generation), but
     * a CQ made while the NIC copies the old ring would be pointed at the resize's ring, no longer its
     * process's; and a VI the driver set Idle or Error itself may still have a packet of its connection
     * in the NIC's hands, which a VI made in the entry for another process must not receive.
     */
    private boolean isOutstanding(final DriverCommandQueueWriter.Ticket[] abandoned, final int index)
    {
        final DriverCommandQueueWriter.Ticket ticket = abandoned[index];
        if (null == ticket)
        {
            return false;
        }
        if (commandQueue.completed(ticket) || FirmwareProcess.doesNoDma(control, HostClock.millis()))
        {
            abandoned[index] = null;
            return false;
        }
        return true;
    }

    synchronized void destroyCq(final int cq)
    {
        cq(cq).clear();
        cqs.clear(cq);
    }

    /** @return VI, region and CQ entries in use: for tests and `cluster status`. */
    synchronized int[] inUse()
    {
        return new int[] {vis.cardinality(), regions.cardinality(), cqs.cardinality(), translations.cardinality()};
    }

    private int findRun(final int count)
    {
        int start = translations.nextClearBit(0);
        while (start + count <= via.translationEntries())
        {
            final int nextUsed = translations.nextSetBit(start);
            if (nextUsed < 0 || nextUsed >= start + count)
            {
                return start;
            }
            start = translations.nextClearBit(nextUsed);
        }
        return -1;
    }

    private ViTableEntry vi(final int vi)
    {
        return viEntry.wrap(sdram, (int)via.viOffset(vi));
    }

    private MemoryRegionEntry region(final int slot)
    {
        return regionEntry.wrap(sdram, (int)via.regionOffset(slot));
    }

    private CqTableEntry cq(final int cq)
    {
        return cqEntry.wrap(sdram, (int)via.cqOffset(cq));
    }
}
