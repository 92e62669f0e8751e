package org.qnix.abi;

/**
 * The cluster-wide name of a process: the pair (AI, PI) of thesis section 3.2, Application Identifier
 * and Process Identifier, both ints (DESIGN.md 8, item 7).
 *
 * <pre>{@code
 * ProcessName me = new ProcessName(7, 0);
 * long key = me.key();
 * }</pre>
 */
public record ProcessName(int ai, int pi)
{
    // equals and hashCode are written out, as NicCoordinates' are: a record's generated ones bootstrap
    // java.lang.invoke the first time they run, which in a firmware JVM is on the NICs' duty cycle at the
    // first registration (docs/performance/first-traffic.txt).
    public boolean equals(final Object other)
    {
        return other instanceof ProcessName name && ai == name.ai && pi == name.pi;
    }

    public int hashCode()
    {
        return 31 * ai + pi;
    }

    /** @return both ints in one long, for primitive maps. */
    public long key()
    {
        return ((long)ai << 32) | (pi & 0xFFFF_FFFFL);
    }

    public static ProcessName ofKey(final long key)
    {
        return new ProcessName((int)(key >> 32), (int)key);
    }

    public String toString()
    {
        return "(" + ai + "," + pi + ")";
    }
}
