package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.ShortFlow;
import org.qnix.firmware.NicCounters;

/**
 * Eager short messages (thesis 3.7) under load, across JVMs: 8 processes on a 2x2 cluster with the
 * default short flow, random lengths either side of the short threshold, random peers and tags
 * ({@link EagerShortStressWorker}). Every message arrives once and intact, short ones of one sender
 * and tag in the order they were sent, and the NICs end clean.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class EagerShortStressTest
{
    @Test
    void randomShortAndLongMessagesArriveExactlyOnceIntactAndInOrder() throws Exception
    {
        final long seed = Long.getLong("qnix.stress.seed", 20_261_129L);
        final int perRank = 2000;
        System.out.println("eager stress: seed " + seed + " (rerun with -Dqnix.stress.seed=" + seed + "), 8 processes, " +
            8 * perRank + " messages");
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("e"), 2, 2, "processes");
        try
        {
            assertEquals(ShortFlow.EAGER, ClusterProperties.read(dir.propertiesFile()).orElseThrow().parameters().shortFlow(),
                "eager is the default, kept in cluster.properties");
            final String output = TestClusters.run(new ProgramLauncher(dir, 8, EagerShortStressWorker.class.getName(),
                List.of(Long.toString(seed), Integer.toString(perRank))));
            assertEquals(8, output.lines().filter(l -> l.contains("OK eager stress rank")).count(), output);
            final Map<String, Long> totals = TestClusters.assertNicsClean(dir, 4);
            assertEquals(8L * perRank, totals.get(NicCounters.RECEIVES_COMPLETED), "receives completed, all NICs");
            final long eager = totals.get(NicCounters.EAGER_SHORTS_SENT);
            assertTrue(eager > 8L * perRank / 4, "about half the messages are short: " + eager + " eager");
            assertEquals(eager, totals.get(NicCounters.EAGER_SHORTS_DELIVERED) + totals.get(NicCounters.EAGER_SHORTS_STAGED) +
                totals.get(NicCounters.EAGER_SHORTS_FELL_BACK), "every Eager_Short answered once");
            System.out.println("eager stress: " + eager + " eager, " + totals.get(NicCounters.EAGER_SHORTS_DELIVERED) +
                " delivered, " + totals.get(NicCounters.EAGER_SHORTS_STAGED) + " staged, " +
                totals.get(NicCounters.EAGER_SHORTS_FELL_BACK) + " fell back");
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void clusterUpShortFlowPermissionKeepsTheThesisProtocol() throws Exception
    {
        final String name = TestClusters.uniqueName("p");
        final ClusterDirectory dir = ClusterDirectory.of(name);
        try
        {
            final CliResult up = CliResult.run("cluster", "up", "--name", name, "--torus", "2x1", "--firmware", "threads",
                "--host-mem", "64M", "--short-flow", "permission");
            assertEquals(QnixCommand.OK, up.exit, up.out + up.err);
            assertTrue(up.out.contains("short messages permission"), up.out);
            assertEquals(ShortFlow.PERMISSION,
                ClusterProperties.read(dir.propertiesFile()).orElseThrow().parameters().shortFlow());
            // No order check: the permission protocol lets a message deferred for staging room be
            // overtaken by a later one (docs/IMPLEMENTATION.md, "Point-to-point messaging", Ordering);
            // with a receiver slower than its sender the quota defers some here.
            final String output = TestClusters.run(new ProgramLauncher(dir, 2, EagerShortStressWorker.class.getName(),
                List.of("7", "200", "any-order")));
            assertEquals(2, output.lines().filter(l -> l.contains("OK eager stress rank")).count(), output);
            final Map<String, Long> totals = TestClusters.assertNicsClean(dir, 2);
            assertEquals(0L, totals.get(NicCounters.EAGER_SHORTS_SENT), "the firmware read the parameter");
            assertTrue(totals.get(NicCounters.PERMISSION_REQUESTS_RECEIVED) >= 400L, "every message asked");
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
