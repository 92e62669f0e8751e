package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.firmware.NicCounters;

/**
 * 8 VIA processes on a 2x2 cluster, launched by {@code qnix run} (issue 14, "Must show"): four pairs
 * across neighbouring nodes, each pair three VIs (one per reliability level) playing ping-pong with
 * random operations (send, send with immediate data, RDMA write with immediate data), random sizes and
 * random VIs, from a fixed seed printed here ({@code -Dvipl.stress.seed=N} runs another). Each process
 * knows from the seed which message must come next and checks it arrived once, in order, whole; the
 * NICs count every receive and no drop.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplStressTest
{
    private static final int ROUNDS = 150;
    private static ClusterDirectory dir;

    @BeforeAll
    static void up() throws Exception
    {
        dir = TestClusters.up(TestClusters.uniqueName("vs"), 2, 2, "threads");
    }

    @AfterAll
    static void down() throws Exception
    {
        if (null != dir)
        {
            TestClusters.down(dir);
            dir = null;
        }
    }

    @Test
    void eightProcessesExchangeRandomOperationsEachDeliveredExactlyOnce() throws Exception
    {
        final long seed = Long.getLong("vipl.stress.seed", 20_261_124L);
        System.out.println("ViplStressTest seed " + seed + " (-Dvipl.stress.seed=" + seed + " repeats this run)");
        final String output = TestClusters.run(new ProgramLauncher(dir, 8, ViplStressWorker.class.getName(),
            List.of(Long.toString(seed), Integer.toString(ROUNDS))));
        assertEquals(8, output.lines().filter(l -> l.contains("OK stress rank") &&
            l.contains(ROUNDS + " messages from rank")).count(), output);
        final Map<String, Long> totals = TestClusters.assertNicsClean(dir, 4);
        // Every message took exactly one receive: ROUNDS each way and a hello each way, per pair.
        assertEquals(4L * 2 * (ROUNDS + 1), totals.get(NicCounters.RECEIVES_COMPLETED), "seed " + seed);
        assertEquals(0L, totals.get(NicCounters.VIA_MESSAGES_DROPPED), "seed " + seed);
    }
}
