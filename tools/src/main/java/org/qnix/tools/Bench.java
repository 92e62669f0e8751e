package org.qnix.tools;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.IntFunction;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.NoBenchmarksException;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.JvmFlags;
import org.qnix.bench.AeronIpcTransport;
import org.qnix.bench.AeronStreamTransport;
import org.qnix.bench.BandwidthReport;
import org.qnix.bench.BandwidthRun;
import org.qnix.bench.BandwidthSamples;
import org.qnix.bench.BandwidthTransport;
import org.qnix.bench.BenchReport;
import org.qnix.bench.CoresBusy;
import org.qnix.bench.CpuSample;
import org.qnix.bench.FloorTransport;
import org.qnix.bench.JmhComparison;
import org.qnix.bench.LatencyReport;
import org.qnix.bench.LatencyRun;
import org.qnix.bench.LatencySamples;
import org.qnix.bench.LatencyTransport;
import org.qnix.bench.LogLogChart;
import org.qnix.bench.MemoryCopyTransport;
import org.qnix.bench.PciCommStreamTransport;
import org.qnix.bench.PciCommTransport;
import org.qnix.bench.QnixStreamTransport;
import org.qnix.bench.QnixTransport;
import org.qnix.bench.RelayTransport;
import org.qnix.bench.RunSetup;
import org.qnix.bench.TcpStreamTransport;
import org.qnix.bench.TcpTransport;
import org.qnix.bench.Transport;
import org.qnix.bench.ViplStreamTransport;
import org.qnix.bench.ViplTransport;
import org.qnix.host.DoorbellWait;

import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code qnix bench}: quick measurements, QNIX beside the baselines measured in the same run
 * (DESIGN.md 7).
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = {
        "Measure QNIX, the VIPL and PCIComm beside the baselines a Java user has, in the same run.",
        "The baselines: the floor (two JVMs ping-ponging through one shared mapping; a memory copy for " +
            "bandwidth), the relay (for latency: three JVMs, A -> a busy relay -> B and back, the least one agent in " +
            "the middle costs), TCP over loopback and Aeron IPC." },
    subcommands = { Bench.Latency.class, Bench.Bandwidth.class, BenchStrategies.class, Bench.Jmh.class })
final class Bench implements Runnable
{
    @picocli.CommandLine.Spec
    private picocli.CommandLine.Model.CommandSpec spec;

    public void run()
    {
        spec.commandLine().usage(System.out);
    }

    private static void atLeastOne(final String option, final long value)
    {
        if (value < 1)
        {
            throw new IllegalArgumentException(option + " " + value + ": at least 1");
        }
    }

    /** What {@code --api} takes: every interface for latency, the streaming ones for bandwidth. */
    static final List<String> LATENCY_APIS = List.of("qnix", "qnix-send", "vipl", "vipl-rdma", "pcicomm");
    static final List<String> BANDWIDTH_APIS = List.of("qnix", "vipl", "pcicomm");

    /** The options latency and bandwidth share: what to measure, where, and where to write it. */
    static final class Common
    {
        @Option(names = "--baselines",
            description = "Also measure the floor, the relay (latency), TCP and Aeron IPC in the same run.")
        boolean baselines;

        @Option(names = "--wait", defaultValue = "sleep", converter = DoorbellWaitConverter.class,
            description = "How QNIX programs wait for a doorbell: busy (spin), yield, backoff (spin, yield, park) " +
                "or sleep (spin, then futex; default).")
        DoorbellWait wait;

        @Option(names = "--cluster", description = "Use this running cluster (2 nodes at least).")
        String cluster;

        @Option(names = "--name", defaultValue = "bench",
            description = "Name of the cluster of the run, when there is no --cluster (default: ${DEFAULT-VALUE}).")
        String name;

        @Option(names = "--firmware", defaultValue = "shared",
            description = "For the cluster of the run (not with --cluster): shared (default), processes or threads.")
        String firmware;

