package org.qnix.bench;

/** One row of a bandwidth report: a transport at a size, MB/s (10^6 bytes) over the repeats. */
public record BandwidthResult(String api, int size, int messages, int window, double median, double min, double max)
{
}
