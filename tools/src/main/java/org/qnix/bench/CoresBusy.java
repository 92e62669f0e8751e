package org.qnix.bench;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The cores the whole machine kept busy during a bench run (issue 13, item 5: "report the cores busy
 * while idle and while measuring"): while each transport was measured (its warm-up and every size,
 * summed over the passes), and while the cluster was up with nothing running on it. From {@link
 * CpuSample}s, so it counts everyone: the cluster, the peers, this JVM, and anything else running.
 *
 * <pre>{@code
 * CoresBusy cores = new CoresBusy();
 * CpuSample before = CpuSample.now();
 * // ... measure qnix at every size ...
 * cores.add("qnix", before, CpuSample.now());
 * cores.print(System.out);
 * }</pre>
 */
public final class CoresBusy
{
    /** The label of the samples taken with the cluster up and idle. */
    public static final String IDLE = "idle cluster";
    /** How long an idle sample waits first: a cluster that just came up sends its NICs to sleep after 50 ms idle. */
    private static final long IDLE_SETTLE_MS = 500;

    private final Map<String, long[]> ticks = new LinkedHashMap<>();
    private int cpus;

    /** Adds the machine's busy and total time between two samples to {@code what}'s. */
    public void add(final String what, final CpuSample before, final CpuSample after)
    {
        // Listed even when too short for a tick of /proc/stat (10 ms) or unknown: it prints "na" then.
        final long[] sum = ticks.computeIfAbsent(what, k -> new long[2]);
        if (before.totalTicks() < 0 || after.totalTicks() <= before.totalTicks())
        {
            return;
        }
        sum[0] += after.busyTicks() - before.busyTicks();
        sum[1] += after.totalTicks() - before.totalTicks();
        cpus = after.cpus();
    }

    /**
     * Samples the machine while nothing is measured, as {@link #IDLE}: lets the cluster settle for half
     * a second first, then samples {@code sampleMs}.
     */
    public void sampleIdle(final long sampleMs) throws InterruptedException
    {
        TimeUnit.MILLISECONDS.sleep(IDLE_SETTLE_MS);
        final CpuSample before = CpuSample.now();
        TimeUnit.MILLISECONDS.sleep(sampleMs);
        add(IDLE, before, CpuSample.now());
    }

    /** @return the cores busy on average over {@code what}'s samples, or NaN without any that spans a tick. */
    public double of(final String what)
    {
        final long[] sum = ticks.get(what);
        return null == sum || 0 == sum[1] ? Double.NaN : (double)sum[0] / sum[1] * cpus;
    }

    /** A line per label, then a {@code BENCH kind=cores} line per label ({@code na}: too short to sample). */
    public void print(final PrintStream out)
    {
        if (ticks.isEmpty())
        {
            return;
        }
        out.printf(Locale.ROOT, "== cores busy, whole machine (/proc/stat, %d cores): while measuring each, " +
            "and with the cluster up and idle%n", cpus);
        ticks.keySet().forEach(what -> out.printf(Locale.ROOT, "   %-14s %6s%n", what, format(of(what))));
        ticks.keySet().forEach(what -> out.printf(Locale.ROOT, "BENCH kind=cores what=%s busy_cores=%s%n",
            what.replace(' ', '-'), format(of(what))));
    }

    /** @return the figure with three decimals, or {@code na} for a measurement too short to sample. */
    private static String format(final double cores)
    {
        return Double.isNaN(cores) ? "na" : String.format(Locale.ROOT, "%.3f", cores);
    }
}
