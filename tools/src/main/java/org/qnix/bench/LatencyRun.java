package org.qnix.bench;

import org.HdrHistogram.Histogram;

/**
 * One latency measurement of one transport at one size: warm-up round trips, then measured ones, each
 * recorded as its one-way time (half the round trip) in nanoseconds, the convention of DESIGN.md 7.
 * The warm-up is a number of round trips and a minimum time: some paths only reach their steady state
 * after the JIT has compiled both sides (TCP over loopback here: about 9 us one way for its first
 * half second, about 30 us after, once the faster echo loop sleeps in {@code poll} more often).
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
    /** The measured round trips are cut into this many parts, whose medians show the noise. */
    public static final int CHUNKS = 5;

    private LatencyRun()
    {
    }

    public static Histogram measure(final LatencyTransport transport, final int size, final int warmup,
        final int iterations)
    {
        warmUp(transport, size, warmup, 0);
        return record(transport, size, iterations);
    }

    /**
     * The measurement as a report row, with its noise: the lowest and highest median of the
     * {@link #CHUNKS} consecutive parts of the measured round trips (JMH's iterations, in effect). With
     * fewer round trips than parts, some parts are empty and the noise comes from the others.
     *
     * @param warmupNs the warm-up goes on until both {@code warmup} round trips and this time are done.
     */
    public static LatencyResult measure(final LatencyTransport transport, final int size, final int warmup,
        final long warmupNs, final int iterations)
    {
        final LatencySamples samples = new LatencySamples(transport.name(), size);
        measure(transport, size, warmup, warmupNs, iterations, samples);
        return samples.result();
    }

    /**
     * One pass of a measurement: warm-up, then {@code iterations} round trips recorded into
     * {@code into} in {@link #CHUNKS} parts.
     */
    public static void measure(final LatencyTransport transport, final int size, final int warmup,
        final long warmupNs, final int iterations, final LatencySamples into)
    {
        warmUp(transport, size, warmup, warmupNs);
        int part = 0;
        for (int i = 0; i < iterations; i++)
        {
            final long start = System.nanoTime();
            transport.roundTrip(size);
            into.record(Math.max(1, (System.nanoTime() - start) / 2));
            // Part k ends at round trip (k + 1) * iterations / CHUNKS: parts differ by one at most.
            if (i + 1 == (int)((part + 1L) * iterations / CHUNKS))
            {
                into.endPart();
                part++;
            }
        }
        into.endPart();
    }

    private static Histogram record(final LatencyTransport transport, final int size, final int iterations)
    {
        final Histogram oneWay = new Histogram(LatencySamples.HIGHEST_NS, 3);
        for (int i = 0; i < iterations; i++)
        {
            final long start = System.nanoTime();
            transport.roundTrip(size);
            oneWay.recordValue(Math.max(1, (System.nanoTime() - start) / 2));
        }
        return oneWay;
    }

    /** Round trips, unmeasured, until both {@code rounds} and {@code minNs} are done. */
    public static void warmUp(final LatencyTransport transport, final int size, final int rounds, final long minNs)
    {
        if (size < 0 || size > transport.maxSize())
        {
            throw new IllegalArgumentException(size + " bytes: " + transport.name() + " takes 0.." + transport.maxSize());
        }
        final long end = System.nanoTime() + minNs;
        for (int i = 0; i < rounds || System.nanoTime() - end < 0; i++)
        {
            transport.roundTrip(size);
        }
    }
}
