package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;

/**
 * {@code qnix bench latency|bandwidth --baselines} start, measure QNIX and the three baselines, write
 * their JSON and chart, and tear their cluster down; {@code qnix bench jmh} runs a benchmark in a JMH
 * fork. Smoke runs: few iterations, no time asserted.
 */
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
                "--sizes", "0,1024,4096", "--iterations", "20", "--warmup", "5", "--json", json.toString(),
                "--chart", chart.toString());
            assertEquals(0, result.exit, result.out + result.err);
            for (final String api : new String[] {"floor", "tcp", "aeron-ipc", "qnix"})
            {
                assertEquals(3, result.out.lines().filter(l -> l.startsWith("BENCH kind=latency api=" + api + " "))
                    .count(), api + " in:\n" + result.out);
            }
            assertTrue(result.out.contains("x_floor=1.00"), result.out);
            final String text = Files.readString(json);
            assertEquals(12, text.lines().filter(l -> l.contains("\"api\"")).count(), text);
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
        final Path chart = out.resolve("bandwidth.svg");
        try
        {
            final CliResult result = CliResult.run("bench", "bandwidth", "--baselines", "--name", name,
                "--sizes", "4096,65536", "--bytes", "262144", "--repeats", "1", "--window", "4", "--json",
                json.toString(), "--chart", chart.toString());
            assertEquals(0, result.exit, result.out + result.err);
            for (final String api : new String[] {"floor", "tcp", "aeron-ipc", "qnix"})
            {
                assertEquals(2, result.out.lines().filter(l -> l.startsWith("BENCH kind=bandwidth api=" + api + " "))
                    .count(), api + " in:\n" + result.out);
            }
            assertEquals(8, Files.readString(json).lines().filter(l -> l.contains("\"api\"")).count());
            assertTrue(Files.readString(chart).startsWith("<svg"), "an SVG document");
            assertFalse(Files.exists(ClusterDirectory.of(name).path()), "the run's cluster is down");
        }
        finally
        {
            TestClusters.down(ClusterDirectory.of(name));
        }
    }

    @Test
    void theJmhBenchmarksStartInAForkAndProduceNumbers() throws Exception
    {
        final Path results = out.resolve("jmh.json");
        final CliResult result = CliResult.run("bench", "jmh", "--", "LatencyBenchmark", "-p", "api=floor", "-p",
            "size=8", "-wi", "0", "-i", "1", "-r", "200ms", "-f", "1", "-rf", "json", "-rff", results.toString());
        assertEquals(0, result.exit, result.out + result.err);
        final String json = Files.readString(results);
        assertTrue(json.contains("org.qnix.bench.jmh.LatencyBenchmark.oneWay"), json);
        assertTrue(json.contains("\"score\""), json);
    }
}
