package org.qnix.daemon;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;

/**
 * What the daemon, as the driver of every node, knows about the processes that asked to register:
 * enough to refuse a duplicate name or an inconsistent group before touching any NIC, and to say who
 * is missing when a group does not complete. The NICs' Name and Group Tables remain the truth for
 * communication. It also holds VIA's connection manager and the processes' placement on the NICs' CPU,
 * which are cluster-wide for the same reason.
 */
final class ClusterRegistry
{
    /** A process admitted by a node's driver. */
    record Admitted(ProcessName name, NicCoordinates node, int index, long osPid, int group, int groupSize)
    {
    }

    private final Map<ProcessName, Admitted> byName = new LinkedHashMap<>();
    private final ViaConnections viaConnections = new ViaConnections();
    private final NicCpuPlacement placement;

    /** A registry of a cluster without a NICs' CPU: every process stays off it. */
    ClusterRegistry()
    {
        this(NicCpuPlacement.none());
    }

    ClusterRegistry(final NicCpuPlacement placement)
    {
        this.placement = placement;
    }

    /** @return VIA's connection manager (issue 14): matching by (node, discriminator) across every node. */
    ViaConnections viaConnections()
    {
        return viaConnections;
    }

    /** @return which registered processes run on the NICs' CPU (issue 13). */
    NicCpuPlacement placement()
    {
        return placement;
    }

    /**
     * @return null if admitted, else the reason for refusing.
     */
    synchronized String admit(final Admitted process)
    {
        final Admitted existing = byName.get(process.name());
        if (null != existing)
        {
            return "name " + process.name() + " is already registered on node " + existing.node() +
                " by pid " + existing.osPid();
        }
        int members = 0;
        for (final Admitted other : byName.values())
        {
            if (other.group() == process.group())
            {
                if (other.groupSize() != process.groupSize())
                {
                    return "group " + process.group() + " has size " + other.groupSize() + " (set by " +
                        other.name() + "), not " + process.groupSize();
                }
                members++;
            }
        }
        if (members >= process.groupSize())
        {
            return "group " + process.group() + " already has all " + process.groupSize() + " members";
        }
        byName.put(process.name(), process);
        return null;
    }

    synchronized void remove(final ProcessName name, final NicCoordinates node, final int index)
    {
        final Admitted existing = byName.get(name);
        if (null != existing && existing.node().equals(node) && existing.index() == index)
        {
            byName.remove(name);
        }
    }

    synchronized List<Admitted> members(final int group)
    {
        final List<Admitted> result = new ArrayList<>();
        for (final Admitted process : byName.values())
        {
            if (process.group() == group)
            {
                result.add(process);
            }
        }
        result.sort(Comparator.comparingInt((Admitted a) -> a.name().ai()).thenComparingInt(a -> a.name().pi()));
        return result;
    }

    /**
     * @return the members of an application group that have not asked to register: names are
     * (group, PI) for PI in [0, size) when the group is an application (AI) group (thesis 3.2).
     */
    synchronized List<ProcessName> missing(final int group, final int groupSize)
    {
        final List<ProcessName> result = new ArrayList<>();
        for (int pi = 0; pi < groupSize; pi++)
        {
            final ProcessName name = new ProcessName(group, pi);
            final Admitted admitted = byName.get(name);
            if (null == admitted || admitted.group() != group)
            {
                result.add(name);
            }
        }
        return result;
    }
}
