package org.qnix.vipl;

import java.util.Arrays;

import org.qnix.abi.NicCoordinates;

/**
 * A VIA network address ({@code VIP_NET_ADDRESS}): the host address, here a NIC's torus coordinates,
 * and a discriminator that lets a server and its clients agree on an endpoint, like a port (at most
 * {@link NicAttributes#maxDiscriminatorLength()} bytes).
 *
 * <pre>{@code
 * ViplAddress server = new ViplAddress(NicCoordinates.parse("1-0"), "echo".getBytes(StandardCharsets.US_ASCII));
 * }</pre>
 */
public record ViplAddress(NicCoordinates node, byte[] discriminator)
{
    public ViplAddress
    {
        discriminator = discriminator.clone();
    }

    /**
     * @return a copy of the discriminator.
     *
     * <pre>{@code
     * String key = new String(address.discriminator(), StandardCharsets.US_ASCII);
     * }</pre>
     */
    public byte[] discriminator()
    {
        return discriminator.clone();
    }

    public boolean equals(final Object o)
    {
        return o instanceof ViplAddress other && node.equals(other.node) && Arrays.equals(discriminator, other.discriminator);
    }

    public int hashCode()
    {
        return 31 * node.hashCode() + Arrays.hashCode(discriminator);
    }

    public String toString()
    {
        return node + "/" + Arrays.toString(discriminator);
    }
}
