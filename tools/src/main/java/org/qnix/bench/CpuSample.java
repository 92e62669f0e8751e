package org.qnix.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The whole machine's CPU time so far, from the first line of {@code /proc/stat}: two samples tell how
 * many cores were busy between them, whoever used them (cluster, peers, this JVM, anything else).
 *
 * <pre>{@code
 * CpuSample before = CpuSample.now();
 * // ... measure ...
 * double cores = CpuSample.now().busyCoresSince(before);   // 0 to the number of cores; NaN if unknown
 * }</pre>
 */
public record CpuSample(long busyTicks, long totalTicks, int cpus)
{
    private static final Path PROC_STAT = Path.of("/proc/stat");
    private static final CpuSample UNKNOWN = new CpuSample(-1, -1, 0);

    /** @return the sample, or one that makes every difference NaN where there is no /proc/stat. */
    public static CpuSample now()
    {
        try
        {
            final List<String> lines = Files.readAllLines(PROC_STAT);
            final String first = lines.get(0);
            // The host's CPUs, not the ones this JVM may use: the first line sums them all.
            final int cpus = (int)lines.stream().filter(l -> l.startsWith("cpu") && !l.startsWith("cpu ")).count();
            // cpu user nice system idle iowait irq softirq steal [guest guest_nice, already in user and nice]
            final String[] f = first.trim().split("\\s+");
            if (!"cpu".equals(f[0]) || f.length < 9 || cpus < 1)
            {
                return UNKNOWN;
            }
            long total = 0;
            for (int i = 1; i <= 8; i++)
            {
                total += Long.parseLong(f[i]);
            }
            final long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new CpuSample(total - idle, total, cpus);
        }
        catch (final IOException | RuntimeException ex)
        {
            return UNKNOWN;
        }
    }

    /** @return the cores busy on average since {@code earlier}, or NaN if either sample is unknown. */
    public double busyCoresSince(final CpuSample earlier)
    {
        final long total = totalTicks - earlier.totalTicks;
        if (totalTicks < 0 || earlier.totalTicks < 0 || total <= 0)
        {
            return Double.NaN;
        }
        return (double)(busyTicks - earlier.busyTicks) / total * cpus;
    }
}
