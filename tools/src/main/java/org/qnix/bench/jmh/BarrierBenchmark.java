package org.qnix.bench.jmh;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.CloseHelper;
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
import org.qnix.bench.BarrierGroup;

/**
 * QNIX barrier latency on 2 and 4 processes, one per node of a 2x2 cluster, the other members in peer
 * JVMs doing back-to-back barriers. Run with {@code ./qnix bench jmh}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class BarrierBenchmark
{
    @Param({"2", "4"})
    public int processes;

    private TrialCluster cluster;
    private BarrierGroup group;

    @Setup(Level.Trial)
    public void setUp(final QnixSettings qnix)
    {
        cluster = qnix.cluster();
        group = BarrierGroup.start(cluster.name(), List.of("0-0", "1-0", "0-1", "1-1").subList(0, processes),
            qnix.doorbellWait());
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        CloseHelper.closeAll(group, cluster);
    }

    @Benchmark
    public void barrier()
    {
        group.barrier();
    }
}
