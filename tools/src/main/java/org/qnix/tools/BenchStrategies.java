package org.qnix.tools;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.qnix.bench.CoresBusy;
import org.qnix.bench.CpuSample;
import org.qnix.bench.FloorTransport;
import org.qnix.bench.LatencyResult;
import org.qnix.bench.LatencyRun;
import org.qnix.bench.LatencyTransport;
import org.qnix.bench.QnixTransport;
import org.qnix.bench.StrategyReport;
import org.qnix.bench.StrategyResult;
import org.qnix.host.DoorbellWait;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code qnix bench strategies}: what firmware placement, firmware idle strategy and the programs' way
 * of waiting on doorbells cost on this machine, in latency and in busy cores, beside the floor.
 */
@Command(name = "strategies", mixinStandardHelpOptions = true,
    description = {
        "What idle strategies and firmware placement cost here, in latency and busy cores.",
        "QNIX one-way latency (p50, p99, p99.9, max) for every combination of --firmware, --idle (the firmware's " +
            "idle strategy) and --wait (how the programs wait on doorbells), beside the floor measured in the same " +
            "run, and the cores the whole machine had busy while measuring and while the cluster sat idle. Brings up " +
            "one 2x1 cluster per firmware placement and idle strategy, and tears each down after. Takes about 4 " +
            "minutes with the defaults." })
final class BenchStrategies implements Callable<Integer>
{
    private static final long MIN_CPU_SAMPLE_NS = TimeUnit.SECONDS.toNanos(1);

    @Option(names = "--firmware", defaultValue = "shared,processes,threads", split = ",",
        description = "Firmware placements to measure (default: ${DEFAULT-VALUE}).")
    List<String> firmware;

    @Option(names = "--idle", defaultValue = "busy,yield,backoff", split = ",",
        description = "Firmware idle strategies to measure (default: ${DEFAULT-VALUE}).")
    List<String> idle;

    @Option(names = "--wait", defaultValue = "busy,yield,backoff,sleep", split = ",",
        converter = Bench.DoorbellWaitConverter.class,
        description = "Ways the programs wait on doorbells (default: ${DEFAULT-VALUE}).")
    List<DoorbellWait> waits;

    @Option(names = "--sizes", defaultValue = "64", description = "Message sizes in bytes (default: ${DEFAULT-VALUE}).")
    String sizes;

    @Option(names = "--iterations", defaultValue = "1000", description = "Measured round trips per size (default 1000).")
    int iterations;

    @Option(names = "--warmup", defaultValue = "200", description = "Round trips before measuring (default 200).")
    int warmup;

    @Option(names = "--warmup-ms", defaultValue = "500",
        description = "Warm up for at least this long too, after the --warmup round trips " +
            "(default ${DEFAULT-VALUE} ms).")
    long warmupMs;

    @Option(names = "--idle-seconds", defaultValue = "2",
        description = "How long the CPU of each idle cluster is sampled (default 2; 0 skips it).")
    int idleSeconds;

    @Option(names = "--name", defaultValue = "bench",
        description = "Name of the clusters of the run (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    Path json;

    public Integer call() throws Exception
    {
        if (iterations < 1 || warmup < 0 || warmupMs < 0 || idleSeconds < 0)
        {
            throw new IllegalArgumentException(
                "--iterations must be at least 1, --warmup, --warmup-ms and --idle-seconds at least 0");
        }
        for (final String placement : firmware)
        {
            idle.forEach(strategy -> BenchCluster.checkSettings(placement, strategy));
        }
        if (null != json)
        {
            Bench.checkOutputFile("--json", json);
        }
        final int[] sizeList = Bench.parseSizes(sizes, 0);
        final int maxSize = Arrays.stream(sizeList).max().orElse(0);
        final PrintStream out = System.out;

        final StrategyReport report = new StrategyReport(String.format(Locale.ROOT,
            "%d round trips after %d and %d ms of warm-up per size; idle cores sampled over %d s", iterations,
            warmup, warmupMs, idleSeconds));
        try (LatencyTransport floor = FloorTransport.start(maxSize))
        {
            out.println("== measuring " + floor.name());
            for (final int size : sizeList)
            {
                measure(report, floor, "-", "-", "busy", size, Double.NaN);
            }
        }
        for (final String placement : firmware)
        {
            for (final String strategy : idle)
            {
                try (BenchCluster run = new BenchCluster(null, name, placement, strategy, out))
                {
                    final double idleCores = idleCores();
                    for (final DoorbellWait wait : waits)
                    {
                        try (QnixTransport qnix = QnixTransport.start(run.name(), "0-0", run.peerNode(), wait, true,
                            maxSize))
                        {
                            out.println("== measuring " + qnix.name() + " on firmware " + run.describe());
                            for (final int size : sizeList)
                            {
                                measure(report, qnix, placement, strategy, wait.label(), size, idleCores);
                            }
                        }
                    }
                }
            }
        }
        report.print(out);
        if (null != json)
        {
            report.writeJson(json);
            out.println("== results written to " + json);
        }
        return QnixCommand.OK;
    }

    /**
     * Warms up, measures, then keeps the round trips going until the machine's CPU has been sampled for
     * {@link #MIN_CPU_SAMPLE_NS}: /proc/stat counts in 10 ms ticks, and a fast run is over in a few.
     */
    private void measure(final StrategyReport report, final LatencyTransport transport, final String placement,
        final String strategy, final String wait, final int size, final double idleCores)
    {
        LatencyRun.warmUp(transport, size, warmup, TimeUnit.MILLISECONDS.toNanos(warmupMs));
        final CpuSample before = CpuSample.now();
        final long start = System.nanoTime();
        final LatencyResult latency = LatencyRun.measure(transport, size, 0, 0, iterations);
        LatencyRun.warmUp(transport, size, 0, MIN_CPU_SAMPLE_NS - (System.nanoTime() - start));
        final double busyCores = CpuSample.now().busyCoresSince(before);
        report.add(new StrategyResult(placement, strategy, wait, latency, busyCores, idleCores));
    }

    /** @return the cores busy while the cluster is up and nothing runs on it, after it settled. */
    private double idleCores() throws InterruptedException
    {
        if (0 == idleSeconds)
        {
            return Double.NaN;
        }
        final CoresBusy idle = new CoresBusy();
        idle.sampleIdle(TimeUnit.SECONDS.toMillis(idleSeconds));
        return idle.of(CoresBusy.IDLE);
    }
}
