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
