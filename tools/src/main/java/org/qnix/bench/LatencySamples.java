package org.qnix.bench;

import org.HdrHistogram.Histogram;

/**
 * The one-way times of one transport at one size, gathered over one or more passes of a run, and the
 * medians of the parts they were measured in. A part is a fifth of one pass ({@link LatencyRun#CHUNKS}):
 * its median is one sample of the noise, and the lowest and highest of them are the noise the report
 * gives. Over several passes, each with its own pair of JVMs, the noise also covers what changes between
 * pairs and over minutes (on this VM the floor moved between 0.06 and 0.33 us from one pair to the next).
 *
 * <pre>{@code
 * LatencySamples floor64 = new LatencySamples("floor", 64);
 * for (int pass = 0; pass < 3; pass++)
 * {
 *     try (LatencyTransport floor = FloorTransport.start(64))
 *     {
 *         LatencyRun.measure(floor, 64, 500, 1_000_000_000L, 2_000, floor64);
 *     }
 * }
 * LatencyResult row = floor64.result();
 * }</pre>
 */
public final class LatencySamples
{
    /** Up to an hour, 3 significant digits. */
    static final long HIGHEST_NS = 3_600_000_000_000L;

    private final String api;
    private final int size;
    private final Histogram oneWay = new Histogram(HIGHEST_NS, 3);
    private final Histogram part = new Histogram(HIGHEST_NS, 3);
    private long lowP50 = Long.MAX_VALUE;
    private long highP50 = 0;

    public LatencySamples(final String api, final int size)
    {
        this.api = api;
        this.size = size;
    }

    /** @param oneWayNs half a round trip, at least 1. */
    void record(final long oneWayNs)
    {
        oneWay.recordValue(oneWayNs);
        part.recordValue(oneWayNs);
    }

    /** Ends the current part: its median joins the noise. An empty part adds nothing. */
    void endPart()
    {
        if (part.getTotalCount() > 0)
        {
            lowP50 = Math.min(lowP50, part.getValueAtPercentile(50));
            highP50 = Math.max(highP50, part.getValueAtPercentile(50));
            part.reset();
        }
    }

    /** @return the percentiles over every sample, with the lowest and highest part median as the noise. */
    public LatencyResult result()
    {
        final LatencyResult all = LatencyResult.of(api, size, oneWay);
        return new LatencyResult(api, size, all.count(), all.p50(), all.p99(), all.p999(), all.max(),
            Math.min(lowP50, all.p50()), Math.max(highP50, all.p50()));
    }
}
