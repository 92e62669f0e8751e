package org.qnix.bench.jmh;

import java.util.concurrent.TimeUnit;

import org.agrona.CloseHelper;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.qnix.bench.AeronStreamTransport;
import org.qnix.bench.BandwidthTransport;
import org.qnix.bench.MemoryCopyTransport;
import org.qnix.bench.QnixStreamTransport;
import org.qnix.bench.TcpStreamTransport;
import org.qnix.bench.ViplStreamTransport;

/**
 * Bandwidth of QNIX Send with a window of sends in flight between two nodes, and of the baselines: one
 * operation is a stream of about {@code streamBytes} (32 MiB, as {@code qnix bench bandwidth})
 * acknowledged by the peer; the {@code bytes} counter is the payload moved, so JMH reports payload
 * bytes per second beside the streams per second. Run with {@code ./qnix bench jmh}. Three forks, each
 * with new JVMs, as in {@link LatencyBenchmark}: the spread between pairs of JVMs is part of the noise.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(3)
public class BandwidthBenchmark
{
    /** qnix: QNIX Send. Also taken, with {@code -p api=vipl}: VIA Send on a Reliable Delivery VI, credits given back. */
    @Param({"floor", "tcp", "aeron-ipc", "qnix"})
    public String api;

    @Param({"4096", "65536", "1048576", "2097152"})
    public int size;

    @Param({"8"})
    public int window;

    /** Payload per operation, as {@code qnix bench bandwidth --bytes} (32 MiB): one stream, one ack. */
    @Param({"33554432"})
    public long streamBytes;

    private TrialCluster cluster;
    private BandwidthTransport transport;
    private int messages;

    /** The payload bytes moved, reported by JMH per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Payload
    {
        public long bytes;
    }

    @Setup(Level.Trial)
    public void setUp(final QnixSettings qnix)
    {
        final int max = 2 * 1024 * 1024;
        switch (api)
        {
            case "floor" -> transport = MemoryCopyTransport.start(max);
            case "tcp" -> transport = TcpStreamTransport.start(max);
            case "aeron-ipc" -> transport = AeronStreamTransport.start(max);
            case "qnix" ->
            {
                cluster = qnix.cluster();
                transport = QnixStreamTransport.start(cluster.name(), "0-0", "1-0", qnix.doorbellWait(), max, window);
            }
            case "vipl" ->
            {
                cluster = qnix.cluster();
                transport = ViplStreamTransport.start(cluster.name(), "0-0", "1-0", max, window);
            }
            default -> throw new IllegalArgumentException("api " + api);
        }
        messages = (int)Math.max(window, streamBytes / size);
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        CloseHelper.closeAll(transport, cluster);
    }

    @Benchmark
    public void stream(final Payload payload)
    {
        transport.stream(size, messages, window);
        payload.bytes += (long)size * messages;
    }
}
