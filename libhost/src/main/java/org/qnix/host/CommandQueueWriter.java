package org.qnix.host;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueEntry;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessName;
import org.qnix.abi.VniLayout;

/**
 * The process side of a Virtual Network Interface's Command Queue (thesis 3.3.1-3.3.2), for libqnix's
 * commands and VIPL's posts alike: an entry's fields, the Command field last with release (the NIC finds
 * commands by it), the Tail advanced and the NIC woken. The Head the NIC publishes (DESIGN.md 8, item 6)
 * says how much room is left; one entry always stays empty, so that a full queue is told from an empty
 * one. A full queue is waited for, as the thesis says, with {@link BackOff}, bounded by a timeout, and
 * ended by a stopped NIC, which would never make room, and by the registration's close, which waits for
 * the calls inside its {@link MappingGuard} to leave before it unmaps the queue.
 *
 * <p>It returns codes, never throws for the NIC's or the close's sake (as {@link DoorbellWaiter} does):
 * each library turns {@link #TIMED_OUT}, {@link #NIC_DEAD} and {@link #CLOSED} into its own API's errors.
 *
 * <pre>{@code
 * CommandQueueWriter commands = new CommandQueueWriter(params, vni, hps, wakeUp, heartbeat, guard);
 * int code = commands.post(ProcessCommand.SEND, context, 0, 0, CommandQueueWriter.RESOURCE_WAIT_NS);
 * if (CommandQueueWriter.POSTED != code)
 * {
 *     throw new IllegalStateException("not posted: " + code);
 * }
 * }</pre>
 *
 * <p>Not thread safe: one thread posts at a time (libqnix's API is for one thread; VIPL serialises its
 * posts on this object). Every call runs inside the guard. Allocation free.
 */
public final class CommandQueueWriter
{
    /** The command is in the queue and the NIC woken. */
    public static final int POSTED = 0;
    /** The queue stayed full for the whole timeout; nothing was written. */
    public static final int TIMED_OUT = 1;
    /** The NIC's control program stopped while the queue was full; nothing was written. */
    public static final int NIC_DEAD = 2;
    /** The registration began closing while the queue was full; nothing was written. */
    public static final int CLOSED = 3;
    /** How long the libraries wait for room in a full queue. */
    public static final long RESOURCE_WAIT_NS = TimeUnit.SECONDS.toNanos(30);

    private final VniLayout layout;
    private final UnsafeBuffer vni;
    private final UnsafeBuffer hps;
    private final NicWakeUp wakeUp;
    private final NicHeartbeat heartbeat;
    private final MappingGuard guard;
    private final int entries;
    private final int maxMulticastReceivers;
    private final CommandQueueEntry entry = new CommandQueueEntry();
    private int commandTail;

    /**
     * @param params    the cluster's parameters: the queue's length N and the VNI's layout.
     * @param vni       the process's VNI slice of the NIC SDRAM, which holds the queue's entries.
     * @param hps       its Host Process Structures page: the Tail this writes, the Head the NIC writes.
     * @param wakeUp    the NIC's wake-up line, rung after each command.
     * @param heartbeat the NIC that takes the commands.
     * @param guard     the registration's guard, whose close ends a wait for room.
     */
    public CommandQueueWriter(final ClusterParameters params, final UnsafeBuffer vni, final UnsafeBuffer hps,
        final NicWakeUp wakeUp, final NicHeartbeat heartbeat, final MappingGuard guard)
    {
        this.layout = new VniLayout(params);
        this.vni = vni;
        this.hps = hps;
        this.wakeUp = wakeUp;
        this.heartbeat = heartbeat;
        this.guard = guard;
        this.entries = params.commandQueueEntries();
        this.maxMulticastReceivers = CommandQueueLayout.maxMulticastReceivers(params);
        // A process maps its VNI once, but the Tail it finds there is where its previous writer stopped.
        this.commandTail = Math.floorMod(hps.getInt(HostProcessStructuresLayout.CQ_TAIL_OFFSET), entries);
    }

    /** @return why a post ended {@link #TIMED_OUT}, for the library's exception. */
    public String describeFull(final long timeoutNs)
    {
        return "the Command Queue of N=" + entries + " entries stayed full for " +
            TimeUnit.NANOSECONDS.toSeconds(timeoutNs) + " s";
    }

    /** Posts a command once the queue has room. @return {@link #POSTED} or why not (nothing written). */
    public int post(final int command, final int context, final int group, final int size, final long timeoutNs)
    {
        final int room = awaitRoom(1, timeoutNs);
        if (POSTED == room)
        {
            write(command, context, group, size);
        }
        return room;
    }

