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
 * The results of one bandwidth run, every transport measured in the same run: a table with each median
 * as a fraction of the floor's (a single-thread memory copy) at the same size, {@code BENCH} lines,
 * JSON, and the bandwidth-versus-size chart.
 */
public final class BandwidthReport implements BenchReport<BandwidthResult>
{
    private final List<BandwidthResult> results = new ArrayList<>();
    private final RunSetup setup;

    /** @param setup how it was measured, printed above the table and kept in the JSON. */
    public BandwidthReport(final RunSetup setup)
    {
        this.setup = setup;
    }

    public void add(final BandwidthResult result)
    {
        results.add(result);
    }

    public List<BandwidthResult> results()
    {
        return List.copyOf(results);
    }

    /** @return the median over the floor's median at the same size, or NaN without a floor. */
    public double ratioToFloor(final BandwidthResult result)
    {
        for (final BandwidthResult r : results)
        {
            if (LatencyReport.FLOOR.equals(r.api()) && r.size() == result.size())
            {
                return result.median() / Math.max(1e-9, r.median());
            }
        }
        return Double.NaN;
    }

    public void print(final PrintStream out)
    {
        out.println("== bandwidth, payload MB/s (10^6 bytes); " + setup.description());
        out.printf(Locale.ROOT, "   %-10s %9s %9s %7s %10s %10s %10s %12s%n", "api", "bytes", "messages", "window",
            "median", "min", "max", "of floor");
        for (final BandwidthResult r : results)
        {
            final double ratio = ratioToFloor(r);
            out.printf(Locale.ROOT, "   %-10s %9d %9d %7d %10.1f %10.1f %10.1f %12s%n", r.api(), r.size(), r.messages(),
                r.window(), r.median(), r.min(), r.max(), Double.isNaN(ratio) ? "" :
                String.format(Locale.ROOT, "%.3f", ratio));
        }
        for (final BandwidthResult r : results)
        {
            out.printf(Locale.ROOT, "BENCH kind=bandwidth api=%s size=%d window=%d median_MB_per_s=%.1f " +
                "min_MB_per_s=%.1f max_MB_per_s=%.1f of_floor=%s%n", r.api(), r.size(), r.window(), r.median(),
                r.min(), r.max(), LatencyReport.formatRatio(ratioToFloor(r), "%.4f"));
        }
    }

    public void writeJson(final Path file) throws IOException
    {
        final StringBuilder json = new StringBuilder();
        json.append(setup.jsonHead("bandwidth", "MB/s of payload, 10^6 bytes"));
        for (int i = 0; i < results.size(); i++)
        {
            final BandwidthResult r = results.get(i);
            final double ratio = ratioToFloor(r);
            json.append(String.format(Locale.ROOT, "    {\"api\": \"%s\", \"size\": %d, \"messages\": %d, " +
                "\"window\": %d, \"median\": %.3f, \"min\": %.3f, \"max\": %.3f, \"of_floor\": %s}%s%n", r.api(),
                r.size(), r.messages(), r.window(), r.median(), r.min(), r.max(), Double.isNaN(ratio) ? "null" :
                String.format(Locale.ROOT, "%.5f", ratio), i + 1 < results.size() ? "," : ""));
        }
        json.append("  ]\n}\n");
        Files.writeString(file, json, StandardCharsets.UTF_8);
    }

    public void writeChart(final Path file) throws IOException
    {
        final Map<String, List<double[]>> series = new LinkedHashMap<>();
        for (final BandwidthResult r : results)
        {
            series.computeIfAbsent(r.api(), k -> new ArrayList<>()).add(new double[] {r.size(), r.median()});
        }
        LogLogChart.write(file, "Bandwidth (median) versus message size, same run",
            "message size (bytes)", "payload MB/s", series);
    }
}
