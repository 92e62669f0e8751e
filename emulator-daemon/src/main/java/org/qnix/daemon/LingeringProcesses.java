package org.qnix.daemon;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.qnix.abi.ProcessStartTicks;

/**
 * Processes of one node whose driver connection failed in the middle of a request while they still
 * lived, after their registration was answered (thesis 3.4: the connection is the registration). That
 * is what a library's watchdog does to a driver that stopped answering (a daemon at a debugger
 * breakpoint, SIGSTOP, longer than the library's grace): it closes the connection under its call, and
 * the process, alive, may still map its VNI, Host Process Structures and buffers. Any other failure
 * inside a request (a request cut short, a driver error) is taken the same way: keeping is the safe
 * side. The process's de-registration goes on (the NICs forget it, its name is free again), but its
 * Process Table entry and its pages are kept from the next process until this one exits: given out
 * meanwhile, they would let the process read and write the next owner's data through the mappings it
 * still holds. A process that de-registers, whose connection ends between requests, or that is gone,
 * is released at once, as before.
 *
 * <pre>{@code
 * lingering.watch(index, osPid, startTicks);       // its connection failed mid-request
 * if (lingering.keeps(index)) { return; }          // instead of freeing the entry and pages now
 * for (int index : lingering.exited()) { free(index); }   // from the driver's timer, and at each claim
 * }</pre>
 *
 * <p>Thread safe: guarded by this object's monitor, under which it reads {@code /proc} but takes no
 * other monitor.
 */
final class LingeringProcesses
{
    /** A process: its pid and its start, so that a later process given its pid is not taken for it. */
    private record Watched(int osPid, long startTicks)
    {
        boolean isGone()
        {
            return ProcessStartTicks.hasExited(osPid, startTicks);
        }
    }

    /** Entries watched, by Process Table index, from the failed connection's close to their release. */
    private final Map<Integer, Watched> watched = new HashMap<>();
    /** Of those, the entries whose de-registration is done but for freeing: waiting for their process to exit. */
    private final Map<Integer, Watched> kept = new HashMap<>();

    /**
     * Entry {@code index}'s connection failed mid-request: its release waits for its process's exit.
     *
     * @param startTicks the process's start ({@link ProcessStartTicks}) at registration; 0 if unknown, and
     *                   then nothing is watched: a process that cannot be told from a later one with its pid
     *                   could be kept for ever.
     */
    synchronized void watch(final int index, final int osPid, final long startTicks)
    {
        if (0 != startTicks)
        {
            watched.put(index, new Watched(osPid, startTicks));
        }
    }

    /**
     * The de-registration of entry {@code index} is done but for freeing its entry and pages.
     *
     * @return true if they are kept here until its process exits; false if the caller frees them now.
     */
    synchronized boolean keeps(final int index)
    {
        final Watched process = watched.get(index);
        if (null == process)
        {
            return false;
        }
        if (process.isGone())
        {
            watched.remove(index);
            return false;
        }
        kept.put(index, process);
        return true;
    }

    /** @return the kept entries whose process has exited, no longer kept: the caller frees each. */
    synchronized List<Integer> exited()
    {
        final List<Integer> gone = new ArrayList<>();
        for (final Integer index : new ArrayList<>(kept.keySet()))
        {
            if (kept.get(index).isGone())
            {
                kept.remove(index);
                watched.remove(index);
                gone.add(index);
            }
        }
        return gone;
    }
}
