package org.qnix.daemon;

import java.util.ArrayList;
import java.util.List;

import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.HostClock;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;

/**
 * The deletions of one node's driver (thesis 3.4, de-registration step 2): Delete_Process or
 * Delete_Via_Process posted and waited for, and what to do with a process whose NIC does not complete
 * it. Such a NIC may only be silent (a firmware JVM stopped at a debugger breakpoint, SIGSTOP, a long
 * GC) with the process still resident: it takes the command when it resumes and until then may ring
 * doorbells in the process's Host Process Structures. The process's entry, its pages and its name are
 * then held back, not released, until the NIC completes the command or stops ({@link #releaseCompleted}):
 * handing them to another process would let the resumed NIC write into that process's memory once the
 * pages' DMA epoch had passed, and refuse its New_Process.
 *
 * <pre>{@code
 * if (quarantine.deleteOrHold(DriverCommand.DELETE_PROCESS, name, osPid, index))
 * {
 *     deregisterLocally(registered); // the NIC is done with the process: its entry and pages go
 * }
 * ...
 * quarantine.releaseCompleted();     // at each claim of an entry, and from the driver's timer
 * }</pre>
 *
 * <p>Thread safe: the held processes are guarded by this object's monitor, which is taken before the
 * registrar's (the release of a held process frees its Process Flag Array slot under it), never after.
 */
final class DeletionQuarantine
{
    private static final long DELETE_TIMEOUT_MS = 10_000;

    /** Gives a process's pages, name and Process Table entry back, as its de-registration would have. */
    @FunctionalInterface
    interface Release
    {
        /**
         * @param named the process is a QNIX process, whose name the cluster registry holds.
         * @return true if the entry and pages were freed; false if they are kept longer ({@link LingeringProcesses}).
         */
        boolean release(ProcessName name, int index, boolean named);
    }

    private final NicCoordinates node;
    private final DriverCommandQueueWriter commandQueue;
    private final NicHeartbeats heartbeats;
    private final ControlProgramSegment control;
    private final Release release;
    /** Deleted processes whose silent NIC has not taken their deletion yet; guarded by this object's monitor. */
    private final List<Quarantined> held = new ArrayList<>();

    /**
     * A deleted process whose entry and pages are held back until its NIC completes {@code command}.
     *
     * @param ticket the posted command, or null while the Driver Command Queue had no room for it.
     */
    private record Quarantined(
        int command, ProcessName name, int osPid, int index, DriverCommandQueueWriter.Ticket ticket)
    {
        Quarantined posted(final DriverCommandQueueWriter.Ticket ticket)
        {
            return new Quarantined(command, name, osPid, index, ticket);
        }
    }

    DeletionQuarantine(final NicCoordinates node, final DriverCommandQueueWriter commandQueue,
        final NicHeartbeats heartbeats, final ControlProgramSegment control, final Release release)
    {
        this.node = node;
        this.commandQueue = commandQueue;
        this.heartbeats = heartbeats;
        this.control = control;
        this.release = release;
    }

    /**
     * Posts {@code command} for the process and waits for its NIC to complete it, or to be seen dead.
     *
     * @return true if the NIC completed it or has stopped: the caller releases the process's entry and
     * pages. False if they are held here until it does.
     */
    boolean deleteOrHold(final int command, final ProcessName name, final int osPid, final int index)
        throws InterruptedException
    {
        final Quarantined unfinished = postDeletion(command, name, osPid, index);
        if (null == unfinished)
        {
            return true;
        }
        hold(unfinished);
        return false;
    }

