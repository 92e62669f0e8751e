package org.qnix.bench;

import java.util.Arrays;

/**
 * The timed streams of one transport at one size, gathered over one or more passes of a run: MB/s of
 * each, whose median, lowest and highest make the report's row. Over several passes, each with its own
 * pair of JVMs, the min and max also cover what changes between pairs and over minutes.
 *
 * <pre>{@code
 * BandwidthSamples tcp64k = new BandwidthSamples("tcp", 65536, 8);
 * BandwidthRun.measure(tcp, 65536, 32L << 20, 5, 1_000_000_000L, tcp64k);
 * BandwidthResult row = tcp64k.result();
 * }</pre>
 */
public final class BandwidthSamples
{
    private final String api;
    private final int size;
    private final int window;
    private double[] mbPerS = new double[8];
    private int streams;
    private int messages;

    /** @param window the sends in flight the streams use. */
    public BandwidthSamples(final String api, final int size, final int window)
    {
        this.api = api;
        this.size = size;
        this.window = window;
    }

    /** One timed stream of {@code messages} messages of the size. */
    void record(final int messages, final double mbPerSecond)
    {
        if (streams == mbPerS.length)
        {
            mbPerS = Arrays.copyOf(mbPerS, 2 * streams);
        }
        mbPerS[streams++] = mbPerSecond;
        this.messages = messages;
    }

    /** @throws IllegalStateException when no stream was recorded. */
    public BandwidthResult result()
    {
        if (0 == streams)
        {
            throw new IllegalStateException(api + " " + size + " bytes: no stream measured");
        }
        final double[] sorted = Arrays.copyOf(mbPerS, streams);
        Arrays.sort(sorted);
        return new BandwidthResult(api, size, messages, window, sorted[streams / 2], sorted[0], sorted[streams - 1]);
    }
}