    /** Posts a command if the queue has room now. @return false, having written nothing, if it is full. */
    public boolean tryPost(final int command, final int context, final int group, final int size)
    {
        if (freeEntries() < 1)
        {
            return false;
        }
        write(command, context, group, size);
        return true;
    }

    /**
     * Posts a Multicast or Multicast_Short once the queue has room for it and its receivers' names, which
     * go into the entries after the command's, {@link CommandQueueLayout#NAMES_PER_ENTRY} per entry; the
     * command is written last, so its release publishes them all (DESIGN.md 8, item 8).
     *
     * @return {@link #POSTED} or why not (nothing written).
     * @throws IllegalArgumentException if the names could never fit in the queue.
     */
    public int postMulticast(final int command, final int context, final ProcessName[] receivers,
        final long timeoutNs)
    {
        final int room = awaitRoom(multicastEntries(receivers), timeoutNs);
        if (POSTED == room)
        {
            writeMulticast(command, context, receivers);
        }
        return room;
    }

    /** {@link #postMulticast} if the queue has room for it now. @return false, having written nothing, if not. */
    public boolean tryPostMulticast(final int command, final int context, final ProcessName[] receivers)
    {
        if (freeEntries() < multicastEntries(receivers))
        {
            return false;
        }
        writeMulticast(command, context, receivers);
        return true;
    }

    /** @return the entries free now: what the NIC has taken up to its last published Head. */
    public int freeEntries()
    {
        // Writer: the NIC, every eight commands and whenever it finds the queue empty (DESIGN.md 8, item 6).
        final int head = hps.getIntVolatile(HostProcessStructuresLayout.CQ_HEAD_OFFSET);
        return Math.floorMod(head - commandTail - 1, entries);
    }

    private int multicastEntries(final ProcessName[] receivers)
    {
        if (receivers.length > maxMulticastReceivers)
        {
            throw new IllegalArgumentException("a multicast to " + receivers.length + " processes does not fit in " +
                "the Command Queue: the queue holds " + (entries - 1) + " entries, names for " + maxMulticastReceivers);
        }
        return 1 + CommandQueueLayout.namesEntries(receivers.length);
    }

    /** Waits, backing off, until {@code needed} entries are free. @return {@link #POSTED} once they are. */
    private int awaitRoom(final int needed, final long timeoutNs)
    {
        // The common case reads no clock.
        if (freeEntries() >= needed)
        {
            return POSTED;
        }
        final long deadline = System.nanoTime() + timeoutNs;
        int looks = 0;
        while (freeEntries() < needed)
        {
            // The close waits for this call to leave the guard before it unmaps the queue: leave at once.
            if (guard.isClosed())
            {
                return CLOSED;
            }
            if (System.nanoTime() - deadline > 0)
            {
                return TIMED_OUT;
            }
            if (BackOff.isSlowLookDue(looks) && !heartbeat.isRunning())
            {
                return NIC_DEAD;
            }
            BackOff.idle(looks++);
        }
        return POSTED;
    }

    private void write(final int command, final int context, final int group, final int size)
    {
        entry.wrap(vni, layout.commandOffset(commandTail)).publish(command, context, group, size);
        advanceTail(1);
    }

    private void writeMulticast(final int command, final int context, final ProcessName[] receivers)
    {
        for (int i = 0; i < receivers.length; i++)
        {
            final int nameEntry = (commandTail + 1 + i / CommandQueueLayout.NAMES_PER_ENTRY) % entries;
            entry.wrap(vni, layout.commandOffset(nameEntry))
                .putName(i % CommandQueueLayout.NAMES_PER_ENTRY, receivers[i].ai(), receivers[i].pi());
        }
        entry.wrap(vni, layout.commandOffset(commandTail)).publish(command, context, 0, receivers.length);
        advanceTail(1 + CommandQueueLayout.namesEntries(receivers.length));
    }

    private void advanceTail(final int used)
    {
        commandTail = (commandTail + used) % entries;
        // Reader: no one polls it: the NIC finds commands by their Command field (thesis 3.3.3). The
        // library reads it back when it maps the VNI, and inspection reads it.
        hps.putIntRelease(HostProcessStructuresLayout.CQ_TAIL_OFFSET, commandTail);
        // An idle NIC sleeps: the command just published wakes it.
        wakeUp.ring();
    }
}
