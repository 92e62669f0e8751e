package org.qnix.daemon;

import java.util.SortedSet;

import org.qnix.abi.NicProcessor;

/**
 * The operating system's side of {@link NicCpuPlacement}: which CPUs a registered process may run on,
 * and moving it onto the NICs' CPU or off it when the driver places it again.
 *
 * <pre>{@code
 * SortedSet<Integer> allowed = ProcessCpus.OS.allowed(pid);
 * String failure = ProcessCpus.OS.move(pid, startTicks, nicCpu, false, allowed);
 * }</pre>
 */
interface ProcessCpus
{
    /**
     * The kernel's: {@code /proc/PID/task/TID/status} and {@code sched_setaffinity} (never on the daemon
     * itself, which a test may register from: {@link NicProcessor#moveProcess}).
     */
    ProcessCpus OS = new ProcessCpus()
    {
        public SortedSet<Integer> allowed(final long pid)
        {
            return NicProcessor.allowedCpus(pid);
        }

        public String move(final long pid, final long startTicks, final int nicCpu, final boolean onNicCpu,
            final SortedSet<Integer> allowed)
        {
            return NicProcessor.moveProcess(pid, startTicks, nicCpu, onNicCpu, allowed);
        }
    };

    /** @return the CPUs the process's threads may run on now (their union); empty if it cannot be told. */
    SortedSet<Integer> allowed(long pid);

    /**
     * Moves every thread of the process onto the NICs' CPU alone, or onto {@code allowed} less it.
     *
     * @param startTicks the process's start when it registered: a process that exited, or another that
     *                   reused the pid, stays.
     * @return null if done, else why not.
     */
    String move(long pid, long startTicks, int nicCpu, boolean onNicCpu, SortedSet<Integer> allowed);
}
