package org.qnix.bench;

import org.HdrHistogram.Histogram;

/**
 * One row of a latency report: a transport at a size, its one-way percentiles in nanoseconds.
 *
 * @param p50Low  the lowest median of the parts the run was cut into (its noise), or p50.
 * @param p50High the highest median of those parts, or p50.
 */
public record LatencyResult(String api, int size, long count, long p50, long p99, long p999, long max, long p50Low,
    long p50High)
{
    /** @return the row of a run not cut into parts: its noise is unknown, low and high are the p50. */
    public static LatencyResult of(final String api, final int size, final Histogram oneWay)
    {
        final long p50 = oneWay.getValueAtPercentile(50);
        return new LatencyResult(api, size, oneWay.getTotalCount(), p50, oneWay.getValueAtPercentile(99),
            oneWay.getValueAtPercentile(99.9), oneWay.getMaxValue(), p50, p50);
    }
}