        @Option(names = "--idle", defaultValue = "backoff",
            description = "For the cluster of the run (not with --cluster): firmware idle strategy backoff " +
                "(default), yield or busy.")
        String idle;

        @Option(names = "--warmup-ms", defaultValue = "2000",
            description = "Warm up each size for at least this long (default ${DEFAULT-VALUE} ms): TCP, for one, " +
                "reaches its steady state after half a second to a second.")
        long warmupMs;

        @Option(names = "--passes", defaultValue = "1",
            description = "Measure everything this many times (default ${DEFAULT-VALUE}), each pass with new JVMs " +
                "and, without --cluster, a new cluster; the report merges the passes. The noise then covers " +
                "what changes from one pair of JVMs to the next and over minutes, as JMH's forks do.")
        int passes;

        @Option(names = "--json", description = "Also write the results as JSON to this file.")
        Path json;

        @Option(names = "--chart",
            description = "Also draw the results versus size in this file: a PNG image (.png) or SVG (.svg).")
        Path chart;

        /** @param api the --api of the command, @param known what the command measures. */
        void check(final List<String> api, final List<String> known)
        {
            if (warmupMs < 0)
            {
                throw new IllegalArgumentException("--warmup-ms must be at least 0");
            }
            if (passes < 1)
            {
                throw new IllegalArgumentException("--passes must be at least 1");
            }
            if (null != json)
            {
                checkOutputFile("--json", json);
            }
            if (null != chart)
            {
                LogLogChart.checkFileName(chart);
                checkOutputFile("--chart", chart);
            }
            // Refused now rather than after the baselines, which run before the cluster is up.
            if (null == cluster)
            {
                BenchCluster.checkSettings(firmware, idle);
            }
            else
            {
                BenchCluster.checkExisting(cluster);
            }
            for (final String one : api)
            {
                if (!known.contains(one))
                {
                    throw new IllegalArgumentException("--api " + one + ": use " + String.join(", ", known) +
                        (LATENCY_APIS.contains(one) ? " (" + one + " is measured for latency only)" : ""));
                }
            }
            if (api.size() != new HashSet<>(api).size())
            {
                throw new IllegalArgumentException("--api " + String.join(",", api) + ": each at most once");
            }
        }

        BenchCluster cluster(final PrintStream out) throws InterruptedException
        {
            return new BenchCluster(cluster, name, firmware, idle, out);
        }

        /** @param how how the run measured, the start of the sentence above its table. */
        RunSetup setup(final BenchCluster run, final String how)
        {
            return new RunSetup(run.firmware(), run.idle(), String.format(Locale.ROOT,
                "%s%s; QNIX: firmware %s, programs %s on doorbells", how,
                passes > 1 ? ", in each of " + passes + " passes with new JVMs" : "", run.describe(), wait.label()));
        }
    }

    /** {@code --wait busy|yield|backoff|sleep}, refused with the choices otherwise. */
    static final class DoorbellWaitConverter implements ITypeConverter<DoorbellWait>
    {
        public DoorbellWait convert(final String value)
        {
            try
            {
                return DoorbellWait.parse(value);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new TypeConversionException(ex.getMessage());
            }
        }
    }

    @Command(name = "latency", mixinStandardHelpOptions = true,
        description = {
            "One-way latency per message size, QNIX, the VIPL (--api vipl,vipl-rdma), PCIComm (--api pcicomm) and " +
                "(with --baselines) the baselines.",
            "Half the round trip: p50, p99, p99.9 and max, and each p50 as a multiple of the floor's and the " +
                "relay's. In each of --passes: the baselines first; then, without --cluster, a 2x1 cluster is " +
                "brought up for QNIX and the VIPL and torn down after. They run between the first two nodes; every " +
                "measurement is a pair of JVMs. Then the cores the whole machine kept busy while each was measured, " +
                "and with the cluster up and idle (sampled 2 s in each pass, before QNIX runs)." })
    static final class Latency implements Callable<Integer>
    {
        @Mixin
        Common common;

