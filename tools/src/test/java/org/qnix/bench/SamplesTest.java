package org.qnix.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The samples of several passes merge into one report row: percentiles over all, noise over every part. */
class SamplesTest
{
    @Test
    void latencyPartsOfEveryPassMakeTheNoiseAndTheirSamplesThePercentiles()
    {
        final LatencySamples samples = new LatencySamples("floor", 64);
        // Pass 1: a fast pair of JVMs, two parts at 70 ns; pass 2: a slow pair, one part at 300 ns.
        for (int i = 0; i < 100; i++)
        {
            samples.record(70);
        }
        samples.endPart();
        for (int i = 0; i < 100; i++)
        {
            samples.record(70);
        }
        samples.endPart();
        samples.endPart();
        for (int i = 0; i < 100; i++)
        {
            samples.record(300);
        }
        samples.endPart();
        final LatencyResult row = samples.result();
        assertEquals(300, row.count());
        assertEquals(70, row.p50());
        assertEquals(70, row.p50Low());
        assertEquals(300, row.p50High());
        assertEquals(300, row.max());
    }

    @Test
    void bandwidthStreamsOfEveryPassMakeMedianMinAndMax()
    {
        final BandwidthSamples samples = new BandwidthSamples("tcp", 65536, 8);
        final double[] streams = {3000, 2900, 3100, 1200, 1300, 3050, 2950, 3020, 2980, 5000};
        for (final double mbPerS : streams)
        {
            samples.record(512, mbPerS);
        }
        final BandwidthResult row = samples.result();
        assertEquals(3000, row.median());
        assertEquals(1200, row.min());
        assertEquals(5000, row.max());
        assertEquals(512, row.messages());
        assertEquals(8, row.window());
    }

    @Test
    void aBandwidthRowNeedsAStream()
    {
        assertThrows(IllegalStateException.class, () -> new BandwidthSamples("qnix", 4096, 8).result());
    }
}
