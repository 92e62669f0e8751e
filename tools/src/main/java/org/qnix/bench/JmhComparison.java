package org.qnix.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.qnix.host.DoorbellWait;

/**
 * JMH's results beside {@code qnix bench}'s for the same transport and size, each with the noise JMH
 * reports and the noise the bench reports; they match when the two noise intervals overlap. Latency:
 * JMH's median one-way time over all samples with the lowest and highest median of its iterations,
 * beside the bench's p50 with the lowest and highest median of the parts of its run (the fifths of each
 * pass). Bandwidth: JMH's payload bytes per second with its lowest and highest iteration, beside the
 * bench's median with its min and max over the streams of all passes. The noise covers what changes
 * from one pair of JVMs to the next only when each side measures several: JMH with several forks, the
 * bench with several passes.
 *
 * <p>QNIX results are only paired when JMH's firmware placement and idle strategy are the ones the bench
 * file records; the doorbell wait is part of the name ({@code qnix-busy}).
 *
 * <pre>{@code
 * BenchFigures bench = JmhComparison.read(List.of(Path.of("latency.json"), Path.of("bandwidth.json")));
 * Collection<RunResult> jmh = new Runner(options).run();
 * JmhComparison.of(jmh, bench).print(System.out);
 * }</pre>
 */
public final class JmhComparison
{
    private static final Pattern KIND = Pattern.compile("\"kind\": \"(\\w+)\"");
    private static final Pattern API = Pattern.compile("\"api\": \"([^\"]+)\"");
    private static final Pattern SIZE = Pattern.compile("\"size\": (\\d+)");

    /**
     * One comparison: JMH's figure and its noise interval, the bench's figure and its interval.
     *
     * @param unit us one way, or MB/s.
     */
    public record Row(String kind, String api, int size, String unit, double jmh, double jmhLow, double jmhHigh,
        double bench, double benchLow, double benchHigh)
    {
        public boolean matches()
        {
            return benchLow <= jmhHigh && jmhLow <= benchHigh;
        }
    }

    private final List<Row> rows;
    private final List<String> unmatched;

    private JmhComparison(final List<Row> rows, final List<String> unmatched)
    {
        this.rows = rows;
        this.unmatched = unmatched;
    }

    public List<Row> rows()
    {
        return List.copyOf(rows);
    }

    /**
     * The figures of {@code qnix bench latency|bandwidth --json} files, read before JMH runs so that a
     * wrong file is refused at once rather than after the run.
     */
    public static final class BenchFigures
    {
        private final Map<String, double[]> figures = new HashMap<>();
        /** Per kind: the firmware placement and idle strategy its QNIX results were measured with. */
        private final Map<String, String> qnixSettings = new HashMap<>();
    }

    /**
     * @param benchJson files written by {@code qnix bench latency|bandwidth --json}.
     * @throws IllegalArgumentException naming a file that is not one of those.
     */
    public static BenchFigures read(final List<Path> benchJson) throws IOException
    {
        final BenchFigures bench = new BenchFigures();
        for (final Path file : benchJson)
        {
            readBench(file, bench);
        }
        return bench;
    }

    public static JmhComparison of(final Collection<RunResult> jmh, final BenchFigures bench)
    {
        final List<Row> rows = new ArrayList<>();
        final List<String> unmatched = new ArrayList<>();
        for (final RunResult run : jmh)
        {
            final BenchmarkParams params = run.getParams();
            final String benchmark = params.getBenchmark();
            final String kind = benchmark.endsWith("LatencyBenchmark.oneWay") ? "latency" :
                benchmark.endsWith("BandwidthBenchmark.stream") ? "bandwidth" : null;
            if (null == kind)
            {
                continue;
            }
            final boolean qnix = params.getParam("api").startsWith("qnix");
            final String api = qnix ? QnixTransport.apiName(params.getParam("api"),
                DoorbellWait.parse(params.getParam("wait"))) : params.getParam("api");
            final int size = Integer.parseInt(params.getParam("size"));
            final double[] figures = bench.figures.get(key(kind, api, size));
            final String settings = settings(params.getParam("firmware"), params.getParam("idle"));
            if (null == figures)
            {
                unmatched.add(kind + " " + api + " " + size);
            }
            else if (qnix && !settings.equals(bench.qnixSettings.get(kind)))
            {
                unmatched.add(kind + " " + api + " " + size + " (JMH: " + settings + "; bench: " +
                    bench.qnixSettings.get(kind) + ")");
            }
            else
            {
                rows.add("latency".equals(kind) ? latencyRow(run, api, size, figures) :
                    bandwidthRow(run, api, size, figures));
            }
        }
        return new JmhComparison(rows, unmatched);
    }

    private static String settings(final String firmware, final String idle)
    {
        return "firmware " + firmware + ", idle " + idle;
    }

    /** The median over all samples, and the lowest and highest per-iteration median (us). */
    private static Row latencyRow(final RunResult run, final String api, final int size, final double[] bench)
    {
        double low = Double.MAX_VALUE;
        double high = 0;
        for (final BenchmarkResult fork : run.getBenchmarkResults())
        {
            for (final IterationResult iteration : fork.getIterationResults())
            {
                final double p50 = iteration.getPrimaryResult().getStatistics().getPercentile(50);
                low = Math.min(low, p50);
                high = Math.max(high, p50);
            }
        }
        final double p50 = run.getPrimaryResult().getStatistics().getPercentile(50);
        return new Row("latency", api, size, "us", p50, low, high, bench[0], bench[1], bench[2]);
    }