        @Option(names = "--api", defaultValue = "qnix", split = ",",
            description = "Interfaces of the cluster to measure: qnix (default: Send_Short up to the short " +
                "threshold, Send above), qnix-send (Send for every size), vipl (VIA Send into a posted receive, " +
                "Reliable Delivery), vipl-rdma (VIA RDMA write with immediate data) and pcicomm (PCIComm " +
                "connections: send into the peer's preposted buffers, zero copy; size 0 is sent as 1 byte).")
        List<String> api;

        @Option(names = "--sizes", defaultValue = "0,8,64,512,1024,4096,65536",
            description = "Message sizes in bytes (default: ${DEFAULT-VALUE}).")
        String sizes;

        @Option(names = "--iterations", defaultValue = "2000", description = "Measured round trips per size.")
        int iterations;

        @Option(names = "--warmup", defaultValue = "500", description = "Round trips before measuring, per size.")
        int warmup;

        public Integer call() throws Exception
        {
            common.check(api, LATENCY_APIS);
            if (iterations < 1 || warmup < 0)
            {
                throw new IllegalArgumentException("--iterations must be at least 1 and --warmup at least 0");
            }
            final int[] sizeList = parseSizes(sizes, 0);
            final int maxSize = Arrays.stream(sizeList).max().orElse(0);
            return measureAndReport(common, maxSize, sizeList,
                List.<IntFunction<LatencyTransport>>of(FloorTransport::start, RelayTransport::start,
                    TcpTransport::start, AeronIpcTransport::start),
                run -> api.stream().<IntFunction<LatencyTransport>>map(one -> max -> switch (one)
                {
                    case "vipl", "vipl-rdma" -> ViplTransport.start(run.name(), "0-0", run.peerNode(), common.wait,
                        "vipl-rdma".equals(one), max);
                    case "pcicomm" -> PciCommTransport.start(run.name(), "0-0", run.peerNode(), max);
                    default -> QnixTransport.start(run.name(), "0-0", run.peerNode(), common.wait,
                        "qnix".equals(one), max);
                }).toList(),
                LatencySamples::new, (transport, size, into) -> LatencyRun.measure(transport, size, warmup,
                    TimeUnit.MILLISECONDS.toNanos(common.warmupMs), iterations, into),
                LatencySamples::result, LatencyReport::new, String.format(Locale.ROOT,
                    "%d round trips after %d and %d ms of warm-up per size", iterations, warmup, common.warmupMs));
        }
    }

    @Command(name = "bandwidth", mixinStandardHelpOptions = true,
        description = {
            "Bandwidth per message size, QNIX, the VIPL (--api vipl), PCIComm (--api pcicomm) and (with " +
                "--baselines) the baselines.",
            "Payload MB/s streaming about --bytes per repeat with --window messages in flight (QNIX, VIPL, " +
                "PCIComm; TCP and Aeron pace themselves), median, min and max over --repeats, and each median as a " +
                "fraction of the floor's, a single-thread memory copy. In each of --passes: the baselines first; " +
                "then, without --cluster, a 2x1 cluster is brought up for QNIX and torn down after. Then the cores " +
                "the whole machine kept busy while each was measured, and with the cluster up and idle (2 s a pass)." })
    static final class Bandwidth implements Callable<Integer>
    {
        @Mixin
        Common common;

        @Option(names = "--api", defaultValue = "qnix", split = ",",
            description = "Interfaces of the cluster to measure: qnix (default: Send_Short up to the short " +
                "threshold, Send above), vipl (VIA Send into a posted receive, Reliable Delivery) and pcicomm " +
                "(PCIComm connections: send into the peer's preposted buffers, zero copy).")
        List<String> api;

        @Option(names = "--sizes", defaultValue = "4096,16384,65536,262144,1048576,2097152",
            description = "Message sizes in bytes (default: ${DEFAULT-VALUE}).")
        String sizes;

        @Option(names = "--bytes", defaultValue = "33554432", description = "Bytes per timed stream (default 32 MiB).")
        long bytes;