    /**
     * Posts a deletion command and waits for the NIC to complete it, or to be seen dead.
     *
     * @return null if the NIC completed the command or has stopped: nothing uses the process's entry and
     * pages any more. Otherwise what to hold back: the NIC still runs (silent, or slow) and may take the
     * command, and DMA for the process until then, whenever it resumes.
     */
    private Quarantined postDeletion(final int command, final ProcessName name, final int osPid, final int index)
        throws InterruptedException
    {
        final DriverCommandQueueWriter.Ticket ticket =
            commandQueue.post(command, name, osPid, index, 0, 0, DELETE_TIMEOUT_MS);
        if (null == ticket)
        {
            return unfinished(command, name, osPid, index, null, "the Driver Command Queue stayed full");
        }
        final long started = HostClock.millis();
        final long deadline = started + DELETE_TIMEOUT_MS;
        int doorbell;
        String dead = null;
        while (!Doorbell.isComplete(doorbell = commandQueue.doorbell(ticket)) && HostClock.millis() < deadline &&
            null == (dead = heartbeats.deadNic(node, HostClock.millis())))
        {
            // A dead NIC completes nothing: stop waiting once its heartbeat is old (issue 17, item 9).
            ProcessRegistrar.pause(started);
        }
        if (Doorbell.isComplete(doorbell))
        {
            commandQueue.release(ticket);
            return null;
        }
        // The command stays posted: whoever releases the entry later watches its doorbell.
        commandQueue.abandon(ticket);
        return unfinished(command, name, osPid, index, ticket,
            null != dead ? dead : "not done in " + DELETE_TIMEOUT_MS + " ms");
    }

    private Quarantined unfinished(final int command, final ProcessName name, final int osPid, final int index,
        final DriverCommandQueueWriter.Ticket ticket, final String why)
    {
        final String what = (null == ticket ? "could not post " : "NIC did not complete ") +
            DriverCommand.name(command) + " for " + name + " (" + why + ")";
        if (nicStopped())
        {
            System.err.println("driver " + node + ": " + what + "; its NIC has stopped (or its firmware process is " +
                "gone), so its Process Table entry " + index + " and its pages are released");
            return null;
        }
        System.err.println("driver " + node + ": " + what + "; its NIC still runs and may resume with it resident, so" +
            " its Process Table entry " + index + " and its pages stay held until the NIC " +
            (null == ticket ? "has room for the command and " : "") + "completes it, or stops");
        return new Quarantined(command, name, osPid, index, ticket);
    }

    private synchronized void hold(final Quarantined one)
    {
        held.add(one);
    }

    /**
     * Releases the entries and pages of deleted processes whose NIC has since completed their deletion
     * command, or stopped, and posts the deletions the Driver Command Queue had no room for. Called at each
     * claim of an entry and from the driver's timer.
     *
     * @return how many entries were released.
     */
    synchronized int releaseCompleted() throws InterruptedException
    {
        if (held.isEmpty())
        {
            return 0;
        }
        final boolean stopped = nicStopped();
        int released = 0;
        for (int i = held.size() - 1; i >= 0; i--)
        {
            Quarantined one = held.get(i);
            if (!stopped && null == one.ticket())
            {
                final DriverCommandQueueWriter.Ticket ticket =
                    commandQueue.post(one.command(), one.name(), one.osPid(), one.index(), 0, 0, 0);
                if (null != ticket)
                {
                    commandQueue.abandon(ticket);
                    one = one.posted(ticket);
                    held.set(i, one);
                }
            }
            if (stopped || (null != one.ticket() && commandQueue.completed(one.ticket())))
            {
                held.remove(i);
                if (release.release(one.name(), one.index(), DriverCommand.DELETE_PROCESS == one.command()))
                {
                    System.err.println("driver " + node + ": released Process Table entry " + one.index() + " of " +
                        one.name() + " and its pages: its NIC " +
                        (stopped ? "has stopped (or its firmware process is gone)" :
                            "completed " + DriverCommand.name(one.command())));
                    released++;
                }
            }
        }
        return released;
    }

    /** @return true if the NIC does no DMA any more (FirmwareProcess): stopped, or silent with its process gone. */
    private boolean nicStopped()
    {
        return FirmwareProcess.doesNoDma(control, HostClock.millis());
    }
}
