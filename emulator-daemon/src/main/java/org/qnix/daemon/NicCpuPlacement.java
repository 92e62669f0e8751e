package org.qnix.daemon;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicProcessor;

/**
 * Which registered processes run on the NICs' CPU (issue 13): the driver's advice, sent in the
 * REGISTERED and VIA_REGISTERED replies, which the libraries follow with {@link NicProcessor#place}.
 *
 * <p>On two cores every party of a conversation takes turns on a CPU, and an operation that needs all
 * of them at once (a barrier, two pairs exchanging at the same time) takes as long as the longest
 * chain of turns on one CPU. The firmware yields whenever it finds nothing to do, so a program can
 * share its CPU; but a program there costs itself and the firmware a switch per exchange: a pair with
 * one member beside the firmware and nobody else busy took 1.4-1.8 times as long one way. So the
 * firmware counts as {@link #FIRMWARE_PARTIES} parties, and each process goes where the load is
 * least: the host CPUs' load is the processes placed there per host CPU, the NICs' CPU's the firmware
 * plus the processes placed there; a tie stays on the host CPUs. On two CPUs: the first three
 * processes stay off the NICs' CPU, the fourth goes on it, then every second one. Measured with a job
 * of four (docs/performance/nic-cpu-placement.txt), each layout in turn: a barrier took 22-24 us p50
 * with one member on the NICs' CPU against 31-32 with none (its p99 rose 1.5-2 times), two pairs in
 * ping-pong at once 23-24 us one way against 34-36.
 *
 * <p>The members of an application group are placed by rank (their PI),
 * counting the processes of every other group and every VIA process as placed, so that the same job
 * places the same ranks whatever order its REGISTERED replies go out in: of a job alone on the
 * cluster, ranks 0, 1 and 2 never share the NICs' CPU with the firmware. A VIA process has no group:
 * it is placed when it registers. A process holding several registrations keeps its first placement
 * until it holds none; it leaves the count when its last one ends. Then the driver places the others
 * again ({@link #leave}): it moves as few processes as it takes for the rule's count on the NICs' CPU,
 * the latest placed group's highest rank first. It moves them itself ({@link ProcessCpus}), since a
 * program in a ping-pong loop asks its driver nothing, but only one that runs where it was advised
 * (so has placed itself, and is not closing); one that had not placed itself yet is moved by the
 * driver's next check ({@link #placeWaiting}, every second). A process that may run on one side only,
 * or whose CPUs cannot be read, is counted where it runs and never moved.
 *
 * <pre>{@code
 * NicCpuPlacement placement = new NicCpuPlacement(props.nicCpu(), hostCpus, ProcessCpus.OS);
 * boolean onNicCpu = placement.place(node, index, pid, startTicks, group, rank);   // before REGISTERED
 * List<String> moved = placement.leave(node, index);                               // at de-registration
 * moved = placement.placeWaiting(HostClock.millis());                              // every second
 * }</pre>
 */
final class NicCpuPlacement
{
    /** The group of a VIA process: none, so every placed process counts. */
    static final int NO_GROUP = Integer.MIN_VALUE;
    /** The firmware's weight on the NICs' CPU, in processes. */
    static final int FIRMWARE_PARTIES = 2;

    private final int nicCpu;
    private final int hostCpus;
    private final ProcessCpus cpus;
    /** Each placed process by pid. */
    private final Map<Long, Placed> byPid = new HashMap<>();
    /** Each registration (node, Process Table index) that holds a placement, and whose process it is. */
    private final Map<Long, Long> byRegistration = new HashMap<>();
    /** Placements made so far: each process's order, by which the latest placed group moves first. */
    private long placements;
    /** The last placement again left the rule's count unmet: a process to move had not placed itself yet. */
    private boolean waiting;
    /** Until when {@link #placeWaiting} tries again; 0 until its first try after a leave. */
    private long waitingUntilMs;

    /** How long the driver keeps trying a placement left waiting: a library places itself within ms of REGISTERED. */
    static final long WAIT_FOR_SELF_PLACEMENT_MS = 10_000;

    private static final class Placed
    {
        final long osPid;
        final long startTicks;
        final int group;
        final int rank;
        final long order;
        /** The CPUs it could run on when it was placed (empty: unknown), which a move off the NICs' CPU keeps. */
        final SortedSet<Integer> allowed;
        boolean onNicCpu;
        /** Kept where it is: it may run on one side only, where it may run is not known, or a move failed. */
        boolean fixed;
        int registrations;

        Placed(final long osPid, final long startTicks, final int group, final int rank, final long order,
            final SortedSet<Integer> allowed)
        {
            this.osPid = osPid;
            this.startTicks = startTicks;
            this.group = group;
            this.rank = rank;
            this.order = order;
            this.allowed = allowed;
        }

