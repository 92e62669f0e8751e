package org.qnix.abi;

/**
 * Sizes as a person reads them in a message: {@code 64 MiB}, {@code 1.3 GiB}, {@code 512 bytes}.
 *
 * <pre>{@code
 * String text = Sizes.describe(params.hostMemoryBytes());   // "256 MiB"
 * }</pre>
 */
public final class Sizes
{
    /**
     * Bytes of a cache line on the machines this runs on (x86-64, most ARM64): shared words that
     * different parties write are kept this far apart.
     */
    public static final int CACHE_LINE = 64;

    private static final String[] UNITS = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };

    private Sizes()
    {
    }

    /** @return the size in the largest binary unit it reaches, with one decimal unless it is whole. */
    public static String describe(final long bytes)
    {
        if (bytes < 1024)
        {
            return bytes + " bytes";
        }
        int unit = 0;
        double value = bytes / 1024.0;
        while (value >= 1024 && unit < UNITS.length - 1)
        {
            value /= 1024;
            unit++;
        }
        final String number = value == Math.rint(value) ? Long.toString((long)value) :
            String.format(java.util.Locale.ROOT, "%.1f", value);
        return number + " " + UNITS[unit];
    }
}
