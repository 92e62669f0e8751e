package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.VniContext;

/**
 * Broadcast, Broadcast_Short, Multicast and Multicast_Short (thesis 3.5.2; multicast as multiple sends
 * at NIC level, thesis 3.2): one copy of the data in NIC memory, and one Scheduling Queue entry per
 * destination, each asking for permission and scheduled by the {@link SendScheduler} like a Send. The
 * Send Doorbell rings when the counter of the local copy reaches zero. A cast that finds too few free
 * entries in the NIC's pool waits, oldest first; {@link #doWork()} starts the waiting ones as entries
 * free up.
 *
 * <pre>{@code
 * casts.startCast(slot, slot.casts[context], ProcessCommand.BROADCAST, group, 0);
 * casts.doWork();  // starts casts that waited for Scheduling Queue entries
 * }</pre>
 */
final class CastSender
{
    private final int torusWidth;
    private final int pageSize;
    private final AtomicBuffer sdram;
    private final VniContext context = new VniContext();
    private final AtomicBuffer host;
    private final NicCounters counters;
    private final NameTable names;
    private final GroupTable groups;
    private final ContextReader contexts;
    private final StagingMemory staging;
    private final ProcessSlot[] slots;
    private final Doorbells doorbells;
    private final SendScheduler scheduler;
    /** The receiver names following a Multicast command, read by the {@link CommandQueueReader}. */
    private final int[] multicastAi;
    private final int[] multicastPi;
    /** Broadcasts and Multicasts waiting for Scheduling Queue entries, oldest first. */
    private CastOperation castsWaitingHead;
    private CastOperation castsWaitingTail;

    CastSender(final FirmwareContext ctx, final SendScheduler scheduler)
    {
        final ClusterParameters params = ctx.parameters();
        this.torusWidth = params.torusWidth();
        this.pageSize = params.pageSize();
        this.sdram = ctx.sdram();
        this.host = ctx.hostMemory();
        this.counters = ctx.counters();
        this.names = ctx.nameTable();
        this.groups = ctx.groupTable();
        this.contexts = ctx.contextReader();
        this.staging = ctx.stagingMemory();
        this.slots = ctx.processSlots();
        this.doorbells = ctx.doorbells();
        this.scheduler = scheduler;
        final int maxReceivers = CommandQueueLayout.maxMulticastReceivers(params);
        multicastAi = new int[maxReceivers];
        multicastPi = new int[maxReceivers];
    }

    /** Room for the names a Multicast command can carry. */
    int maxMulticastReceivers()
    {
        return multicastAi.length;
    }

    /** The {@code index}-th receiver name following the Multicast command being read. */
    void multicastReceiver(final int index, final int ai, final int pi)
    {
        multicastAi[index] = ai;
        multicastPi[index] = pi;
    }

    /** Starts the casts that waited for Scheduling Queue entries, oldest first, as far as there are. */
    int doWork()
    {
        int work = 0;
        CastOperation cast;
        while (null != (cast = castsWaitingHead))
        {
            final ProcessSlot slot = slots[cast.processIndex];
            if (!tryStartCast(slot, cast))
            {
                break;
            }
            unwaitCast(cast);
            work++;
        }
        return work;
    }

    /**
     * Reads the Send Context and resolves the destinations; nothing moves if either is bad. A Broadcast
     * goes to every member of the group except the sender, a Multicast to the names that followed it.
     *
     * @param receivers for a Multicast, the names given to {@link #multicastReceiver}, or -1 if the
     *                  Size was bad.
     */
    void startCast(final ProcessSlot slot, final CastOperation cast, final int command, final int group,
        final int receivers)
    {
        final int context = contexts.sendContextAddress(slot.index, cast.context);
        final VniContext fields = this.context.wrap(sdram, context);
        cast.describe(command, fields.doorbellFlag(), fields.tag());
        final int check = contexts.readMessage(slot.index, slot.nicPid, cast.context, cast.isShort(), cast.buffer);
        if (0 != check)
        {
            finishCast(slot, cast, check);
            return;
        }
        cast.message(cast.buffer.length, cast.buffer.firstLength,
            MessageGeometry.packets(cast.buffer.length, cast.buffer.firstLength, pageSize),
            contexts.sendRegionAddress(slot.index, cast.context));

        final int destinationsStatus = ProcessCommand.BROADCAST == command || ProcessCommand.BROADCAST_SHORT == command ?
            groupDestinations(slot, cast, group) : nameDestinations(cast, receivers);
        if (Doorbell.DONE != destinationsStatus)
        {
            finishCast(slot, cast, destinationsStatus);
            return;
        }
        if (cast.destinations > SendScheduler.CAST_SENDS)
        {
            finishCast(slot, cast, Doorbell.NO_RESOURCES);
            return;
        }
        cast.active = true;
        if (null != castsWaitingHead || !tryStartCast(slot, cast))
        {
            waitCast(cast);
        }
    }

