package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.bench.LatencyReport;
import org.qnix.bench.LatencyResult;
import org.qnix.bench.RunSetup;
import org.qnix.bench.StrategyReport;
import org.qnix.pcicomm.PciComm;

/**
 * {@code qnix bench latency|bandwidth --baselines} start, measure QNIX and the three baselines, write
 * their JSON and chart (SVG and PNG), and tear their cluster down; {@code qnix bench strategies}
 * measures each combination it is given; {@code qnix bench jmh} runs a benchmark in a JMH fork. Smoke runs: few iterations, no time asserted.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class BenchCommandSmokeTest
{
    @TempDir
    Path out;

    @Test
    void latencyWithBaselinesPrintsEveryApiAndWritesJsonAndChart() throws Exception
    {
        final String name = TestClusters.uniqueName("bl");
        final Path json = out.resolve("latency.json");
        final Path chart = out.resolve("latency.svg");
        try
        {
            final CliResult result = CliResult.run("bench", "latency", "--baselines", "--name", name,
                "--sizes", "0,1024,4096", "--iterations", "20", "--warmup", "5", "--warmup-ms", "0", "--json", json.toString(),
                "--chart", chart.toString());
            assertEquals(0, result.exit, result.out + result.err);
            for (final String api : new String[] {"floor", "relay", "tcp", "aeron-ipc", "qnix"})
            {
                assertEquals(3, result.out.lines().filter(l -> l.startsWith("BENCH kind=latency api=" + api + " "))
                    .count(), api + " in:\n" + result.out);
            }
            assertTrue(result.out.contains("x_floor=1.00"), result.out);
            assertTrue(result.out.contains("api=relay size=0 ") && result.out.contains("x_relay=1.00"), result.out);
            // The cores busy while each was measured (na: these runs are shorter than a tick of /proc/stat),
            // and with the cluster up and idle, which is sampled for 2 s.
            for (final String what : new String[] {"floor", "relay", "tcp", "aeron-ipc", "qnix"})
            {
                assertTrue(result.out.lines().anyMatch(l -> l.matches("BENCH kind=cores what=" + what +
                    " busy_cores=(\\d+\\.\\d{3}|na)")), what + " in:\n" + result.out);
            }
            assertTrue(result.out.lines().anyMatch(l -> l.matches("BENCH kind=cores what=idle-cluster busy_cores=\\d+\\.\\d{3}")),
                result.out);
            final String text = Files.readString(json);
            assertEquals(15, text.lines().filter(l -> l.contains("\"api\"")).count(), text);
            assertTrue(Files.readString(chart).startsWith("<svg"), "an SVG document");
            assertFalse(Files.exists(ClusterDirectory.of(name).path()), "the run's cluster is down");
        }
        finally
        {
            TestClusters.down(ClusterDirectory.of(name));
        }
    }

    @Test
    void bandwidthWithBaselinesPrintsEveryApiAndWritesJsonAndChart() throws Exception
    {
        final String name = TestClusters.uniqueName("bb");
        final Path json = out.resolve("bandwidth.json");
        final Path chart = out.resolve("bandwidth.png");
        try
        {
            final CliResult result = CliResult.run("bench", "bandwidth", "--baselines", "--name", name,
                "--sizes", "4096,65536", "--bytes", "262144", "--repeats", "1", "--window", "4", "--warmup-ms", "0",
                "--passes", "2", "--json", json.toString(), "--chart", chart.toString());
            assertEquals(0, result.exit, result.out + result.err);
            // Two passes, each with its own cluster, merged into one row per transport and size.
            assertTrue(result.out.contains("== pass 2 of 2"), result.out);
            assertEquals(2, result.out.lines().filter(l -> l.startsWith("== bringing up cluster '" + name + "'")).count(),
                result.out);
            for (final String api : new String[] {"floor", "tcp", "aeron-ipc", "qnix"})
            {
                assertEquals(2, result.out.lines().filter(l -> l.startsWith("BENCH kind=bandwidth api=" + api + " "))
                    .count(), api + " in:\n" + result.out);
                assertEquals(1, result.out.lines().filter(l -> l.startsWith("BENCH kind=cores what=" + api + " "))
                    .count(), api + " in:\n" + result.out);
            }
            assertEquals(8, Files.readString(json).lines().filter(l -> l.contains("\"api\"")).count());
            final BufferedImage image = ImageIO.read(chart.toFile());
            assertEquals(800, image.getWidth(), "a PNG image");
            assertEquals(500, image.getHeight(), "a PNG image");
            assertFalse(Files.exists(ClusterDirectory.of(name).path()), "the run's cluster is down");
        }
        finally
        {
            TestClusters.down(ClusterDirectory.of(name));
        }
    }

    @Test
    void latencyAndBandwidthMeasureTheViplBesideQnixInTheSameRun() throws Exception
    {
        final String name = TestClusters.uniqueName("bv");
        try
        {
            final CliResult latency = CliResult.run("bench", "latency", "--api", "qnix,vipl,vipl-rdma", "--name", name,
                "--sizes", "0,4096,70000", "--iterations", "20", "--warmup", "5", "--warmup-ms", "0");
            assertEquals(0, latency.exit, latency.out + latency.err);
            for (final String api : new String[] {"qnix", "vipl", "vipl-rdma"})
            {
                assertEquals(3, latency.out.lines().filter(l -> l.startsWith("BENCH kind=latency api=" + api + " "))
                    .count(), api + " in:\n" + latency.out);
            }
            final CliResult bandwidth = CliResult.run("bench", "bandwidth", "--api", "qnix,vipl", "--name", name,
                "--sizes", "4096,65536,2097152", "--bytes", "4194304", "--repeats", "1", "--window", "4",
                "--warmup-ms", "0");
            assertEquals(0, bandwidth.exit, bandwidth.out + bandwidth.err);
            for (final String api : new String[] {"qnix", "vipl"})
            {
                assertEquals(3, bandwidth.out.lines().filter(l -> l.startsWith("BENCH kind=bandwidth api=" + api + " "))
                    .count(), api + " in:\n" + bandwidth.out);
            }
            assertFalse(Files.exists(ClusterDirectory.of(name).path()), "the run's cluster is down");
        }
        finally
        {
            TestClusters.down(ClusterDirectory.of(name));
        }
    }

    @Test
    void latencyAndBandwidthMeasurePciCommThroughPrepostedBuffers() throws Exception
    {
        final String name = TestClusters.uniqueName("bp");
        try
        {
            final CliResult latency = CliResult.run("bench", "latency", "--api", "pcicomm", "--name", name,
                "--sizes", "0,64,70000", "--iterations", "20", "--warmup", "5", "--warmup-ms", "0");
            assertEquals(0, latency.exit, latency.out + latency.err);
            assertEquals(3, latency.out.lines().filter(l -> l.startsWith("BENCH kind=latency api=pcicomm ")).count(),
                latency.out);
            final CliResult bandwidth = CliResult.run("bench", "bandwidth", "--api", "pcicomm", "--name", name,
                "--sizes", "4096,65536,2097152", "--bytes", "4194304", "--repeats", "1", "--window", "4",
                "--warmup-ms", "0");
            assertEquals(0, bandwidth.exit, bandwidth.out + bandwidth.err);
            assertEquals(3, bandwidth.out.lines().filter(l -> l.startsWith("BENCH kind=bandwidth api=pcicomm "))
                .count(), bandwidth.out);
            assertFalse(Files.exists(ClusterDirectory.of(name).path()), "the run's cluster is down");
        }
        finally
        {
            TestClusters.down(ClusterDirectory.of(name));
            removeCidLocks(name);
        }
    }

    /** The cid lock files of the run's cluster, should a peer have been killed holding one (see PciComm.cidLockDirectory). */
    private static void removeCidLocks(final String cluster) throws java.io.IOException
    {
        final Path locks = PciComm.cidLockDirectory();
        if (!Files.isDirectory(locks))
        {
            return;
        }
        try (java.nio.file.DirectoryStream<Path> files = Files.newDirectoryStream(locks, cluster + "-*.lock"))
        {
            for (final Path file : files)
            {
                Files.deleteIfExists(file);
            }
        }
    }

    @Test
    void theJmhBenchmarksTakeTheVipl() throws Exception
    {
        final Path results = out.resolve("jmh-vipl.json");
        final CliResult result = CliResult.run("bench", "jmh", "--", "LatencyBenchmark", "-p", "api=vipl",
            "-p", "size=64", "-wi", "0", "-i", "1", "-r", "200ms", "-f", "1", "-rf", "json", "-rff", results.toString());
        assertEquals(0, result.exit, result.out + result.err);
        final String json = Files.readString(results);
        assertTrue(json.contains("\"api\" : \"vipl\""), json);
        assertEquals(1, json.lines().filter(l -> l.contains("\"benchmark\" : \"org.qnix.bench.jmh.LatencyBenchmark.oneWay\""))
            .count(), json);
    }

    @Test
    void strategiesMeasuresEveryCombinationBesideTheFloorAndCountsCores() throws Exception
    {
        final String name = TestClusters.uniqueName("bs");
        final Path json = out.resolve("strategies.json");
        try
        {
            final CliResult result = CliResult.run("bench", "strategies", "--name", name, "--firmware", "threads",
                "--idle", "backoff,yield", "--wait", "sleep,busy", "--sizes", "0,64", "--iterations", "20", "--warmup",
                "5", "--warmup-ms", "0", "--idle-seconds", "1", "--json", json.toString());
            assertEquals(0, result.exit, result.out + result.err);
            assertEquals(2, result.out.lines().filter(l -> l.startsWith("BENCH kind=strategy api=floor ")).count(),
                result.out);
            for (final String idle : new String[] {"backoff", "yield"})
            {
                for (final String wait : new String[] {"sleep", "busy"})
                {
                    assertEquals(2, result.out.lines().filter(l -> l.startsWith("BENCH kind=strategy api=qnix") &&
                        l.contains(" firmware=threads fw_idle=" + idle + " wait=" + wait + " ") &&
                        l.contains(" busy_cores=") && !l.contains("idle_cores=na")).count(),
                        idle + "/" + wait + " in:\n" + result.out);
                }
            }
            assertEquals(10, Files.readString(json).lines().filter(l -> l.contains("\"api\"")).count());
            assertFalse(Files.exists(ClusterDirectory.of(name).path()), "the run's clusters are down");
        }
        finally
        {
            TestClusters.down(ClusterDirectory.of(name));
        }
    }

    @Test
    void badOptionsAreRefusedBeforeAnythingStarts() throws Exception
    {
        final CliResult wait = CliResult.run("bench", "strategies", "--wait", "nap");
        assertEquals(QnixCommand.BAD_ARGUMENT, wait.exit, wait.out + wait.err);
        assertTrue(wait.err.contains("busy, yield, backoff or sleep"), wait.err);
        final CliResult idle = CliResult.run("bench", "strategies", "--idle", "nap");
        assertEquals(QnixCommand.BAD_ARGUMENT, idle.exit, idle.out + idle.err);
        assertTrue(idle.err.contains("--idle") && idle.err.contains("nap"), idle.out + idle.err);
        final CliResult chart = CliResult.run("bench", "latency", "--chart", "latency.jpg");
        assertEquals(QnixCommand.BAD_ARGUMENT, chart.exit, chart.out + chart.err);
        assertTrue(chart.err.contains(".png or .svg"), chart.out + chart.err);
        final CliResult api = CliResult.run("bench", "latency", "--api", "qnix,qnix");
        assertEquals(QnixCommand.BAD_ARGUMENT, api.exit, api.out + api.err);
        assertTrue(api.err.contains("each at most once"), api.out + api.err);
        final CliResult unknownApi = CliResult.run("bench", "latency", "--api", "qnix,via");
        assertEquals(QnixCommand.BAD_ARGUMENT, unknownApi.exit, unknownApi.out + unknownApi.err);
        assertTrue(unknownApi.err.contains("use qnix, qnix-send, vipl, vipl-rdma, pcicomm"), unknownApi.out + unknownApi.err);
        final CliResult rdmaStream = CliResult.run("bench", "bandwidth", "--api", "vipl-rdma");
        assertEquals(QnixCommand.BAD_ARGUMENT, rdmaStream.exit, rdmaStream.out + rdmaStream.err);
        assertTrue(rdmaStream.err.contains("use qnix, vipl, pcicomm (vipl-rdma is measured for latency only)"),
            rdmaStream.out + rdmaStream.err);
        final CliResult noWindow = CliResult.run("bench", "bandwidth", "--window", "0");
        assertEquals(QnixCommand.BAD_ARGUMENT, noWindow.exit, noWindow.out + noWindow.err);
        assertTrue(noWindow.err.contains("--window 0: at least 1"), noWindow.out + noWindow.err);
        final CliResult window = CliResult.run("bench", "bandwidth", "--api", "vipl", "--window", "65");
        assertEquals(QnixCommand.BAD_ARGUMENT, window.exit, window.out + window.err);
        assertTrue(window.err.contains("vipl takes at most 64"), window.out + window.err);
        // Refused before the baselines are measured: nothing was measured.
        final CliResult absent = CliResult.run("bench", "latency", "--baselines", "--cluster", "no-such-cluster");
        assertEquals(QnixCommand.BAD_ARGUMENT, absent.exit, absent.out + absent.err);
        assertTrue(absent.err.contains("--cluster no-such-cluster: the cluster is not up"), absent.out + absent.err);
        assertFalse(absent.out.contains("== measuring"), absent.out);
        // A file that is not a latency or bandwidth result is refused before JMH runs.
        final Path strategies = out.resolve("strategies.json");
        new StrategyReport("by hand").writeJson(strategies);
        final CliResult compare = CliResult.run("bench", "jmh", "--compare", strategies.toString(), "--",
            "LatencyBenchmark");
        assertEquals(QnixCommand.BAD_ARGUMENT, compare.exit, compare.out + compare.err);
        assertTrue(compare.err.contains("not a file of qnix bench latency|bandwidth"), compare.out + compare.err);
        assertFalse(compare.out.contains("# Run progress"), compare.out);
    }

    @Test
    void theJmhBenchmarksStartInAForkProduceNumbersAndAreComparedWithTheBench() throws Exception
    {
        final Path results = out.resolve("jmh.json");
        // A bench result for the same transport and size, as qnix bench latency --json writes it.
        final Path bench = out.resolve("latency.json");
        final LatencyReport report = new LatencyReport(new RunSetup("processes", "backoff", "by hand"));
        report.add(new LatencyResult("floor", 8, 1000, 250, 400, 900, 5000, 200, 300));
        report.writeJson(bench);
        final CliResult result = CliResult.run("bench", "jmh", "--compare", bench.toString(), "--", "LatencyBenchmark",
            "-p", "api=floor", "-p", "size=8", "-wi", "0", "-i", "1", "-r", "200ms", "-f", "1", "-rf", "json", "-rff",
            results.toString());
        assertEquals(0, result.exit, result.out + result.err);
        final String json = Files.readString(results);
        assertTrue(json.contains("org.qnix.bench.jmh.LatencyBenchmark.oneWay"), json);
        assertTrue(json.contains("\"score\""), json);
        assertTrue(result.out.lines().anyMatch(l -> l.startsWith("COMPARE kind=latency api=floor size=8 unit=us jmh=") &&
            l.contains(" bench=0.250 bench_low=0.200 bench_high=0.300 match=")), result.out);
        assertTrue(result.out.contains("of 1 comparisons match within the noise"), result.out);
    }
}
