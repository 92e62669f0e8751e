package org.qnix.tools;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.IntFunction;

import org.HdrHistogram.Histogram;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.bench.AeronIpcTransport;
import org.qnix.bench.FloorTransport;
import org.qnix.bench.LatencyReport;
import org.qnix.bench.LatencyResult;
import org.qnix.bench.LatencyRun;
import org.qnix.bench.LatencyTransport;
import org.qnix.bench.QnixTransport;
import org.qnix.bench.TcpTransport;
import org.qnix.daemon.ClusterState;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code qnix bench}: quick measurements with HdrHistogram percentiles, QNIX beside the baselines
 * measured in the same run (DESIGN.md 7).
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = {
        "Measure QNIX beside the baselines a Java user has, in the same run: the floor (two JVMs",
        "ping-ponging through one shared mapping), TCP over loopback and Aeron IPC." },
    subcommands = { Bench.Latency.class })
final class Bench implements Runnable
{
    @picocli.CommandLine.Spec
    private picocli.CommandLine.Model.CommandSpec spec;

    public void run()
    {
        spec.commandLine().usage(System.out);
    }

    @Command(name = "latency", mixinStandardHelpOptions = true,
        description = {
            "One-way latency per message size, QNIX and (with --baselines) the baselines.",
            "Half the round trip: p50, p99, p99.9 and max, and each p50 as a multiple of the floor's.",
            "Without --cluster, brings up a 2x1 cluster for the run and tears it down after. QNIX runs",
            "between the first two nodes; every measurement is a pair of JVMs." })
    static final class Latency implements Callable<Integer>
    {
        @Option(names = "--api", defaultValue = "qnix", description = "What to measure: qnix (default).")
        String api;

        @Option(names = "--sizes", defaultValue = "0,8,64,512,1024,4096,65536",
            description = "Message sizes in bytes (default: ${DEFAULT-VALUE}).")
        String sizes;

        @Option(names = "--baselines", description = "Also measure the floor, TCP and Aeron IPC in the same run.")
        boolean baselines;

        @Option(names = "--iterations", defaultValue = "2000", description = "Measured round trips per size.")
        int iterations;

        @Option(names = "--warmup", defaultValue = "500", description = "Round trips before measuring, per size.")
        int warmup;

        @Option(names = "--wait", defaultValue = "sleep",
            description = "How QNIX programs wait for a doorbell: sleep (futex, default) or spin.")
        String waitMode;

        @Option(names = "--cluster", description = "Use this running cluster (2 nodes at least).")
        String cluster;

        @Option(names = "--name", defaultValue = "bench",
            description = "Name of the cluster of the run, when there is no --cluster (default: ${DEFAULT-VALUE}).")
        String name;

        @Option(names = "--firmware", defaultValue = "processes",
            description = "For the cluster of the run: processes (default) or threads.")
        String firmware;

        @Option(names = "--idle", defaultValue = "backoff",
            description = "For the cluster of the run: firmware idle strategy backoff (default), yield or busy.")
        String idle;

        @Option(names = "--json", description = "Also write the results as JSON to this file.")
        Path json;

        @Option(names = "--chart", description = "Also draw p50 versus size as an SVG chart in this file.")
        Path chart;

        public Integer call() throws Exception
        {
            if (!"qnix".equals(api))
            {
                throw new IllegalArgumentException("--api " + api + ": only qnix can be measured (the VIPL is not built)");
            }
            if (!"sleep".equals(waitMode) && !"spin".equals(waitMode))
            {
                throw new IllegalArgumentException("--wait " + waitMode + ": use sleep or spin");
            }
            if (iterations < 1 || warmup < 0)
            {
                throw new IllegalArgumentException("--iterations must be at least 1 and --warmup at least 0");
            }
            final int[] sizeList = parseSizes(sizes);
            final int maxSize = Arrays.stream(sizeList).max().orElse(0);
            final PrintStream out = System.out;

            final boolean ownCluster = null == cluster;
            final ClusterDirectory dir;
            if (ownCluster)
            {
                out.println("== bringing up cluster '" + name + "': 2x1 torus, firmware as " + firmware + ", idle " + idle);
                dir = ClusterControl.up(new ClusterControl.Settings(name,
                    ClusterParameters.builder().torus(2, 1).build()).firmware(firmware).idle(idle),
                    new PrintStream(new ByteArrayOutputStream()));
            }
            else
            {
                dir = ClusterDirectory.of(cluster);
                if (!ClusterState.inspect(dir).isLive())
                {
                    throw new IllegalArgumentException("cluster '" + cluster + "' is not up");
                }
                final ClusterParameters params = ClusterState.inspect(dir).properties().orElseThrow().parameters();
                if (params.nodeCount() < 2)
                {
                    throw new IllegalArgumentException("cluster '" + cluster + "' has one node: QNIX is measured " +
                        "between two nodes");
                }
            }
            final String peerNode = NicCoordinates.ofIndex(1,
                ClusterState.inspect(dir).properties().orElseThrow().parameters().torusWidth()).toString();
            final Thread teardown = new Thread(() -> down(dir), "bench-cluster-down");
            if (ownCluster)
            {
                Runtime.getRuntime().addShutdownHook(teardown);
            }
            try
            {
                final List<IntFunction<LatencyTransport>> transports = new ArrayList<>();
                if (baselines)
                {
                    transports.add(FloorTransport::start);
                    transports.add(TcpTransport::start);
                    transports.add(AeronIpcTransport::start);
                }
                final boolean sleep = "sleep".equals(waitMode);
                transports.add(max -> QnixTransport.start(dir.name(), "0-0", peerNode, sleep, max));

                final LatencyReport report = new LatencyReport(String.format(Locale.ROOT,
                    "%d round trips after %d of warm-up per size; QNIX: firmware %s, idle %s, programs %s",
                    iterations, warmup, ownCluster ? firmware : "of cluster '" + cluster + "'",
                    ownCluster ? idle : "as set at its cluster up", sleep ? "sleep on doorbells" : "spin"));
                for (final IntFunction<LatencyTransport> start : transports)
                {
                    try (LatencyTransport transport = start.apply(maxSize))
                    {
                        out.println("== measuring " + transport.name());
                        for (final int size : sizeList)
                        {
                            final Histogram oneWay = LatencyRun.measure(transport, size, warmup, iterations);
                            report.add(LatencyResult.of(transport.name(), size, oneWay));
                        }
                    }
                }
                report.print(out);
                if (null != json)
                {
                    report.writeJson(json);
                    out.println("== results written to " + json);
                }
                if (null != chart)
                {
                    report.writeChart(chart);
                    out.println("== chart written to " + chart);
                }
                return QnixCommand.OK;
            }
            finally
            {
                if (ownCluster)
                {
                    down(dir);
                    try
                    {
                        Runtime.getRuntime().removeShutdownHook(teardown);
                    }
                    catch (final IllegalStateException ignore)
                    {
                        // Already shutting down: the hook is running.
                    }
                }
            }
        }
    }

    private static void down(final ClusterDirectory dir)
    {
        try
        {
            ClusterControl.down(dir, new PrintStream(new ByteArrayOutputStream()));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    static int[] parseSizes(final String sizes)
    {
        try
        {
            final int[] parsed = Arrays.stream(sizes.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
            for (final int size : parsed)
            {
                if (size < 0 || size > 2 * 1024 * 1024)
                {
                    throw new IllegalArgumentException("--sizes: " + size + " is outside [0, 2 MiB]");
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
