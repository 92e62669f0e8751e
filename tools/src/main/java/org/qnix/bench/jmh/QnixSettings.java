package org.qnix.bench.jmh;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.qnix.host.DoorbellWait;

/**
 * The QNIX settings every benchmark shares, as JMH parameters: how the programs wait on doorbells,
 * and the firmware's placement and idle strategy of the trial's cluster. A benchmark's trial setup
 * takes it as an argument.
 *
 * <pre>{@code
 * ./qnix bench jmh -- BarrierBenchmark -p wait=yield -p firmware=threads -p idle=yield
 * }</pre>
 */
@State(Scope.Benchmark)
public class QnixSettings
{
    /** How QNIX programs wait for a doorbell: busy, yield, backoff or sleep (futex). */
    @Param({"sleep"})
    public String wait;

    /** QNIX firmware placement: shared (the default of cluster up), processes or threads. */
    @Param({"shared"})
    public String firmware;

    /** QNIX firmware idle strategy: backoff, yield or busy. */
    @Param({"backoff"})
    public String idle;

    DoorbellWait doorbellWait()
    {
        return DoorbellWait.parse(wait);
    }

    /** @return a 2x2 cluster with this firmware placement and idle strategy, up until closed. */
    TrialCluster cluster()
    {
        return TrialCluster.up(firmware, idle);
    }
}