        /** @return the CPUs it runs on once it has followed the advice: the NICs' CPU alone, or the others. */
        SortedSet<Integer> placedCpus(final int nicCpu)
        {
            final SortedSet<Integer> cpus = new TreeSet<>(onNicCpu ? Set.of(nicCpu) : allowed);
            if (!onNicCpu)
            {
                cpus.remove(nicCpu);
            }
            return cpus;
        }
    }

    /**
     * @param nicCpu   the cluster's NIC CPU, or {@link NicProcessor#NONE}: then every process stays off it.
     * @param hostCpus the CPUs other than the NICs' that the cluster may use (NicProcessor.usableCpus; at least 1).
     * @param cpus     reads where a process may run and moves it: {@link ProcessCpus#OS}.
     */
    NicCpuPlacement(final int nicCpu, final int hostCpus, final ProcessCpus cpus)
    {
        this.nicCpu = nicCpu;
        this.hostCpus = Math.max(1, hostCpus);
        this.cpus = cpus;
    }

    /** @return a placement with no NICs' CPU: every process stays off it (clusters of other placements). */
    static NicCpuPlacement none()
    {
        return new NicCpuPlacement(NicProcessor.NONE, 1, ProcessCpus.OS);
    }

    /**
     * Places the process of a registration, once its registration is complete. A process that may run
     * off the NICs' CPU only ({@code taskset}, a cpuset), or on it only, is counted where it runs.
     *
     * @param startTicks its start ({@code ProcessStartTicks}) at registration: who the pid is, for a move.
     * @param group      its application group, or {@link #NO_GROUP} for a VIA process.
     * @param rank       its PI in its application group, less than the group's size (0 for a VIA process).
     * @return true if it should run on the NICs' CPU, false if off it.
     */
    synchronized boolean place(final NicCoordinates node, final int index, final long osPid, final long startTicks,
        final int group, final int rank)
    {
        byRegistration.put(key(node, index), osPid);
        Placed placed = byPid.get(osPid);
        if (null == placed)
        {
            final boolean hasNicCpu = NicProcessor.NONE != nicCpu;
            // Read before the REGISTERED reply, so before the process moves itself: the CPUs it had.
            final SortedSet<Integer> allowed = hasNicCpu ? cpus.allowed(osPid) : new TreeSet<>();
            placed = new Placed(osPid, startTicks, group, rank, placements++, allowed);
            if (!allowed.isEmpty() && !allowed.contains(nicCpu))
            {
                placed.fixed = true;
            }
            else if (allowed.size() == 1)
            {
                // It may run on the NICs' CPU (above), and on that one alone.
                placed.fixed = true;
                placed.onNicCpu = true;
            }
            else
            {
                placed.onNicCpu = hasNicCpu && onNicCpu(group, rank);
                // Where it may run is not known (no /proc, or it is gone): it is never moved.
                placed.fixed = allowed.isEmpty();
            }
            byPid.put(osPid, placed);
        }
        placed.registrations++;
        return placed.onNicCpu;
    }

    /**
     * The registration ended: its process leaves the count with its last one, and then the others are
     * placed again, moving as few as the load needs. Nothing if it was never placed. Every node's driver
     * waits for the moves (a few system calls each) before it places or lets go of a process.
     *
     * @return the processes moved, each with why not if it could not be; empty if none.
     */
    synchronized List<String> leave(final NicCoordinates node, final int index)
    {
        final Long osPid = byRegistration.remove(key(node, index));
        if (null == osPid)
        {
            return List.of();
        }
        final Placed placed = byPid.get(osPid);
        if (null == placed || --placed.registrations > 0)
        {
            return List.of();
        }
        byPid.remove(osPid);
        waitingUntilMs = 0;
        return placeAgain();
    }

    /**
     * Tries again a placement that the last leave left unfinished because a process it would have moved
     * had not placed itself yet (its REGISTERED reply was out), so that it does not wait for the next
     * leave. The driver calls it every second; it stops trying {@link #WAIT_FOR_SELF_PLACEMENT_MS} after
     * its first try: a process still not where it was advised by then has set its threads' CPUs itself.
     *
     * @param nowMs the driver's clock.
     * @return the processes moved, as {@link #leave}'s; empty if none or nothing is waiting.
     */
    synchronized List<String> placeWaiting(final long nowMs)
    {
        if (!waiting)
        {
            return List.of();
        }
        if (0 == waitingUntilMs)
        {
            waitingUntilMs = nowMs + WAIT_FOR_SELF_PLACEMENT_MS;
        }
        else if (nowMs > waitingUntilMs)
        {
            waiting = false;
            return List.of();
        }
        return placeAgain();
    }

