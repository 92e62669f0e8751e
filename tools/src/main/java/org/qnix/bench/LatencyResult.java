package org.qnix.bench;

import org.HdrHistogram.Histogram;

/** One row of a latency report: a transport at a size, its one-way percentiles in nanoseconds. */
public record LatencyResult(String api, int size, long count, long p50, long p99, long p999, long max)
{
    public static LatencyResult of(final String api, final int size, final Histogram oneWay)
    {
        return new LatencyResult(api, size, oneWay.getTotalCount(), oneWay.getValueAtPercentile(50),
            oneWay.getValueAtPercentile(99), oneWay.getValueAtPercentile(99.9), oneWay.getMaxValue());
    }
}
