package org.qnix.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The results of one latency run, every transport measured in the same run: a table with each p50 as
 * a multiple of the floor's and of the relay's (one busy agent in the middle) at the same size, machine-readable {@code BENCH} lines, JSON, and the
 * latency-versus-size chart.
 */
public final class LatencyReport implements BenchReport<LatencyResult>
{
    public static final String FLOOR = "floor";
    public static final String RELAY = "relay";

    private final List<LatencyResult> results = new ArrayList<>();
    private final RunSetup setup;

    /** @param setup how it was measured, printed above the table and kept in the JSON. */
    public LatencyReport(final RunSetup setup)
    {
        this.setup = setup;
    }

    public void add(final LatencyResult result)
    {
        results.add(result);
    }

    public List<LatencyResult> results()
    {
        return List.copyOf(results);
    }

    /** @return p50 over the floor's p50 at the same size, or NaN without a floor. */
    public double ratioToFloor(final LatencyResult result)
    {
        return ratioTo(FLOOR, result);
    }

    /** @return p50 over the relay baseline's p50 at the same size, or NaN without a relay. */
    public double ratioToRelay(final LatencyResult result)
    {
        return ratioTo(RELAY, result);
    }

    private double ratioTo(final String baseline, final LatencyResult result)
    {
        for (final LatencyResult r : results)
        {
            if (baseline.equals(r.api()) && r.size() == result.size())
            {
                return (double)result.p50() / Math.max(1, r.p50());
            }
        }
        return Double.NaN;
    }

    public void print(final PrintStream out)
    {
        out.println("== latency, one way (half the round trip), microseconds; " + setup.description());
        out.printf(Locale.ROOT, "   %-10s %9s %10s %21s %10s %10s %10s %12s %12s%n", "api", "bytes", "p50",
            "p50 of parts", "p99", "p99.9", "max", "p50 / floor", "p50 / relay");
        for (final LatencyResult r : results)
        {
            final double floor = ratioToFloor(r);
            final double relay = ratioToRelay(r);
            out.printf(Locale.ROOT, "   %-10s %9d %10.2f %21s %10.2f %10.2f %10.2f %12s %12s%n", r.api(), r.size(),
                r.p50() / 1e3, String.format(Locale.ROOT, "%.2f-%.2f", r.p50Low() / 1e3, r.p50High() / 1e3),
                r.p99() / 1e3, r.p999() / 1e3, r.max() / 1e3,
                Double.isNaN(floor) ? "" : String.format(Locale.ROOT, "%.1f", floor),
                Double.isNaN(relay) ? "" : String.format(Locale.ROOT, "%.2f", relay));
        }
        for (final LatencyResult r : results)
        {
            out.printf(Locale.ROOT, "BENCH kind=latency api=%s size=%d p50_us=%.3f p99_us=%.3f p999_us=%.3f " +
                "max_us=%.3f x_floor=%s x_relay=%s%n", r.api(), r.size(), r.p50() / 1e3, r.p99() / 1e3,
                r.p999() / 1e3, r.max() / 1e3, formatRatio(ratioToFloor(r), "%.2f"),
                formatRatio(ratioToRelay(r), "%.2f"));
        }
    }

    /** @return the ratio, or {@code na} when there is no floor to compare with. */
    static String formatRatio(final double ratio, final String format)
    {
        return Double.isNaN(ratio) ? "na" : String.format(Locale.ROOT, format, ratio);
    }

    public void writeJson(final Path file) throws IOException
    {
        final StringBuilder json = new StringBuilder();
        json.append(setup.jsonHead("latency", "ns, one way"));
        for (int i = 0; i < results.size(); i++)
        {
            final LatencyResult r = results.get(i);
            final double ratio = ratioToFloor(r);
            final double relay = ratioToRelay(r);
            json.append(String.format(Locale.ROOT, "    {\"api\": \"%s\", \"size\": %d, \"count\": %d, \"p50\": %d, " +
                "\"p99\": %d, \"p999\": %d, \"max\": %d, \"p50_low\": %d, \"p50_high\": %d, " +
                "\"p50_over_floor\": %s, \"p50_over_relay\": %s}%s%n", r.api(), r.size(), r.count(), r.p50(), r.p99(),
                r.p999(), r.max(), r.p50Low(), r.p50High(),
                Double.isNaN(ratio) ? "null" : String.format(Locale.ROOT, "%.3f", ratio),
                Double.isNaN(relay) ? "null" : String.format(Locale.ROOT, "%.3f", relay),
                i + 1 < results.size() ? "," : ""));
        }
        json.append("  ]\n}\n");
        Files.writeString(file, json, StandardCharsets.UTF_8);
    }

    /** The p50-versus-size chart, one line per transport, both axes logarithmic. */
    public void writeChart(final Path file) throws IOException
    {
        final Map<String, List<double[]>> series = new LinkedHashMap<>();
        for (final LatencyResult r : results)
        {
            series.computeIfAbsent(r.api(), k -> new ArrayList<>()).add(new double[] {r.size(), r.p50() / 1e3});
        }
        LogLogChart.write(file, "One-way latency (p50) versus message size, same run",
            "message size (bytes)", "one-way latency (us)", series);
    }
}