    /** @return how many placed processes run on the NICs' CPU; for tests and logs. */
    synchronized int onNicCpuCount()
    {
        return (int)byPid.values().stream().filter(p -> p.onNicCpu).count();
    }

    /** @return whether the process runs on the NICs' CPU, null if it is not placed; for tests. */
    synchronized Boolean onNicCpu(final long osPid)
    {
        final Placed placed = byPid.get(osPid);
        return null == placed ? null : placed.onNicCpu;
    }

    /**
     * Moves processes until as many run on the NICs' CPU as the rule puts there for this many processes:
     * a pair whose other processes have gone does not keep one member beside the firmware (1.4-1.8 times
     * as long one way, docs/performance/nic-cpu-placement.txt).
     */
    private List<String> placeAgain()
    {
        waiting = false;
        if (NicProcessor.NONE == nicCpu)
        {
            return List.of();
        }
        int nic = 0;
        int host = 0;
        for (int i = 0; i < byPid.size(); i++)
        {
            if (goesOnNicCpu(host, nic))
            {
                nic++;
            }
            else
            {
                host++;
            }
        }
        final List<String> moves = new ArrayList<>();
        int onNicCpu = onNicCpuCount();
        if (onNicCpu == nic)
        {
            return moves;
        }
        final boolean toNicCpu = onNicCpu < nic;
        boolean skipped = false;
        for (final Placed candidate : candidates(toNicCpu))
        {
            if (onNicCpu == nic)
            {
                break;
            }
            if (!candidate.placedCpus(nicCpu).equals(cpus.allowed(candidate.osPid)))
            {
                // It has not placed itself yet (its library does so after REGISTERED, and would take a
                // move made before as the CPUs to give back at its close), or it is closing, or gone:
                // placeWaiting tries again, and a closing one's leave places the others again anyway.
                skipped = true;
                continue;
            }
            final String failure =
                cpus.move(candidate.osPid, candidate.startTicks, nicCpu, toNicCpu, candidate.allowed);
            moves.add("process " + candidate.osPid + (toNicCpu ? " onto" : " off") + " the NICs' CPU " + nicCpu +
                (null == failure ? "" : ": stays, " + failure));
            if (null == failure)
            {
                candidate.onNicCpu = toNicCpu;
                onNicCpu += toNicCpu ? 1 : -1;
            }
            else
            {
                candidate.fixed = true;
            }
        }
        waiting = skipped && onNicCpu != nic;
        return moves;
    }

    /**
     * @return the processes that may move to the other side, latest first: the group placed last (by its
     * first member, so that reply order within a group does not matter), and in it the highest rank.
     */
    private List<Placed> candidates(final boolean toNicCpu)
    {
        final Map<Integer, Long> groupOrder = new HashMap<>();
        for (final Placed placed : byPid.values())
        {
            if (NO_GROUP != placed.group)
            {
                groupOrder.merge(placed.group, placed.order, Math::min);
            }
        }
        final List<Placed> candidates = new ArrayList<>();
        for (final Placed placed : byPid.values())
        {
            if (!placed.fixed && placed.onNicCpu != toNicCpu)
            {
                candidates.add(placed);
            }
        }
        candidates.sort(Comparator.comparingLong(
            (Placed p) -> NO_GROUP == p.group ? p.order : groupOrder.get(p.group)).thenComparingInt(p -> p.rank)
            .reversed());
        return candidates;
    }

    /**
     * Fills ranks 0 to {@code rank} of the group in turn, each where the load is least, starting from the
     * processes of other groups.
     */
    private boolean onNicCpu(final int group, final int rank)
    {
        int host = 0;
        int nic = 0;
        for (final Placed other : byPid.values())
        {
            if (NO_GROUP == group || other.group != group)
            {
                if (other.onNicCpu)
                {
                    nic++;
                }
                else
                {
                    host++;
                }
            }
        }
        boolean onNicCpu = false;
        for (int r = 0; r <= rank; r++)
        {
            onNicCpu = goesOnNicCpu(host, nic);
            if (onNicCpu)
            {
                nic++;
            }
            else
            {
                host++;
            }
        }
        return onNicCpu;
    }

    /** @return whether the next process goes on the NICs' CPU: loads compared without division. */
    private boolean goesOnNicCpu(final int host, final int nic)
    {
        // (firmware + nic) against host / hostCpus; a tie stays off.
        return (long)(FIRMWARE_PARTIES + nic) * hostCpus < host;
    }

    private static long key(final NicCoordinates node, final int index)
    {
        return (long)node.packed() << Integer.SIZE | (index & 0xFFFF_FFFFL);
    }
}