    /** Step 2 of Broadcast: every member of the group but the sender. @return Done or an error doorbell. */
    private int groupDestinations(final ProcessSlot slot, final CastOperation cast, final int group)
    {
        final GroupTable.Group entry = groups.lookup(group);
        if (null == entry)
        {
            return Doorbell.BAD_COMMAND;
        }
        if (entry.broken)
        {
            return Doorbell.PEER_GONE;
        }
        if (!entry.isComplete())
        {
            return Doorbell.BAD_COMMAND;
        }
        for (final GroupTable.Member member : entry.members)
        {
            if (member.name().ai() != slot.aiName || member.name().pi() != slot.piName)
            {
                cast.addDestination(member.node().index(torusWidth), member.nicPid(), member.incarnation(),
                    member.name().ai(), member.name().pi());
            }
        }
        return Doorbell.DONE;
    }

    /** Multicast: the names that followed the command, through the Name Table as for a Send. */
    private int nameDestinations(final CastOperation cast, final int receivers)
    {
        if (receivers < 1)
        {
            return Doorbell.BAD_COMMAND;
        }
        for (int i = 0; i < receivers; i++)
        {
            final NameTable.Entry receiver = names.lookup(multicastAi[i], multicastPi[i]);
            if (null == receiver)
            {
                return Doorbell.PEER_GONE;
            }
            cast.addDestination(receiver.node.index(torusWidth), receiver.nicPid, receiver.incarnation, multicastAi[i],
                multicastPi[i]);
        }
        return Doorbell.DONE;
    }

    /**
     * Steps 1 and 3-5 of Broadcast: the one DMA read of the data into managed memory, then a send from
     * that copy to every destination, each asking for permission like a Send. When managed memory
     * cannot hold the copy now, every destination reads the sender's pages itself, as a Send does:
     * waiting for the memory could wait for ever, since staging for the receives this very cast may
     * need takes from the same memory.
     *
     * @return false if Scheduling Queue entries are short; nothing was taken then.
     */
    private boolean tryStartCast(final ProcessSlot slot, final CastOperation cast)
    {
        if (scheduler.freeCastEntries() < cast.destinations)
        {
            return false;
        }
        cast.fromHost = false;
        if (!cast.isShort() && cast.length > 0 && cast.destinations > 0)
        {
            final long copy = staging.allocate(cast.length);
            if (copy < 0)
            {
                cast.fromHost = true;
            }
            else if (!copyToNic(slot, cast, copy))
            {
                staging.free(copy, cast.length);
                finishCast(slot, cast, Doorbell.PROTECTION);
                return true;
            }
            else
            {
                cast.copied(copy);
            }
        }
        cast.remaining = cast.destinations;
        if (0 == cast.destinations)
        {
            finishCast(slot, cast, Doorbell.DONE);
            return true;
        }
        for (int d = 0; d < cast.destinations; d++)
        {
            // A destination deleted while the cast waited (its Process Table entry may even hold
            // another process by now) gets nothing.
            final NameTable.Entry receiver = names.lookup(cast.destinationAi[d], cast.destinationPi[d]);
            if (null == receiver || receiver.nicPid != cast.destinationPid[d] ||
                receiver.incarnation != cast.destinationIncarnation[d] ||
                receiver.node.index(torusWidth) != cast.destinationNode[d])
            {
                if (cast.destinationDone(Doorbell.PEER_GONE))
                {
                    finishCast(slot, cast, cast.status);
                }
                continue;
            }
            final SendOperation op = scheduler.takeCastEntry();
            op.describeCastDestination(slot.index, cast, d);
            scheduler.schedule(slot, op, cast.destinationNode[d], cast.destinationPid[d],
                cast.destinationIncarnation[d]);
        }
        return true;
    }

