package org.qnix.bench;

/**
 * One bandwidth measurement of one transport at one size: warm-up streams for at least {@code warmupNs}
 * (a quarter stream at least), then {@code repeats} timed streams of about {@code bytes} bytes each.
 * Payload bytes per second, as DESIGN.md 7 says.
 *
 * <pre>{@code
 * BandwidthResult r = BandwidthRun.measure(tcp, 65536, 64L << 20, 8, 5, 1_000_000_000L);
 * }</pre>
 */
public final class BandwidthRun
{
    private BandwidthRun()
    {
    }

    public static BandwidthResult measure(final BandwidthTransport transport, final int size, final long bytes,
        final int window, final int repeats, final long warmupNs)
    {
        final BandwidthSamples samples = new BandwidthSamples(transport.name(), size, window);
        measure(transport, size, bytes, window, repeats, warmupNs, samples);
        return samples.result();
    }

    /** One pass of a measurement: the warm-up, then {@code repeats} timed streams recorded into {@code into}. */
    public static void measure(final BandwidthTransport transport, final int size, final long bytes,
        final int window, final int repeats, final long warmupNs, final BandwidthSamples into)
    {
        if (size < 1 || size > transport.maxSize())
        {
            throw new IllegalArgumentException(size + " bytes: " + transport.name() + " takes 1.." + transport.maxSize());
        }
        final int messages = (int)Math.max(2L * window, Math.min(Integer.MAX_VALUE, bytes / size));
        final long warmupEnd = System.nanoTime() + warmupNs;
        do
        {
            transport.stream(size, Math.max(window, messages / 4), window);
        }
        while (System.nanoTime() - warmupEnd < 0);
        for (int r = 0; r < Math.max(1, repeats); r++)
        {
            final long start = System.nanoTime();
            transport.stream(size, messages, window);
            final long elapsed = Math.max(1, System.nanoTime() - start);
            into.record(messages, (double)size * messages / elapsed * 1e3);
        }
    }
}
