package org.qnix.daemon;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.DriverCommandEntry;
import org.qnix.abi.HostClock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessName;

/**
 * The driver's end of the Driver Command Queue (thesis 3.3.3, 3.4): posts commands at the tail and
 * watches the Driver Doorbell of each position. A position is reused only when the NIC has consumed
 * its command (the Command reads zero again) and its doorbell result has been taken, or was abandoned
 * by a waiter that gave up and has since completed; so a late completion can never be mistaken for the
 * result of a newer command.
 */
final class DriverCommandQueueWriter
{
    /**
     * One posted command, to wait on.
     *
     * @param sequence which command posted at {@code position} this is: the position may be reused once
     *                 the command is completed and abandoned, and a later doorbell is not this command's.
     */
    record Ticket(int position, long sequence)
    {
    }

    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    private final NicSdramLayout layout;
    private final HostMemoryLayout hostLayout;
    private final int entries;
    private final boolean[] inUse;
    private final boolean[] abandoned;
    private final long[] sequences;
    private final DriverCommandEntry entry = new DriverCommandEntry();
    private final NicWakeUp wakeUp;
    private int tail;
    private long nextSequence = 1;

    DriverCommandQueueWriter(final AtomicBuffer sdram, final AtomicBuffer host, final NicSdramLayout layout,
        final HostMemoryLayout hostLayout, final NicWakeUp wakeUp)
    {
        this.wakeUp = wakeUp;
        this.sdram = sdram;
        this.host = host;
        this.layout = layout;
        this.hostLayout = hostLayout;
        this.entries = layout.parameters().driverCommandQueueEntries();
        this.inUse = new boolean[entries];
        this.abandoned = new boolean[entries];
        this.sequences = new long[entries];
    }

    /**
     * Posts a command, waiting up to {@code timeoutMs} for the tail position to become free.
     *
     * @return the ticket, or null if the queue stayed full.
     */
    synchronized Ticket post(final int command, final ProcessName name, final int pid, final int index,
        final int group, final int size, final long timeoutMs) throws InterruptedException
    {
        return post(command, name, pid, index, group, size, 0, timeoutMs);
    }

    /**
     * Posts a VIA command, which carries the Generation of its VI or CQ
     * ({@link org.qnix.abi.DriverCommandQueueLayout#GENERATION_OFFSET}).
     *
     * @return the ticket, or null if the queue stayed full.
     */
    synchronized Ticket post(final int command, final ProcessName name, final int pid, final int index,
        final int group, final int size, final int generation, final long timeoutMs) throws InterruptedException
    {
        final long deadline = HostClock.millis() + timeoutMs;
        while (!reclaim(tail))
        {
            if (HostClock.millis() > deadline)
            {
                return null;
            }
            wait(1);
        }
        final int position = tail;
        inUse[position] = true;
        abandoned[position] = false;
        final long sequence = nextSequence++;
        sequences[position] = sequence;
        // Readers: this driver's threads waiting for the command (doorbell, completed, reclaim); Used
        // before the entry, so that no earlier command's answer shows. The NIC only writes it.
        host.putIntRelease((int)hostLayout.driverDoorbellOffset(position), Doorbell.USED);
        entry(position).publish(command, name, pid, index, group, size, generation);
        tail = (tail + 1) % entries;
        // The thesis' Tail; nothing reads it here: the NIC polls each entry's Command word at its
        // own Head (DriverCommandReader), and the entry's release above publishes the command.
        host.putIntRelease((int)(hostLayout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_DCQ_TAIL_OFFSET), tail);
        // An idle NIC sleeps: the command just published wakes it.
        wakeUp.ring();
        return new Ticket(position, sequence);
    }

    /** @return the doorbell value of a posted command: USED until the NIC completes it. */
    int doorbell(final Ticket ticket)
    {
        // Writer: the NIC control program, with release semantics.
        return host.getIntVolatile((int)hostLayout.driverDoorbellOffset(ticket.position()));
    }

    /** Takes a completed result: the position can be reused. */
    synchronized void release(final Ticket ticket)
    {
        host.putIntRelease((int)hostLayout.driverDoorbellOffset(ticket.position()), Doorbell.FREE);
        inUse[ticket.position()] = false;
        abandoned[ticket.position()] = false;
        notifyAll();
    }

    /**
     * @return true once the NIC has completed the command, also after its waiter abandoned it and its
     * position was reclaimed (which needs the completion) and perhaps reused by a newer command.
     */
    synchronized boolean completed(final Ticket ticket)
    {
        final int position = ticket.position();
        return sequences[position] != ticket.sequence() || !inUse[position] || Doorbell.isComplete(doorbell(ticket));
    }

    /** The waiter gives up; the position is reclaimed once the NIC completes it anyway. */
    synchronized void abandon(final Ticket ticket)
    {
        abandoned[ticket.position()] = true;
    }

    private DriverCommandEntry entry(final int position)
    {
        return this.entry.wrap(sdram, (int)layout.driverCommandOffset(position));
    }

    private boolean reclaim(final int position)
    {
        if (DriverCommand.NONE != entry(position).command())
        {
            return false;
        }
        if (!inUse[position])
        {
            return true;
        }
        if (abandoned[position] &&
            Doorbell.isComplete(host.getIntVolatile((int)hostLayout.driverDoorbellOffset(position))))
        {
            inUse[position] = false;
            abandoned[position] = false;
            return true;
        }
        return false;
    }
}
