package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.bench.LatencyRun;
import org.qnix.bench.QnixTransport;
import org.qnix.host.DoorbellWait;

/**
 * The QNIX transport of the benchmarks starts its peer JVM on another node, measures Send_Short and
 * Send sizes with every way of waiting, and leaves nothing registered. No time is asserted.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class QnixTransportSmokeTest
{
    @Test
    void measuresEverySizeWithEveryDoorbellWaitAndLeavesNothingBehind() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("q"), 2, 1, "processes");
        try
        {
            for (final DoorbellWait wait : DoorbellWait.values())
            {
                try (QnixTransport qnix = QnixTransport.start(dir.name(), "0-0", "1-0", wait, true, 65536))
                {
                    for (final int size : new int[] {0, 1024, 1025, 65536})
                    {
                        final Histogram h = LatencyRun.measure(qnix, size, 5, 20);
                        assertEquals(20, h.getTotalCount(), qnix.name() + " at " + size);
                    }
                }
                TestClusters.await("both benchmark processes to de-register",
                    () -> ClusterStatus.read(dir).processes().isEmpty());
            }
            TestClusters.assertNicsClean(dir, 2);
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
