package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueEntry;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessTableEntry;
import org.qnix.abi.VniLayout;

/**
 * TX steps 5-6 (thesis 3.5): the Command Scheduling Queue. Each {@link #doWork()} takes one command
 * from the Command Queue of the next process that has one, round robin, clears the entry, publishes
 * the Command Queue Head every eighth command (or when the queue is found empty), and hands the
 * command to the role that carries it out: Send and Send_Short to the {@link SendScheduler}, Receive to
 * the {@link ReceiveTable}, Broadcast and Multicast to the {@link CastSender}, Join_Group and Barrier to
 * the {@link GroupOperations}, a VIA process's VIA_POST_SEND and VIA_POST_RECV to the {@link ViaEngine}. A command that throws is the {@link DutyCycleErrorHandler}'s; the next
 * one is read as usual.
 *
 * <pre>{@code
 * int work = commands.doWork();  // 1 if a command was taken
 * }</pre>
 */
final class CommandQueueReader
{
    /** The NIC writes a Command Queue Head back every eight commands (thesis 3.5, TX step 6). */
    static final int HEAD_UPDATE_INTERVAL = 8;

    private final NicSdramLayout layout;
    private final VniLayout vni;
    private final AtomicBuffer sdram;
    private final CommandQueueEntry entry = new CommandQueueEntry();
    private final ProcessTableEntry processEntry = new ProcessTableEntry();
    private final String nodeName;
    private final AtomicBuffer host;
    private final NicCounters counters;
    private final ProcessSlot[] slots;
    private final ActiveProcesses activeProcesses;
    private final int contextCount;
    private final int commandEntries;
    private final Doorbells doorbells;
    private final DutyCycleErrorHandler errors;
    private final SendScheduler scheduler;
    private final CastSender casts;
    private final ReceiveTable receives;
    private final GroupOperations groupOperations;
    private final ViaEngine via;
    private int commandCursor;

    CommandQueueReader(final FirmwareContext ctx, final SendScheduler scheduler, final CastSender casts,
        final ReceiveTable receives, final GroupOperations groupOperations, final ViaEngine via)
    {
        this.nodeName = ctx.nodeName();
        final ClusterParameters params = ctx.parameters();
        this.layout = ctx.sdramLayout();
        this.vni = layout.vni();
        this.sdram = ctx.sdram();
        this.host = ctx.hostMemory();
        this.counters = ctx.counters();
        this.slots = ctx.processSlots();
        this.activeProcesses = ctx.activeProcesses();
        this.contextCount = params.contextsPerProcess();
        this.commandEntries = params.commandQueueEntries();
        this.doorbells = ctx.doorbells();
        this.errors = ctx.errorHandler();
        this.scheduler = scheduler;
        this.casts = casts;
        this.receives = receives;
        this.groupOperations = groupOperations;
        this.via = via;
    }

    /** A process now lives in {@code slot}: its Command Queue starts empty, at entry 0. */
    static void resetQueue(final ProcessSlot slot)
    {
        slot.commandHead = 0;
        slot.commandHeadPublished = 0;
        slot.commandsSinceHeadUpdate = 0;
    }

    /** @return 1 if a command was taken, else 0. */
    int doWork()
    {
        final int count = activeProcesses.count();
        for (int n = 0, p = activeProcesses.positionFrom(commandCursor); n < count; n++, p = activeProcesses.next(p))
        {
            final int index = activeProcesses.entryAt(p);
            final ProcessSlot slot = slots[index];
            entry.wrap(sdram, (int)(layout.vniOffset(index) + vni.commandOffset(slot.commandHead)));
            // Writer: the owner process, which publishes the Command field last.
            final int command = entry.command();
            if (ProcessCommand.NONE == command)
            {
                if (slot.commandHeadPublished != slot.commandHead)
                {
                    publishCommandHead(slot);
                }
                continue;
            }
            // Thesis 3.5, de-registration step 1: an entry whose PID the driver cleared is not served.
            if (0 == processEntry.wrap(sdram, (int)layout.processEntryOffset(index)).pid())
            {
                continue;
            }
            final int context = entry.context();
            final int group = entry.group();
            final int size = entry.size();
            consumeCommandEntry(slot);
            final boolean multicast = ProcessCommand.MULTICAST == command || ProcessCommand.MULTICAST_SHORT == command;
            final int sizeOrReceivers = multicast ? readMulticastNames(slot, index, size) : size;
            commandCursor = ProcessSlot.nextInRoundRobin(index, slots.length);
            counters.commands.increment();
            FirmwareEvents.commandTaken(nodeName, slot.nicPid, command, context);
            try
            {
                execute(slot, command, context, group, sizeOrReceivers);
            }
            catch (final RuntimeException ex)
            {
                // The entry is consumed already: the loop goes on with the next command.
                errors.onProcessCommandError(ex, command);
            }
            return 1;
        }
        return 0;
    }

