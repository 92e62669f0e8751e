package org.qnix.daemon;

import java.util.HashMap;
import java.util.Map;

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
 * until it holds none; it leaves the count when its last one ends, and nobody moves then.
 *
 * <pre>{@code
 * NicCpuPlacement placement = new NicCpuPlacement(props.nicCpu(), hostCpus);
 * boolean onNicCpu = placement.place(node, index, pid, group, rank);   // before REGISTERED
 * placement.leave(node, index);                                        // at de-registration
 * }</pre>
 */
final class NicCpuPlacement
{
    /** The group of a VIA process: none, so every placed process counts. */
    static final int NO_GROUP = Integer.MIN_VALUE;
    /** The firmware's weight on the NICs' CPU, in processes. */
    static final int FIRMWARE_PARTIES = 2;

    private final boolean hasNicCpu;
    private final int hostCpus;
    /** Each placed process by pid. */
    private final Map<Long, Placed> byPid = new HashMap<>();
    /** Each registration (node, Process Table index) that holds a placement, and whose process it is. */
    private final Map<Long, Long> byRegistration = new HashMap<>();

    private static final class Placed
    {
        final int group;
        final boolean onNicCpu;
        int registrations;

        Placed(final int group, final boolean onNicCpu)
        {
            this.group = group;
            this.onNicCpu = onNicCpu;
        }
    }

    /**
     * @param nicCpu   the cluster's NIC CPU, or {@link NicProcessor#NONE}: then every process stays off it.
     * @param hostCpus the CPUs other than the NICs' that processes may run on (at least 1).
     */
    NicCpuPlacement(final int nicCpu, final int hostCpus)
    {
        this.hasNicCpu = NicProcessor.NONE != nicCpu;
        this.hostCpus = Math.max(1, hostCpus);
    }

    /** @return a placement with no NICs' CPU: every process stays off it (clusters of other placements). */
    static NicCpuPlacement none()
    {
        return new NicCpuPlacement(NicProcessor.NONE, 1);
    }

    /**
     * Places the process of a registration, once its registration is complete.
     *
     * @param group its application group, or {@link #NO_GROUP} for a VIA process.
     * @param rank  its PI in its application group, less than the group's size (0 for a VIA process).
     * @return true if it should run on the NICs' CPU, false if off it.
     */
    synchronized boolean place(final NicCoordinates node, final int index, final long osPid, final int group,
        final int rank)
    {
        byRegistration.put(key(node, index), osPid);
        Placed placed = byPid.get(osPid);
        if (null == placed)
        {
            placed = new Placed(group, hasNicCpu && onNicCpu(group, rank));
            byPid.put(osPid, placed);
        }
        placed.registrations++;
        return placed.onNicCpu;
    }

    /** The registration ended: its process leaves the count with its last one. Nothing if it was never placed. */
    synchronized void leave(final NicCoordinates node, final int index)
    {
        final Long osPid = byRegistration.remove(key(node, index));
        if (null == osPid)
        {
            return;
        }
        final Placed placed = byPid.get(osPid);
        if (null != placed && --placed.registrations <= 0)
        {
            byPid.remove(osPid);
        }
    }

    /** @return how many placed processes run on the NICs' CPU; for tests and logs. */
    synchronized int onNicCpuCount()
    {
        return (int)byPid.values().stream().filter(p -> p.onNicCpu).count();
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
            // Loads compared without division: (firmware + nic) against host / hostCpus.
            onNicCpu = (long)(FIRMWARE_PARTIES + nic) * hostCpus < host;
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

    private static long key(final NicCoordinates node, final int index)
    {
        return (long)node.packed() << Integer.SIZE | (index & 0xFFFF_FFFFL);
    }
}
