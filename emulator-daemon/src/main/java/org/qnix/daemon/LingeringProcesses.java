package org.qnix.daemon;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessStartTicks;

/**
 * Processes of one node whose driver connection ended in the middle of a request while they still
 * lived, after their registration was answered (thesis 3.4: the connection is the registration). That
 * is what a library's watchdog does to a driver that stopped answering (a daemon at a debugger
 * breakpoint, SIGSTOP, longer than the library's grace): it closes the connection under its call, and
 * the process, alive, may still map its VNI, Host Process Structures and buffers. Its de-registration
 * goes on (the NICs forget it), but its Process Table entry, its pages and its name are kept from the
 * next process until this one exits: given out meanwhile, they would let the process read and write
 * the next owner's data through the mappings it still holds. A process that de-registers, or whose
 * connection ends between requests, or that is gone, is released at once, as before.
 *
 * <pre>{@code
 * lingering.watch(index, osPid);              // its connection ended mid-request, the process alive
 * if (lingering.keeps(name, index, named)) { return; }   // instead of releasing now
 * lingering.exited().forEach(p -> release(p)); // from the driver's timer, and at each claim
 * }</pre>
 *
 * <p>Thread safe: guarded by this object's monitor, which is never held while calling out.
 */
final class LingeringProcesses
{
    /** A process kept: who it is (pid and start, so that a later process given its pid is not taken for it). */
    private record Watched(int osPid, long startTicks)
    {
        boolean isGone()
        {
            if (!Processes.isAlive(osPid))
            {
                return true;
            }
            // 0: its start was unknown when watched; the pid alone says it lives.
            return 0 != startTicks && ProcessStartTicks.of(osPid) != startTicks;
        }
    }

    /** What to release once the process is gone, as {@link ProcessRegistrar} releases a process. */
    record Kept(ProcessName name, int index, boolean named)
    {
    }

    /** Entries watched, by Process Table index, from the end of the connection to the release. */
    private final Map<Integer, Watched> watched = new HashMap<>();
    /** Watched entries whose de-registration is done but for their release: waiting for their process to exit. */
    private final Map<Integer, Kept> kept = new HashMap<>();

    /** Entry {@code index}'s process lost its connection mid-request, alive: its release waits for its exit. */
    synchronized void watch(final int index, final int osPid)
    {
        watched.put(index, new Watched(osPid, ProcessStartTicks.of(osPid)));
    }

    /**
     * The de-registration of entry {@code index} is done but for its release.
     *
     * @return true if it is kept here until its process exits; false if the caller releases it now.
     */
    synchronized boolean keeps(final ProcessName name, final int index, final boolean named)
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
        kept.put(index, new Kept(name, index, named));
        return true;
    }

    /** @return the kept entries whose process has exited, no longer kept: the caller releases each. */
    synchronized List<Kept> exited()
    {
        final List<Kept> gone = new ArrayList<>();
        for (final Kept one : kept.values().toArray(new Kept[0]))
        {
            if (watched.get(one.index()).isGone())
            {
                kept.remove(one.index());
                watched.remove(one.index());
                gone.add(one);
            }
        }
        return gone;
    }

    /** @return how many entries are kept now. */
    synchronized int size()
    {
        return kept.size();
    }
}
