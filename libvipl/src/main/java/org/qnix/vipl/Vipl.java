package org.qnix.vipl;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;

/**
 * The VI Provider Library's entry point ({@code VipOpenNic}). A NIC is named by its torus coordinates,
 * {@code "X-Y"}, or as a device, {@code "/dev/qnix/X-Y"}; the cluster is {@code $QNIX_CLUSTER} (or
 * "default") unless named.
 *
 * <pre>{@code
 * try (ViplNic nic = Vipl.openNic("1-0"))
 * {
 *     ProtectionTag ptag = nic.createPtag();
 *     ViplMemory memory = nic.allocate(64 * 1024);
 *     MemoryRegion region = nic.registerMem(memory, 0, memory.length(), new MemoryAttributes(ptag, false, false));
 *     CompletionQueue cq = nic.createCq(64);
 *     Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, 65536, ptag, false, false), cq, cq);
 * }   // closing the NIC releases everything it holds
 * }</pre>
 */
public final class Vipl
{
    /** The device directory VIPL programs of the era named NICs by. */
    public static final String DEVICE_PREFIX = "/dev/qnix/";

    private Vipl()
    {
    }

    /**
     * {@code VipOpenNic} on the cluster named by {@code $QNIX_CLUSTER}, or "default".
     *
     * <pre>{@code
     * try (ViplNic nic = Vipl.openNic("/dev/qnix/1-0")) { ... }
     * }</pre>
     */
    public static ViplNic openNic(final String device)
    {
        return openNic(device, ClusterDirectory.defaultClusterName());
    }

    /**
     * {@code VipOpenNic} on a named cluster.
     *
     * <pre>{@code
     * try (ViplNic nic = Vipl.openNic("0-0", "lab")) { ... }
     * }</pre>
     */
    public static ViplNic openNic(final String device, final String cluster)
    {
        if (null == device)
        {
            throw new ViplException(org.qnix.abi.ViplResult.INVALID_PARAMETER, "no NIC named");
        }
        final String name = device.startsWith(DEVICE_PREFIX) ? device.substring(DEVICE_PREFIX.length()) : device;
        final NicCoordinates node;
        try
        {
            node = NicCoordinates.parse(name);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ViplException(org.qnix.abi.ViplResult.INVALID_PARAMETER, "no NIC " + device + ": " +
                ex.getMessage(), ex);
        }
        return ViplNic.open(node, cluster);
    }
}
