package org.qnix.abi;

/**
 * The position of a NIC in the 2D torus, the NIC identifier of thesis section 3.3.3 (NIC Table). On
 * the wire it is two bytes: x in the high byte, y in the low byte (DESIGN.md 3.3). Node names in files
 * and on the command line are {@code X-Y}.
 *
 * <pre>{@code
 * NicCoordinates node = NicCoordinates.parse("1-0");
 * short onWire = (short)node.packed();
 * }</pre>
 */
public record NicCoordinates(int x, int y)
{
    public NicCoordinates
    {
        if (x < 0 || x > 0xFF || y < 0 || y > 0xFF)
        {
            throw new IllegalArgumentException("NIC coordinates " + x + "-" + y + " out of range 0-255");
        }
    }

    /** @return the 16-bit wire form: x in the high byte, y in the low byte. */
    public int packed()
    {
        return (x << 8) | y;
    }

    public static NicCoordinates unpack(final int packed)
    {
        return new NicCoordinates((packed >> 8) & 0xFF, packed & 0xFF);
    }

    /**
     * @param text {@code X-Y}, e.g. {@code 1-0}.
     * @return the coordinates.
     */
    public static NicCoordinates parse(final String text)
    {
        final String[] parts = text.trim().split("-");
        if (2 != parts.length)
        {
            throw new IllegalArgumentException("node " + text + ": expected X-Y, e.g. 1-0");
        }
        try
        {
            return new NicCoordinates(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("node " + text + ": expected X-Y, e.g. 1-0", ex);
        }
    }

    /** @return the node index in a torus of the given width: nodes are numbered row by row. */
    public int index(final int torusWidth)
    {
        return y * torusWidth + x;
    }

    public static NicCoordinates ofIndex(final int index, final int torusWidth)
    {
        return new NicCoordinates(index % torusWidth, index / torusWidth);
    }

    /** @return the wire form of the node with an index, without making an object (the data path). */
    public static int packedOfIndex(final int index, final int torusWidth)
    {
        return ((index % torusWidth) << 8) | (index / torusWidth);
    }

    /** @return the node index of a wire form, without making an object (the data path). */
    public static int indexOfPacked(final int packed, final int torusWidth)
    {
        return (packed & 0xFF) * torusWidth + ((packed >> 8) & 0xFF);
    }

    /** @return hops between two NICs on a torus (wrap-around in both dimensions). */
    public int torusDistance(final NicCoordinates other, final int width, final int height)
    {
        final int dx = Math.abs(x - other.x);
        final int dy = Math.abs(y - other.y);
        return Math.min(dx, width - dx) + Math.min(dy, height - dy);
    }

    /** @return {@code node-X-Y}, the node's directory name. */
    public String directoryName()
    {
        return "node-" + x + "-" + y;
    }

    // equals and hashCode are written out, as ProcessName's are: a record's generated ones bootstrap
    // java.lang.invoke the first time they run, which in a firmware JVM is on the NICs' duty cycle at the
    // first registration (docs/performance/first-traffic.txt).
    public boolean equals(final Object other)
    {
        return other instanceof NicCoordinates node && x == node.x && y == node.y;
    }

    public int hashCode()
    {
        return packed(); // one int per node: the constructor keeps x and y within a byte each
    }

    public String toString()
    {
        return x + "-" + y;
    }
}
