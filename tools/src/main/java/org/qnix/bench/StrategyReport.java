package org.qnix.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What each firmware placement, firmware idle strategy and way of waiting on doorbells costs: one-way
 * latency percentiles beside the floor's from the same run, and the cores the machine had busy while
 * measuring and while the cluster sat idle. A table with {@code BENCH kind=strategy} lines, and JSON.
 */
public final class StrategyReport
{
    private final List<StrategyResult> results = new ArrayList<>();
    private final String setup;

    /** @param setup how it was measured, printed above the table and kept in the JSON. */
    public StrategyReport(final String setup)
    {
        this.setup = setup;
    }

    public void add(final StrategyResult result)
    {
        results.add(result);
    }

    public List<StrategyResult> results()
    {
        return List.copyOf(results);
    }

    /** @return p50 over the floor's p50 at the same size, or NaN without a floor. */
    public double ratioToFloor(final StrategyResult result)
    {
        for (final StrategyResult r : results)
        {
            if (LatencyReport.FLOOR.equals(r.latency().api()) && r.latency().size() == result.latency().size())
            {
                return (double)result.latency().p50() / Math.max(1, r.latency().p50());
            }
        }
        return Double.NaN;
    }

    public void print(final PrintStream out)
    {
        out.println("== idle strategies and placement: one-way latency, microseconds; busy cores of " +
            CpuSample.now().cpus() + " (whole machine); " + setup);
        out.printf(Locale.ROOT, "   %-10s %-8s %-8s %8s %10s %10s %10s %10s %9s %10s %10s%n", "firmware", "fw idle",
            "wait", "bytes", "p50", "p99", "p99.9", "max", "p50/floor", "cores run", "cores idle");
        for (final StrategyResult r : results)
        {
            final LatencyResult l = r.latency();
            out.printf(Locale.ROOT, "   %-10s %-8s %-8s %8d %10.2f %10.2f %10.2f %10.2f %9s %10s %10s%n", r.firmware(),
                r.idle(), r.doorbellWait(), l.size(), l.p50() / 1e3, l.p99() / 1e3, l.p999() / 1e3, l.max() / 1e3,
                LatencyReport.formatRatio(ratioToFloor(r), "%.0f"), cores(r.busyCores()), cores(r.idleCores()));
        }
        for (final StrategyResult r : results)
        {
            final LatencyResult l = r.latency();
            out.printf(Locale.ROOT, "BENCH kind=strategy api=%s firmware=%s fw_idle=%s wait=%s size=%d p50_us=%.3f " +
                "p99_us=%.3f p999_us=%.3f max_us=%.3f x_floor=%s busy_cores=%s idle_cores=%s%n", l.api(), r.firmware(),
                r.idle(), r.doorbellWait(), l.size(), l.p50() / 1e3, l.p99() / 1e3, l.p999() / 1e3, l.max() / 1e3,
                LatencyReport.formatRatio(ratioToFloor(r), "%.2f"), cores(r.busyCores()).trim(),
                cores(r.idleCores()).trim());
        }
    }

    private static String cores(final double cores)
    {
        return Double.isNaN(cores) ? "na" : String.format(Locale.ROOT, "%.2f", cores);
    }

    public void writeJson(final Path file) throws IOException
    {
        final StringBuilder json = new StringBuilder();
        json.append("{\n  \"kind\": \"strategy\",\n  \"unit\": \"ns, one way; cores\",\n  \"setup\": \"")
            .append(setup.replace("\\", "\\\\").replace("\"", "\\\"")).append("\",\n  \"results\": [\n");
        for (int i = 0; i < results.size(); i++)
        {
            final StrategyResult r = results.get(i);
            final LatencyResult l = r.latency();
            json.append(String.format(Locale.ROOT, "    {\"api\": \"%s\", \"firmware\": \"%s\", \"fw_idle\": \"%s\", " +
                "\"wait\": \"%s\", \"size\": %d, \"count\": %d, \"p50\": %d, \"p99\": %d, \"p999\": %d, \"max\": %d, " +
                "\"p50_low\": %d, \"p50_high\": %d, \"p50_over_floor\": %s, \"busy_cores\": %s, \"idle_cores\": %s}%s%n",
                l.api(), r.firmware(), r.idle(), r.doorbellWait(), l.size(), l.count(), l.p50(), l.p99(), l.p999(), l.max(),
                l.p50Low(), l.p50High(), jsonNumber(ratioToFloor(r)), jsonNumber(r.busyCores()),
                jsonNumber(r.idleCores()), i + 1 < results.size() ? "," : ""));
        }
        json.append("  ]\n}\n");
        Files.writeString(file, json, StandardCharsets.UTF_8);
    }

    private static String jsonNumber(final double value)
    {
        return Double.isNaN(value) ? "null" : String.format(Locale.ROOT, "%.3f", value);
    }
}