    /**
     * Payload MB/s over all iterations, with the lowest and highest iteration: the spread, as the bench's
     * min and max over its streams are. JMH's 99.9% error would narrow with every fork added, however
     * much the machine moves between them.
     */
    private static Row bandwidthRow(final RunResult run, final String api, final int size, final double[] bench)
    {
        double low = Double.MAX_VALUE;
        double high = 0;
        for (final BenchmarkResult fork : run.getBenchmarkResults())
        {
            for (final IterationResult iteration : fork.getIterationResults())
            {
                final double mbPerS = iteration.getSecondaryResults().get("bytes").getScore() / 1e6;
                low = Math.min(low, mbPerS);
                high = Math.max(high, mbPerS);
            }
        }
        final double score = run.getSecondaryResults().get("bytes").getScore() / 1e6;
        return new Row("bandwidth", api, size, "MB/s", score, Math.min(low, score), Math.max(high, score), bench[0],
            bench[1], bench[2]);
    }

    private static String key(final String kind, final String api, final int size)
    {
        return kind + " " + api + " " + size;
    }

    /** Reads our own JSON, one result per line: p50 and its noise in ns for latency, median, min and max for bandwidth. */
    private static void readBench(final Path file, final BenchFigures into) throws IOException
    {
        final String text;
        try
        {
            text = Files.readString(file);
        }
        catch (final java.nio.charset.CharacterCodingException ex)
        {
            throw new IllegalArgumentException("--compare " + file + ": not a file of qnix bench latency|bandwidth " +
                "--json (not UTF-8 text)", ex);
        }
        final Matcher kindMatcher = KIND.matcher(text);
        final String kind = kindMatcher.find() ? kindMatcher.group(1) : "none";
        if (!"latency".equals(kind) && !"bandwidth".equals(kind))
        {
            throw new IllegalArgumentException("--compare " + file + ": not a file of qnix bench latency|bandwidth " +
                "--json (kind " + kind + ")");
        }
        into.qnixSettings.put(kind, settings(text(text, "firmware"), text(text, "idle")));
        for (final String line : text.lines().toList())
        {
            final Matcher api = API.matcher(line);
            final Matcher size = SIZE.matcher(line);
            if (!api.find() || !size.find())
            {
                continue;
            }
            final String key = key(kind, api.group(1), Integer.parseInt(size.group(1)));
            if ("latency".equals(kind))
            {
                final double p50 = number(line, "p50", Double.NaN) / 1e3;
                into.figures.put(key, new double[] {p50, number(line, "p50_low", p50 * 1e3) / 1e3,
                    number(line, "p50_high", p50 * 1e3) / 1e3});
            }
            else
            {
                into.figures.put(key, new double[] {number(line, "median", Double.NaN), number(line, "min", Double.NaN),
                    number(line, "max", Double.NaN)});
            }
        }
    }

    private static String text(final String json, final String field)
    {
        final Matcher m = Pattern.compile("\"" + field + "\": \"([^\"]*)\"").matcher(json);
        return m.find() ? m.group(1) : "unknown";
    }

    /** @param absent the value when the field is missing, or NaN to refuse the line. */
    private static double number(final String line, final String field, final double absent)
    {
        final Matcher m = Pattern.compile("\"" + field + "\": ([0-9.eE+-]+)").matcher(line);
        if (!m.find())
        {
            if (Double.isNaN(absent))
            {
                throw new IllegalArgumentException("--compare: no " + field + " in " + line);
            }
            return absent;
        }
        return Double.parseDouble(m.group(1));
    }

    public void print(final PrintStream out)
    {
        out.println("== JMH beside qnix bench, each with its noise; they match when the noise intervals overlap. " +
            "Latency: median one way, us (JMH: over all samples, [lowest, highest] median of its iterations; " +
            "bench: p50, [lowest, highest] median of the parts of its run, the fifths of each pass). Bandwidth: " +
            "payload MB/s (JMH: score [lowest, highest] iteration; bench: median [min, max] of its streams)");
        out.printf(Locale.ROOT, "   %-9s %-14s %8s %10s %23s %10s %23s %6s%n", "kind", "api", "bytes", "JMH",
            "JMH noise", "bench", "bench noise", "match");
        for (final Row r : rows)
        {
            out.printf(Locale.ROOT, "   %-9s %-14s %8d %10.2f %23s %10.2f %23s %6s%n", r.kind(), r.api(), r.size(), r.jmh(),
                interval(r.jmhLow(), r.jmhHigh()), r.bench(), interval(r.benchLow(), r.benchHigh()),
                r.matches() ? "yes" : "no");
        }
        for (final Row r : rows)
        {
            out.printf(Locale.ROOT, "COMPARE kind=%s api=%s size=%d unit=%s jmh=%.3f jmh_low=%.3f jmh_high=%.3f " +
                "bench=%.3f bench_low=%.3f bench_high=%.3f match=%s%n", r.kind(), r.api(), r.size(), r.unit(), r.jmh(),
                r.jmhLow(), r.jmhHigh(), r.bench(), r.benchLow(), r.benchHigh(), r.matches() ? "yes" : "no");
        }
        final long matching = rows.stream().filter(Row::matches).count();
        out.printf(Locale.ROOT, "== %d of %d comparisons match within the noise%s%n", matching, rows.size(),
            unmatched.isEmpty() ? "" : "; not compared, no bench result with the same settings: " +
            String.join(", ", unmatched));
    }

    private static String interval(final double low, final double high)
    {
        return String.format(Locale.ROOT, "[%.2f, %.2f]", low, high);
    }
}
