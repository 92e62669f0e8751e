package org.qnix.bench;

import org.HdrHistogram.Histogram;

/**
 * One latency measurement of one transport at one size: warm-up round trips, then measured ones, each
 * recorded as its one-way time (half the round trip) in nanoseconds, the convention of DESIGN.md 7.
 *
 * <pre>{@code
 * try (LatencyTransport tcp = TcpTransport.start(4096))
 * {
 *     Histogram h = LatencyRun.measure(tcp, 64, 1_000, 10_000);
 *     System.out.println(h.getValueAtPercentile(50) + " ns one way");
 * }
 * }</pre>
 */
public final class LatencyRun
{
    /** Up to an hour, 3 significant digits. */
    private static final long HIGHEST_NS = 3_600_000_000_000L;

    private LatencyRun()
    {
    }

    public static Histogram measure(final LatencyTransport transport, final int size, final int warmup,
        final int iterations)
    {
        if (size < 0 || size > transport.maxSize())
        {
            throw new IllegalArgumentException(size + " bytes: " + transport.name() + " takes 0.." + transport.maxSize());
        }
        for (int i = 0; i < warmup; i++)
        {
            transport.roundTrip(size);
        }
        final Histogram oneWay = new Histogram(HIGHEST_NS, 3);
        for (int i = 0; i < iterations; i++)
        {
            final long start = System.nanoTime();
            transport.roundTrip(size);
            oneWay.recordValue(Math.max(1, (System.nanoTime() - start) / 2));
        }
        return oneWay;
    }
}
