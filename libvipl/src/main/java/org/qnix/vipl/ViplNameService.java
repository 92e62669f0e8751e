package org.qnix.vipl;

import java.util.ArrayList;
import java.util.List;

import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplResult;

/**
 * The VIPL's name service ({@code VipNSGetHostByName}, {@code VipNSGetHostByAddr}) and auto-discovery
 * ({@code VipQuerySystemManagementInfo}) over one cluster: a node's name is its torus coordinates,
 * {@code "X-Y"} or {@code "node-X-Y"}, and its network address those coordinates with an empty
 * discriminator. Nothing is looked up beyond the cluster's parameters, so it needs no open NIC and is
 * thread safe; {@link ViplNic} answers its name-service calls with it.
 *
 * <pre>{@code
 * ViplNameService names = new ViplNameService("default", params);
 * ViplAddress server = names.hostByName("node-1-0");
 * String name = names.hostByAddress(server);                          // "node-1-0"
 * }</pre>
 */
final class ViplNameService
{
    private static final String NODE_PREFIX = "node-";

    private final String clusterName;
    private final ClusterParameters params;

    ViplNameService(final String clusterName, final ClusterParameters params)
    {
        this.clusterName = clusterName;
        this.params = params;
    }

    /** @throws ViplException {@code ERROR_NAMESERVICE} for a name that is no node of the cluster. */
    ViplAddress hostByName(final String name)
    {
        if (null == name)
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "no name");
        }
        final String coordinates = name.startsWith(NODE_PREFIX) ? name.substring(NODE_PREFIX.length()) : name;
        final NicCoordinates host;
        try
        {
            host = NicCoordinates.parse(coordinates);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ViplException(ViplResult.ERROR_NAMESERVICE, "no host '" + name + "' in cluster '" + clusterName +
                "': names are X-Y or node-X-Y");
        }
        checkInTorus(host, name);
        return new ViplAddress(host, new byte[0]);
    }

    /** @throws ViplException {@code ERROR_NAMESERVICE} for an address of no node of the cluster. */
    String hostByAddress(final ViplAddress address)
    {
        if (null == address)
        {
            throw new ViplException(ViplResult.INVALID_PARAMETER, "no address");
        }
        checkInTorus(address.node(), address.node().toString());
        return address.node().directoryName();
    }

    /** @return every node's address, unmodifiable, in the order of the nodes' indices ({@code y * width + x}). */
    List<ViplAddress> hosts()
    {
        final List<ViplAddress> hosts = new ArrayList<>(params.nodeCount());
        for (int i = 0; i < params.nodeCount(); i++)
        {
            hosts.add(new ViplAddress(NicCoordinates.ofIndex(i, params.torusWidth()), new byte[0]));
        }
        return List.copyOf(hosts);
    }

    private void checkInTorus(final NicCoordinates host, final String name)
    {
        if (!params.hasNode(host))
        {
            throw new ViplException(ViplResult.ERROR_NAMESERVICE, "no host '" + name + "' in the " + params.torus() +
                " torus of cluster '" + clusterName + "'");
        }
    }
}