        @Option(names = "--window", defaultValue = "8", description = "QNIX, VIPL and PCIComm sends in flight (default 8; VIPL and PCIComm at most 64).")
        int window;

        @Option(names = "--repeats", defaultValue = "5", description = "Timed streams per size (default 5).")
        int repeats;

        public Integer call() throws Exception
        {
            common.check(api, BANDWIDTH_APIS);
            atLeastOne("--bytes", bytes);
            atLeastOne("--repeats", repeats);
            atLeastOne("--window", window);
            if (api.contains("vipl") && window > ViplStreamTransport.MAX_WINDOW)
            {
                throw new IllegalArgumentException("--window " + window + ": vipl takes at most " +
                    ViplStreamTransport.MAX_WINDOW);
            }
            if (api.contains("pcicomm") && window > PciCommStreamTransport.MAX_WINDOW)
            {
                throw new IllegalArgumentException("--window " + window + ": pcicomm takes at most " +
                    PciCommStreamTransport.MAX_WINDOW);
            }
            final int[] sizeList = parseSizes(sizes, 1);
            final int maxSize = Arrays.stream(sizeList).max().orElse(1);
            return measureAndReport(common, maxSize, sizeList,
                List.<IntFunction<BandwidthTransport>>of(MemoryCopyTransport::start, TcpStreamTransport::start,
                    AeronStreamTransport::start),
                run -> api.stream().<IntFunction<BandwidthTransport>>map(one -> max -> switch (one)
                {
                    case "vipl" -> ViplStreamTransport.start(run.name(), "0-0", run.peerNode(), max, window);
                    case "pcicomm" -> PciCommStreamTransport.start(run.name(), "0-0", run.peerNode(), max, window);
                    default -> QnixStreamTransport.start(run.name(), "0-0", run.peerNode(), common.wait, max, window);
                }).toList(),
                (name, size) -> new BandwidthSamples(name, size, window),
                (transport, size, into) -> BandwidthRun.measure(transport, size, bytes, window, repeats,
                    TimeUnit.MILLISECONDS.toNanos(common.warmupMs), into),
                BandwidthSamples::result, BandwidthReport::new, String.format(Locale.ROOT,
                    "about %d bytes per stream, median of %d after %d ms of warm-up; QNIX, VIPL and PCIComm window %d", bytes, repeats,
                    common.warmupMs, window));
        }
    }

    @Command(name = "jmh", mixinStandardHelpOptions = true,
        description = {
            "Run the JMH benchmarks: latency, bandwidth and barrier, QNIX beside the baselines.",
            "LatencyBenchmark (one-way, QNIX Send_Short and Send, floor, relay, TCP, Aeron IPC; -p api=vipl or " +
                "vipl-rdma for VIA), BandwidthBenchmark (payload bytes/s with a window; -p api=vipl for VIA), " +
                "BarrierBenchmark (2 and 4 processes). Each fork (three per latency or bandwidth trial) starts its " +
                "own cluster and peer JVMs and stops them. Arguments after -- go to JMH, for example:",
            "  qnix bench jmh -- LatencyBenchmark -p size=64 -p api=floor,qnix -rf json -rff lat.json",
            "Everything takes about 20 minutes; JMH's own -h lists its options and -l the benchmarks, without " +
                "running them. With --compare, the results are then set beside those of qnix bench " +
                "latency|bandwidth --json files, each with its noise; measure those with --passes 3, as JMH runs " +
                "three forks, so that both see several pairs of JVMs." })
    static final class Jmh implements Callable<Integer>
    {
        @Option(names = "--compare", split = ",", paramLabel = "FILE",
            description = "JSON files of qnix bench latency|bandwidth to compare the results with.")
        List<Path> compare = new ArrayList<>();

        @picocli.CommandLine.Parameters(arity = "0..*", paramLabel = "JMH-ARGS", description = "Passed to JMH.")
        List<String> jmhArgs = new ArrayList<>();

