package org.qnix.abi;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

import com.sun.jna.Native;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * The NICs' own processor. On a QNIX node the control program runs on the NIC's processor, never on
 * a host CPU (seed 003 line 17: "a control program running on the NIC processor"). Here, in the
 * shared placement, the firmware JVM binds itself to one CPU (the cluster's {@code nicCpu}, chosen at
 * {@code cluster up}) and every process that registers with the cluster runs where its driver
 * advises for as long as it holds a registration: off that CPU, or (when the other CPUs hold more
 * parties than the NICs' CPU: on two CPUs rank 3 of a job, then every second rank; the daemon's
 * {@code NicCpuPlacement}) on it, beside the firmware, which yields whenever it has nothing to do;
 * when others leave, the driver may move it to the other side ({@link #moveProcess}).
 * On two cores keeping programs off it keeps the one agent in the middle of every conversation from
 * waiting for a time slice: measured with clusters with and without it side by side
 * (docs/PERFORMANCE.md, "The NICs' processor"), one-way p50 at 0, 64 and 4096 bytes within 6.7-7.2 us
 * in every part, against parts at 12-22 us without; bandwidth about the same.
 *
 * <p>Binding is best effort: it changes where threads run, not what they compute. Where the calls
 * are missing or refused (another OS, a cpuset that excludes the CPU) nothing moves, and
 * {@link #bindProcess} and {@link #place} say why in their result.
 *
 * <pre>{@code
 * // the firmware JVM, shared placement
 * NicProcessor.bindProcess(props.nicCpu());
 * // a program, at registration, as its driver advises; close() gives the process its CPUs back
 * try (NicProcessor.Placement placed = NicProcessor.place(props.nicCpu(), registration.onNicCpu(), "qnix")) { ... }
 * }</pre>
 */
public final class NicProcessor
{
    /** No CPU of its own: the NICs' control programs run wherever the scheduler puts them. */
    public static final int NONE = -1;
    /** Bytes of a {@code cpu_set_t} as glibc defines it: 1024 CPUs. */
    private static final int CPU_SET_BYTES = 128;
    private static final int MAX_CPUS = CPU_SET_BYTES * Byte.SIZE;
    private static final Path ONLINE_CPUS = Path.of("/sys/devices/system/cpu/online");
    private static final Path ISOLATED_CPUS = Path.of("/sys/devices/system/cpu/isolated");
    private static final Path THREADS = Path.of("/proc/self/task");
    private static final String ALLOWED_LIST = "Cpus_allowed_list:";
    private static final String UNAVAILABLE = CLibrary.link(NicProcessor.class, "CPU affinity");

    /** Registrations of this process that hold it where it was placed, and the CPUs it had before the first. */
    private static int holders;
    private static UnsafeBuffer maskBefore;

    private NicProcessor()
    {
    }

    private static native int sched_setaffinity(int tid, long setSize, long maskAddress);

    private static native int sched_getaffinity(int tid, long setSize, long maskAddress);

    /**
     * Resolves {@code cluster up --nic-cpu}.
     *
     * @param option   {@code auto} (the highest-numbered of the {@link #usableCpus} when there are two or
     *                 more and the placement is shared, else none), {@code none}, or a CPU number.
     * @param firmware the placement: only {@code shared} runs every control program on one thread.
     * @return the CPU, or {@link #NONE}.
     * @throws IllegalArgumentException for a CPU that is not usable, or a CPU with another placement.
     */
    public static int resolve(final String option, final String firmware)
    {
        return resolve(option, firmware, usableCpus());
    }

    /** {@link #resolve(String, String)} where the CPUs a cluster may use are {@code online}. */
    static int resolve(final String option, final String firmware, final SortedSet<Integer> online)
    {
        final int highest = online.last();
        final boolean shared = ClusterProperties.FIRMWARE_SHARED.equals(firmware);
        if ("auto".equals(option))
        {
            return shared && highest >= 1 ? highest : NONE;
        }
        if ("none".equals(option))
        {
            return NONE;
        }
        final int cpu;
        try
        {
            cpu = Integer.parseInt(option.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("--nic-cpu " + option + ": use auto, none or a CPU number", ex);
        }
        if (!shared)
        {
            throw new IllegalArgumentException("--nic-cpu " + option + ": only --firmware shared runs the NICs on " +
                "one thread that a CPU can be given to (this is --firmware " + firmware + ")");
        }
        if (!online.contains(cpu))
        {
            throw new IllegalArgumentException("--nic-cpu " + option + ": CPU " + cpu + " is not online, or not " +
                "in this process's cpuset (online and allowed: " + online + ")");
        }
        return cpu;
    }

    /**
     * The CPUs a cluster brought up from this thread may use: those online that its cpuset (a
     * container's {@code --cpuset-cpus}, a cgroup) lets it run on, less those isolated at boot
     * ({@code isolcpus}, which the scheduler leaves to whoever binds to them) unless that leaves none. An
     * affinity mask ({@code taskset}, or this process's own placement) does not narrow it: the firmware
     * binds itself past such a mask. Found by asking the kernel: a thread of its own asks for every CPU,
     * is granted those the cpuset allows, and puts its own mask back before it ends.
     *
     * @return the CPUs usable; every online CPU if that cannot be told.
     */
    public static SortedSet<Integer> usableCpus()
    {
        final SortedSet<Integer> online = onlineCpus();
        final SortedSet<Integer> usable = null == UNAVAILABLE ? cpusetCpus() : new TreeSet<>();
        usable.retainAll(online);
        if (usable.isEmpty())
        {
            usable.addAll(online);
        }
        final SortedSet<Integer> notIsolated = new TreeSet<>(usable);
        notIsolated.removeAll(isolatedCpus());
        return notIsolated.isEmpty() ? usable : notIsolated;
    }

    /** @return the CPUs this thread's cpuset allows, as the kernel grants them; empty if it cannot be told. */
    private static SortedSet<Integer> cpusetCpus()
    {
        final UnsafeBuffer every = newMask();
        every.setMemory(0, CPU_SET_BYTES, (byte)0xFF);
        final UnsafeBuffer own = newMask();
        final UnsafeBuffer granted = newMask();
        final boolean[] asked = new boolean[1];
        final Thread probe = new Thread(() ->
        {
            if (0 == sched_getaffinity(0, CPU_SET_BYTES, own.addressOffset()))
            {
                asked[0] = 0 == sched_setaffinity(0, CPU_SET_BYTES, every.addressOffset()) &&
                    0 == sched_getaffinity(0, CPU_SET_BYTES, granted.addressOffset());
                // Its task lingers in /proc a moment after join: with the mask it started with, nobody
                // reading a process's CPUs there (the daemon, a test) sees it wider.
                sched_setaffinity(0, CPU_SET_BYTES, own.addressOffset());
            }
        }, "qnix-cpuset-probe");
        probe.setDaemon(true);
        try
        {
            probe.start();
        }
        catch (final OutOfMemoryError ex)
        {
            // No thread to be had (a pids limit): then the cpuset is not known.
            return new TreeSet<>();
        }
        boolean interrupted = false;
        while (true)
        {
            try
            {
                probe.join();
                break;
            }
            catch (final InterruptedException ex)
            {
                interrupted = true;
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
        return asked[0] ? cpusOf(granted) : new TreeSet<>();
    }

    /** @return the CPUs isolated at boot ({@code /sys/devices/system/cpu/isolated}); empty if none or unknown. */
    private static SortedSet<Integer> isolatedCpus()
    {
        try
        {
            final String list = Files.readString(ISOLATED_CPUS).trim();
            return list.isEmpty() ? new TreeSet<>() : cpuList(list);
        }
        catch (final IOException | RuntimeException ex)
        {
            return new TreeSet<>();
        }
    }

    /** @return the highest CPU number online. */
    static int highestOnlineCpu()
    {
        return onlineCpus().last();
    }

    /**
     * @return the CPUs online, from {@code /sys/devices/system/cpu/online} (e.g. "0-1"); if it cannot be
     * read, 0 to the JVM's processor count less one.
     */
    static SortedSet<Integer> onlineCpus()
    {
        try
        {
            return cpuList(Files.readString(ONLINE_CPUS));
        }
        catch (final IOException | RuntimeException ex)
        {
            final SortedSet<Integer> cpus = new TreeSet<>();
            for (int cpu = 0; cpu < Runtime.getRuntime().availableProcessors(); cpu++)
            {
                cpus.add(cpu);
            }
            return cpus;
        }
    }

    /**
     * @param list a Linux CPU list, as {@code /sys} and {@code /proc} write them: {@code 0-3,8,10-11}.
     * @return its CPUs.
     * @throws NumberFormatException if it is not one.
     */
    public static SortedSet<Integer> cpuList(final String list)
    {
        final SortedSet<Integer> cpus = new TreeSet<>();
        for (final String range : list.trim().split(","))
        {
            final int dash = range.indexOf('-');
            final int from = Integer.parseInt((dash < 0 ? range : range.substring(0, dash)).trim());
            final int to = Integer.parseInt((dash < 0 ? range : range.substring(dash + 1)).trim());
            for (int cpu = from; cpu <= to; cpu++)
            {
                cpus.add(cpu);
            }
        }
        return cpus;
    }

    /** @return {@code cpus} as Linux writes a CPU list, ranges joined: {@code 0-3,8}; the inverse of {@link #cpuList}. */
    public static String cpuListText(final SortedSet<Integer> cpus)
    {
        final StringBuilder text = new StringBuilder();
        int from = -1;
        int to = -1;
        for (final int cpu : cpus)
        {
            if (cpu != to + 1 || from < 0)
            {
                appendRange(text, from, to);
                from = cpu;
            }
            to = cpu;
        }
        appendRange(text, from, to);
        return text.toString();
    }

    private static void appendRange(final StringBuilder text, final int from, final int to)
    {
        if (from < 0)
        {
            return;
        }
        text.append(text.length() > 0 ? "," : "").append(from);
        if (to > from)
        {
            text.append('-').append(to);
        }
    }

    /**
     * The CPUs a process may run on, as the kernel has them for its threads ({@code Cpus_allowed_list} of
     * {@code /proc/PID/task/TID/status}): whether a binding took, for {@code cluster status} and tests.
     *
     * <pre>{@code
     * boolean bound = NicProcessor.allowedCpus(firmwarePid).equals(new TreeSet<>(List.of(props.nicCpu())));
     * }</pre>
     *
     * @return the union over its threads; empty if the process is gone or {@code /proc} cannot be read.
     */
    public static SortedSet<Integer> allowedCpus(final long pid)
    {
        final SortedSet<Integer> cpus = new TreeSet<>();
        final List<Path> threads = new ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task")))
        {
            tasks.forEach(threads::add);
        }
        catch (final IOException | RuntimeException ex)
        {
            return cpus;
        }
        for (final Path thread : threads)
        {
            try
            {
                for (final String line : Files.readAllLines(thread.resolve("status")))
                {
                    if (line.startsWith(ALLOWED_LIST))
                    {
                        cpus.addAll(cpuList(line.substring(ALLOWED_LIST.length())));
                    }
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                // The thread ended since the listing.
            }
        }
        return cpus;
    }

    /**
     * Binds every thread of this process to {@code cpu}; threads started later inherit it.
     *
     * @return null if done (or {@code cpu} is {@link #NONE}), else why not.
     */
    public static String bindProcess(final int cpu)
    {
        if (NONE == cpu)
        {
            return null;
        }
        if (cpu < 0 || cpu >= MAX_CPUS)
        {
            return "CPU " + cpu + " is not one a cpu_set_t can name";
        }
        if (null != UNAVAILABLE)
        {
            return UNAVAILABLE;
        }
        return setEveryThread(THREADS, maskOf(Set.of(cpu), NONE));
    }

    /**
     * Moves every thread of another process onto {@code cpu} alone ({@code onCpu}) or onto
     * {@code allowed} less {@code cpu}: the driver placing a registered process again once others have
     * left (the daemon's {@code NicCpuPlacement}), after the process has placed itself. Threads the
     * process starts later inherit the move. The process's own {@link Placement} still gives it back the
     * CPUs it had when it closes. A move that fails part-way puts the threads it moved back.
     *
     * <pre>{@code
     * String failure = NicProcessor.moveProcess(pid, ProcessStartTicks.of(pid), props.nicCpu(), false, allowedBefore);
     * }</pre>
     *
     * @param pid        the process: never this one.
     * @param startTicks its start ({@link ProcessStartTicks}) when it was placed: a process that is not that
     *                   one any more (it exited, and perhaps the pid was reused) is left alone.
     * @param cpu        the cluster's NIC CPU.
     * @param onCpu      true to run on {@code cpu} alone, false to run on {@code allowed} but it.
     * @param allowed    the CPUs it could run on before it was placed, {@code cpu} and another among them.
     * @return null if done, else why not.
     */
    public static String moveProcess(final long pid, final long startTicks, final int cpu, final boolean onCpu,
        final SortedSet<Integer> allowed)
    {
        if (cpu < 0 || cpu >= MAX_CPUS)
        {
            return "CPU " + cpu + " is not one a cpu_set_t can name";
        }
        if (null != UNAVAILABLE)
        {
            return UNAVAILABLE;
        }
        if (ProcessHandle.current().pid() == pid)
        {
            return "it is the process that would move it";
        }
        final UnsafeBuffer nicCpuAlone = maskOf(Set.of(cpu), NONE);
        final UnsafeBuffer offNicCpu = maskOf(allowed, cpu);
        if (isEmpty(offNicCpu) || !allowed.contains(cpu))
        {
            return "process " + pid + " may run on one side of CPU " + cpu + " only (" + allowed + ")";
        }
        if (0 == startTicks || ProcessStartTicks.ofLiving(pid) != startTicks)
        {
            return "process " + pid + " has exited";
        }
        final Path tasks = Path.of("/proc", Long.toString(pid), "task");
        final String failure = setEveryThread(tasks, onCpu ? nicCpuAlone : offNicCpu);
        if (null != failure)
        {
            setEveryThread(tasks, onCpu ? offNicCpu : nicCpuAlone);
            return failure;
        }
        return ProcessStartTicks.ofLiving(pid) == startTicks ? null : "process " + pid + " has exited";
    }

    /**
     * Moves every thread of this process off {@code cpu}, keeping it on the others it may run on, until
     * the returned placement and every other one of this process are closed; then the process gets back
     * the CPUs it had. A process allowed on {@code cpu} alone stays there.
     *
     * @param cpu     the cluster's NIC CPU, or {@link #NONE} (nothing moves).
     * @param library who asks, for the one line on standard error that says why nothing moved, if so.
     * @return the placement, whose {@link Placement#failure()} says why nothing moved if it did not.
     */
    public static Placement avoid(final int cpu, final String library)
    {
        return place(cpu, false, library);
    }

    /**
     * Moves every thread of this process onto {@code cpu} alone ({@code onCpu}) or off it, as the driver
     * advises at registration (the daemon's {@code NicCpuPlacement}), until the returned placement and
     * every other one of this process are closed; then the process gets back the CPUs it had. The first
     * placement of a process holds while any is open: a later registration's advice does not move it
     * (the driver itself may, when other processes leave: {@link #moveProcess}). A process that may not
     * run on {@code cpu} stays off it; one allowed on {@code cpu} alone stays on it.
     *
     * <pre>{@code
     * try (NicProcessor.Placement placed = NicProcessor.place(props.nicCpu(), registration.onNicCpu(), "qnix"))
     * {
     *     ...
     * }
     * }</pre>
     *
     * @param cpu     the cluster's NIC CPU, or {@link #NONE} (nothing moves).
     * @param onCpu   true to run on {@code cpu} alone, false to run on every CPU allowed but it.
     * @param library who asks, for the one line on standard error that says why nothing moved, if so.
     * @return the placement, whose {@link Placement#failure()} says why nothing moved if it did not.
     */
    public static Placement place(final int cpu, final boolean onCpu, final String library)
    {
        final Placement placement = place(cpu, onCpu);
        if (null != placement.failure())
        {
            System.err.println(library + ": this process may still run " + (onCpu ? "off" : "on") + " CPU " + cpu +
                ", the NICs' CPU" + (onCpu ? ", where its driver placed it" : "") + ": " + placement.failure());
        }
        return placement;
    }

    private static synchronized Placement place(final int cpu, final boolean onCpu)
    {
        if (cpu < 0 || cpu >= MAX_CPUS)
        {
            return new Placement(false, NONE == cpu ? null : "CPU " + cpu + " is not one a cpu_set_t can name");
        }
        if (null != UNAVAILABLE)
        {
            return new Placement(false, UNAVAILABLE);
        }
        if (holders > 0)
        {
            holders++;
            return new Placement(true, null);
        }
        final UnsafeBuffer before = newMask();
        if (0 != sched_getaffinity(0, CPU_SET_BYTES, before.addressOffset()))
        {
            return new Placement(false, "sched_getaffinity: errno " + Native.getLastError());
        }
        final UnsafeBuffer target = onCpu ? maskOf(Set.of(cpu), NONE) : maskOf(cpusOf(before), cpu);
        if (onCpu ? !hasCpu(before, cpu) : isEmpty(target))
        {
            // Someone keeps this process off the CPU, or on it alone, on purpose (taskset, a cpuset): it
            // stays, and nothing needs saying.
            return new Placement(false, null);
        }
        final String failure = setEveryThread(THREADS, target);
        if (null != failure)
        {
            setEveryThread(THREADS, before);
            return new Placement(false, failure);
        }
        maskBefore = before;
        holders = 1;
        return new Placement(true, null);
    }

    private static synchronized void release()
    {
        if (0 == --holders)
        {
            setEveryThread(THREADS, maskBefore);
            maskBefore = null;
        }
    }

    /**
     * Threads can start while the list is read: a second pass takes those a thread of the first started.
     *
     * @param tasks a process's {@code /proc/PID/task}.
     */
    private static String setEveryThread(final Path tasks, final UnsafeBuffer mask)
    {
        String failure = null;
        for (int pass = 0; pass < 2 && null == failure; pass++)
        {
            try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks))
            {
                for (final Path thread : threads)
                {
                    final int tid = Integer.parseInt(thread.getFileName().toString());
                    // ESRCH: the thread ended since the listing; nothing to do for it.
                    if (0 != sched_setaffinity(tid, CPU_SET_BYTES, mask.addressOffset()) && 3 != Native.getLastError())
                    {
                        failure = "sched_setaffinity: errno " + Native.getLastError();
                        break;
                    }
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                failure = "cannot list the threads of " + tasks.getParent() + ": " + ex;
            }
        }
        return failure;
    }

    private static UnsafeBuffer newMask()
    {
        return new UnsafeBuffer(ByteBuffer.allocateDirect(CPU_SET_BYTES));
    }

    /** @return a mask of {@code cpus} less {@code except} ({@link #NONE}: none), CPUs a mask cannot name left out. */
    private static UnsafeBuffer maskOf(final Collection<Integer> cpus, final int except)
    {
        final UnsafeBuffer mask = newMask();
        for (final int cpu : cpus)
        {
            if (cpu >= 0 && cpu < MAX_CPUS && cpu != except)
            {
                mask.putByte(cpu / Byte.SIZE, (byte)(mask.getByte(cpu / Byte.SIZE) | 1 << (cpu % Byte.SIZE)));
            }
        }
        return mask;
    }

    private static boolean hasCpu(final UnsafeBuffer mask, final int cpu)
    {
        return 0 != (mask.getByte(cpu / Byte.SIZE) & 1 << (cpu % Byte.SIZE));
    }

    private static SortedSet<Integer> cpusOf(final UnsafeBuffer mask)
    {
        final SortedSet<Integer> cpus = new TreeSet<>();
        for (int cpu = 0; cpu < MAX_CPUS; cpu++)
        {
            if (hasCpu(mask, cpu))
            {
                cpus.add(cpu);
            }
        }
        return cpus;
    }

    private static boolean isEmpty(final UnsafeBuffer mask)
    {
        for (int i = 0; i < CPU_SET_BYTES; i++)
        {
            if (0 != mask.getByte(i))
            {
                return false;
            }
        }
        return true;
    }

    /** A registration's hold on the process's CPUs: closing the last one gives them back. */
    public static final class Placement implements AutoCloseable
    {
        private final boolean held;
        private final String failure;
        private boolean closed;

        private Placement(final boolean held, final String failure)
        {
            this.held = held;
            this.failure = failure;
        }

        /** @return true if this process now runs where it was placed (this placement or an earlier one). */
        public boolean held()
        {
            return held;
        }

        /** @return why the process could not move, or null. */
        public String failure()
        {
            return failure;
        }

        public void close()
        {
            synchronized (NicProcessor.class)
            {
                if (held && !closed)
                {
                    closed = true;
                    release();
                }
            }
        }
    }
}