    /**
     * The emulated DMA read of the whole message from the sender's pages, checked again now (they may
     * have been unlocked while the cast waited), into managed memory at {@code copy}.
     */
    private boolean copyToNic(final ProcessSlot slot, final CastOperation cast, final long copy)
    {
        for (int packet = 0; packet < cast.packets; packet++)
        {
            final int offset = MessageGeometry.offset(packet, cast.firstPacketLength, pageSize);
            final long address = cast.buffer.address(offset, pageSize);
            if (!contexts.isLockedBy(slot.nicPid, address))
            {
                return false;
            }
        }
        for (int packet = 0; packet < cast.packets; packet++)
        {
            final int offset = MessageGeometry.offset(packet, cast.firstPacketLength, pageSize);
            final int length = MessageGeometry.packetLength(packet, cast.length, cast.firstPacketLength, pageSize);
            sdram.putBytes((int)(copy + offset), host, (int)cast.buffer.address(offset, pageSize), length);
        }
        counters.castCopies.increment();
        counters.hostBytesRead.getAndAddRelease(cast.length);
        return true;
    }

    /** One destination's send completed (called by the {@link SendScheduler}): Broadcast step 3. */
    void destinationDone(final ProcessSlot slot, final SendOperation op, final int status)
    {
        final CastOperation cast = op.cast;
        scheduler.releaseCastEntry(op);
        if (cast.destinationDone(status))
        {
            finishCast(slot, cast, cast.status);
        }
    }

    private void finishCast(final ProcessSlot slot, final CastOperation cast, final int status)
    {
        freeCopy(cast);
        cast.active = false;
        if (Doorbell.DONE == status)
        {
            counters.castsCompleted.increment();
        }
        else
        {
            counters.errorCompletions.increment();
        }
        doorbells.ring(slot.sendDoorbells, cast.context,
            Doorbell.DONE == status && !cast.doorbellFlag ? Doorbell.FREE : status);
    }

    private void freeCopy(final CastOperation cast)
    {
        if (cast.copyLength > 0)
        {
            staging.free(cast.dataAddress, cast.copyLength);
            cast.copyLength = 0;
        }
    }

    private void waitCast(final CastOperation cast)
    {
        cast.waitingToStart = true;
        cast.nextWaiting = null;
        cast.previousWaiting = castsWaitingTail;
        if (null == castsWaitingTail)
        {
            castsWaitingHead = cast;
        }
        else
        {
            castsWaitingTail.nextWaiting = cast;
        }
        castsWaitingTail = cast;
    }

    private void unwaitCast(final CastOperation cast)
    {
        if (null == cast.previousWaiting)
        {
            castsWaitingHead = cast.nextWaiting;
        }
        else
        {
            cast.previousWaiting.nextWaiting = cast.nextWaiting;
        }
        if (null == cast.nextWaiting)
        {
            castsWaitingTail = cast.previousWaiting;
        }
        else
        {
            cast.nextWaiting.previousWaiting = cast.previousWaiting;
        }
        cast.previousWaiting = null;
        cast.nextWaiting = null;
        cast.waitingToStart = false;
    }

    /**
     * The process of {@code slot} is being deleted (after its sends were dropped): its casts end without
     * doorbells and their copies are freed.
     */
    void processDeleted(final ProcessSlot slot)
    {
        for (final CastOperation cast : slot.casts)
        {
            if (cast.active)
            {
                if (cast.waitingToStart)
                {
                    unwaitCast(cast);
                }
                freeCopy(cast);
                cast.active = false;
            }
        }
    }
}