        public Integer call() throws Exception
        {
            final CommandLineOptions cli;
            try
            {
                cli = new CommandLineOptions(jmhArgs.toArray(new String[0]));
            }
            catch (final CommandLineOptionException ex)
            {
                throw new IllegalArgumentException("JMH: " + ex.getMessage());
            }
            if (cli.shouldHelp())
            {
                cli.showHelp();
                return QnixCommand.OK;
            }
            if (cli.shouldListProfilers())
            {
                cli.listProfilers();
                return QnixCommand.OK;
            }
            if (cli.shouldListResultFormats())
            {
                cli.listResultFormats();
                return QnixCommand.OK;
            }
            for (final Path file : compare)
            {
                if (!Files.exists(file))
                {
                    throw new IllegalArgumentException("--compare " + file + ": no such file");
                }
                if (!Files.isRegularFile(file) || !Files.isReadable(file))
                {
                    throw new IllegalArgumentException("--compare " + file + ": not a readable file");
                }
            }
            // Read now: a wrong file is refused before the run, not twenty minutes later.
            final JmhComparison.BenchFigures bench = JmhComparison.read(compare);
            // The forks need the JDK flags of every QNIX JVM, its collector and the full JIT. The collector
            // matters: under G1 the floor took 35 us one way at 64 KiB, under the serial collector 8 us.
            final List<String> forkFlags = JvmFlags.flags();
            forkFlags.add("-XX:+UseSerialGC");
            final ChainedOptionsBuilder options =
                new OptionsBuilder().parent(cli).jvmArgs(forkFlags.toArray(new String[0]));
            if (cli.getIncludes().isEmpty())
            {
                options.include("org\\.qnix\\.bench\\.jmh\\..*");
            }
            final Runner runner = new Runner(options.build());
            if (cli.shouldList())
            {
                runner.list();
                return QnixCommand.OK;
            }
            if (cli.shouldListWithParams())
            {
                runner.listWithParams(cli);
                return QnixCommand.OK;
            }
            final Collection<RunResult> results;
            try
            {
                results = runner.run();
            }
            catch (final NoBenchmarksException ex)
            {
                throw new IllegalArgumentException("JMH: no benchmark matches " + String.join(" ", cli.getIncludes()) +
                    " (./qnix bench jmh -- -l lists them)", ex);
            }
            catch (final RunnerException ex)
            {
                // Another JMH run holding its lock, a fork that would not start.
                throw new IllegalStateException("JMH: " + (null != ex.getMessage() ? ex.getMessage() :
                    ex.getClass().getSimpleName()), ex);
            }
            if (!compare.isEmpty())
            {
                JmhComparison.of(results, bench).print(System.out);
            }
            return QnixCommand.OK;
        }
    }

    /** Measures one size with one transport, into the samples of that transport and size. */
    private interface SizeMeasurement<T extends Transport, S>
    {
        void measure(T transport, int size, S into);
    }

