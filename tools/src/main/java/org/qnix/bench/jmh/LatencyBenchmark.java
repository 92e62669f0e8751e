package org.qnix.bench.jmh;

import java.util.concurrent.TimeUnit;

import org.agrona.CloseHelper;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.qnix.bench.AeronIpcTransport;
import org.qnix.bench.FloorTransport;
import org.qnix.bench.LatencyTransport;
import org.qnix.bench.QnixTransport;
import org.qnix.bench.RelayTransport;
import org.qnix.bench.TcpTransport;
import org.qnix.bench.ViplTransport;

/**
 * One-way latency (a round trip counts as two operations, so JMH reports half of it) of QNIX Send_Short
 * and Send and of VIA Send and RDMA write between two nodes, and of the baselines, each against its peer JVM started in the trial's
 * setup. Run with {@code ./qnix bench jmh}. Three short forks rather than one long one: each fork is a
 * new pair of JVMs, and on the 2-core VM of docs/PERFORMANCE.md the floor's median moved between 0.06
 * and 0.3 us from one pair to the next while staying within 0.02 us inside a pair; one fork's iterations
 * would not show that noise.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(3)
public class LatencyBenchmark
{
    /**
     * qnix: Send_Short up to 1024 bytes, Send above; qnix-send: Send for every size. Also taken, with
     * {@code -p api=...}: vipl, VIA Send on a Reliable Delivery VI; vipl-rdma, VIA RDMA write with
     * immediate data (not in the default run while the firmware's RDMA write stalls now and then).
     */
    @Param({"floor", "relay", "tcp", "aeron-ipc", "qnix", "qnix-send"})
    public String api;

    @Param({"0", "8", "64", "512", "1024", "4096", "65536"})
    public int size;

    private TrialCluster cluster;
    private LatencyTransport transport;

    @Setup(Level.Trial)
    public void setUp(final QnixSettings qnix)
    {
        final int max = 65536;
        switch (api)
        {
            case "floor" -> transport = FloorTransport.start(max);
            case "relay" -> transport = RelayTransport.start(max);
            case "tcp" -> transport = TcpTransport.start(max);
            case "aeron-ipc" -> transport = AeronIpcTransport.start(max);
            case "qnix", "qnix-send" ->
            {
                cluster = qnix.cluster();
                transport = QnixTransport.start(cluster.name(), "0-0", "1-0", qnix.doorbellWait(), "qnix".equals(api),
                    max);
            }
            case "vipl", "vipl-rdma" ->
            {
                cluster = qnix.cluster();
                transport = ViplTransport.start(cluster.name(), "0-0", "1-0", qnix.doorbellWait(), "vipl-rdma".equals(api),
                    max);
            }
            default -> throw new IllegalArgumentException("api " + api);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        CloseHelper.closeAll(transport, cluster);
    }

    @Benchmark
    @OperationsPerInvocation(2)
    public void oneWay()
    {
        transport.roundTrip(size);
    }
}
