package org.qnix.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.HostClock;

/**
 * Each baseline starts its peer JVM, moves messages of every size both ways and produces numbers, and
 * leaves no process or file behind. No time is asserted: speed is for the benchmarks to show.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BaselinesSmokeTest
{
    private static final int MAX = 65536;

    @Test
    void everyBaselineMeasuresEverySizeAndCleansUp() throws Exception
    {
        final List<IntFunction<LatencyTransport>> baselines =
            List.of(FloorTransport::start, TcpTransport::start, AeronIpcTransport::start);
        final long filesBefore = benchFiles();
        for (final IntFunction<LatencyTransport> start : baselines)
        {
            final long childrenBefore = ProcessHandle.current().children().count();
            try (LatencyTransport transport = start.apply(MAX))
            {
                assertEquals(childrenBefore + 1, ProcessHandle.current().children().count(), "one peer JVM");
                for (final int size : new int[] {0, 1, 1024, MAX})
                {
                    final Histogram h = LatencyRun.measure(transport, size, 10, 50);
                    assertEquals(50, h.getTotalCount(), transport.name() + " at " + size);
                    assertTrue(h.getMinValue() > 0, transport.name());
                }
            }
            final long deadline = HostClock.millis() + 10_000;
            while (ProcessHandle.current().children().count() > childrenBefore && HostClock.millis() < deadline)
            {
                Thread.sleep(20);
            }
            assertEquals(childrenBefore, ProcessHandle.current().children().count(), "the peer JVM is gone");
        }
        assertEquals(filesBefore, benchFiles(), "no benchmark file left");
    }

    private static long benchFiles() throws Exception
    {
        try (java.util.stream.Stream<Path> files = Files.list(BenchFiles.base()))
        {
            return files.filter(p -> p.getFileName().toString().startsWith("qnix-bench-")).count();
        }
    }
}