    /**
     * Each pass: the baselines (with {@code --baselines}) first, as a user without QNIX would run them;
     * then the cluster for QNIX and QNIX. Then the report of them all, every pass merged: printed, and
     * written as JSON and chart if asked.
     *
     * @param newSamples the samples of a transport (by name) at a size, to which every pass adds.
     * @param how        how the run measures, the start of the sentence above its table.
     */
    private static <T extends Transport, S, R> int measureAndReport(final Common common, final int maxSize,
        final int[] sizes, final List<IntFunction<T>> baselines,
        final Function<BenchCluster, List<IntFunction<T>>> qnix, final BiFunction<String, Integer, S> newSamples,
        final SizeMeasurement<T, S> measurement, final Function<S, R> result,
        final Function<RunSetup, BenchReport<R>> newReport, final String how) throws Exception
    {
        final PrintStream out = System.out;
        // In the order first measured: the table lists the baselines, then QNIX, as one pass does.
        final Map<String, S> samples = new LinkedHashMap<>();
        final Function<String, IntFunction<S>> samplesOf =
            api -> size -> samples.computeIfAbsent(api + " " + size, k -> newSamples.apply(api, size));
        final CoresBusy cores = new CoresBusy();
        RunSetup setup = null;
        for (int pass = 1; pass <= common.passes; pass++)
        {
            if (common.passes > 1)
            {
                out.println("== pass " + pass + " of " + common.passes);
            }
            if (common.baselines)
            {
                measureEach(baselines, maxSize, sizes, out, measurement, samplesOf, cores);
            }
            try (BenchCluster run = common.cluster(out))
            {
                cores.sampleIdle(IDLE_SAMPLE_MS);
                measureEach(qnix.apply(run), maxSize, sizes, out, measurement, samplesOf, cores);
                setup = common.setup(run, how);
            }
        }
        final BenchReport<R> report = newReport.apply(setup);
        samples.values().forEach(s -> report.add(result.apply(s)));
        report.print(out);
        cores.print(out);
        if (null != common.json)
        {
            report.writeJson(common.json);
            out.println("== results written to " + common.json);
        }
        if (null != common.chart)
        {
            report.writeChart(common.chart);
            out.println("== chart written to " + common.chart);
        }
        return QnixCommand.OK;
    }

    /**
     * Starts each transport in turn, measures every size with it, and closes it before the next; the
     * machine's busy cores while it measured go to {@code cores}.
     */
    private static <T extends Transport, S> void measureEach(final List<IntFunction<T>> transports,
        final int maxSize, final int[] sizes, final PrintStream out, final SizeMeasurement<T, S> measurement,
        final Function<String, IntFunction<S>> samplesOf, final CoresBusy cores)
    {
        for (final IntFunction<T> start : transports)
        {
            try (T transport = start.apply(maxSize))
            {
                out.println("== measuring " + transport.name());
                final IntFunction<S> ofSize = samplesOf.apply(transport.name());
                final CpuSample before = CpuSample.now();
                for (final int size : sizes)
                {
                    measurement.measure(transport, size, ofSize.apply(size));
                }
                cores.add(transport.name(), before, CpuSample.now());
            }
        }
    }

    /** How long the idle cluster's cores are sampled, in each pass. */
    private static final long IDLE_SAMPLE_MS = 2_000;

    /**
     * Refuses an output file that cannot be written, before anything is measured: a missing directory
     * would otherwise be found when the report is written, after the whole run. A file that may be one
     * of the clusters' ({@link ClusterDirectory#whyAClusterFile}) is refused too: the NICs map them, and
     * one cut short under them ends their firmware with a memory fault.
     *
     * @throws IllegalArgumentException naming the option and the file.
     */
    static void checkOutputFile(final String option, final Path file)
    {
        final Path directory = file.toAbsolutePath().getParent();
        final String clusterFile = ClusterDirectory.whyAClusterFile(file);
        if (null != clusterFile)
        {
            throw new IllegalArgumentException(option + " " + file + ": " + clusterFile);
        }
        if (Files.isDirectory(file))
        {
            throw new IllegalArgumentException(option + " " + file + ": is a directory, not a file");
        }
        if (null == directory || !Files.isDirectory(directory))
        {
            throw new IllegalArgumentException(option + " " + file + ": no such directory " + directory);
        }
        if (Files.exists(file) ? !Files.isWritable(file) : !Files.isWritable(directory))
        {
            throw new IllegalArgumentException(option + " " + file + ": cannot be written here");
        }
    }

    static int[] parseSizes(final String sizes, final int smallest)
    {
        try
        {
            final int[] parsed = Arrays.stream(sizes.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
            for (final int size : parsed)
            {
                if (size < smallest || size > 2 * 1024 * 1024)
                {
                    throw new IllegalArgumentException("--sizes: " + size + " is outside [" + smallest + ", 2 MiB]");
                }
            }
            if (0 == parsed.length)
            {
                throw new IllegalArgumentException("--sizes: at least one size");
            }
            return parsed;
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("--sizes " + sizes + ": a comma-separated list of byte counts");
        }
    }
}