    /** Consumes the entry {@link #entry} is wrapped around, the one at the slot's Command Queue Head. */
    private void consumeCommandEntry(final ProcessSlot slot)
    {
        // Readers: the NIC itself, next time round the queue, and the process: Command 0 is an empty entry.
        entry.consume();
        slot.commandHead = (slot.commandHead + 1) % commandEntries;
        if (++slot.commandsSinceHeadUpdate >= HEAD_UPDATE_INTERVAL)
        {
            publishCommandHead(slot);
        }
    }

    /**
     * Reads the receiver names that follow a Multicast command, two per entry (DESIGN.md 8, item 8),
     * into the {@link CastSender}. The command's release published them.
     *
     * @return the number of names, or -1 if {@code size} is out of range; then the entries the largest
     * Multicast could use are consumed, so that none of them is taken for a command.
     */
    private int readMulticastNames(final ProcessSlot slot, final int index, final int size)
    {
        final int max = casts.maxMulticastReceivers();
        final boolean valid = size >= 1 && size <= max;
        final int entries = CommandQueueLayout.namesEntries(valid ? size : max);
        for (int e = 0; e < entries; e++)
        {
            entry.wrap(sdram, (int)(layout.vniOffset(index) + vni.commandOffset(slot.commandHead)));
            for (int n = 0; n < CommandQueueLayout.NAMES_PER_ENTRY; n++)
            {
                final int name = e * CommandQueueLayout.NAMES_PER_ENTRY + n;
                if (name < size)
                {
                    casts.multicastReceiver(name, entry.nameAi(n), entry.namePi(n));
                }
            }
            consumeCommandEntry(slot);
        }
        return valid ? size : -1;
    }

    private void publishCommandHead(final ProcessSlot slot)
    {
        // Reader: the owner process, checking for room in its Command Queue (thesis 3.3.2).
        host.putIntRelease((int)slot.commandQueueHeadAddress, slot.commandHead);
        slot.commandHeadPublished = slot.commandHead;
        slot.commandsSinceHeadUpdate = 0;
    }

    /**
     * @param group the command's Group field.
     * @param size  the command's Size field; for a Multicast, the names given to the {@link CastSender},
     *              or -1 if its Size was out of range.
     */
    private void execute(final ProcessSlot slot, final int command, final int context, final int group,
        final int size)
    {
        if (slot.via)
        {
            // A VIA process's posts (issue 14) belong to the VIA role: Context = VI, Group = the
            // descriptor's memory handle, Size = its offset. A QNIX command from it is refused, since
            // it has no QNIX name to send or receive under.
            via.post(slot, command, context, group, size);
            return;
        }
        if (context < 0 || context >= contextCount)
        {
            // No doorbell belongs to a context that does not exist.
            counters.commandsRejected.increment();
            return;
        }
        if (ProcessCommand.RECEIVE == command)
        {
            receives.postReceive(slot, slot.receives[context]);
            return;
        }
        if (slot.sendContextBusy(context))
        {
            // The context is still in use by an earlier operation, which keeps its doorbell.
            counters.commandsRejected.increment();
            return;
        }
        switch (command)
        {
            case ProcessCommand.SEND:
            case ProcessCommand.SEND_SHORT:
                scheduler.startSend(slot, slot.sends[context], command);
                break;

            case ProcessCommand.BROADCAST:
            case ProcessCommand.BROADCAST_SHORT:
            case ProcessCommand.MULTICAST:
            case ProcessCommand.MULTICAST_SHORT:
                casts.startCast(slot, slot.casts[context], command, group, size);
                break;

            case ProcessCommand.JOIN_GROUP:
                groupOperations.joinGroup(slot, context, group, size);
                break;

            case ProcessCommand.BARRIER:
                groupOperations.barrier(slot, context, group, size);
                break;

            default:
                counters.commandsRejected.increment();
                counters.errorCompletions.increment();
                doorbells.ring(slot.sendDoorbells, context, Doorbell.BAD_COMMAND);
        }
    }
}
