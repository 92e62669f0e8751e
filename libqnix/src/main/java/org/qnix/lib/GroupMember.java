package org.qnix.lib;

import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;

/** A member of a process group as the NIC's Group and Name Tables know it. */
public record GroupMember(ProcessName name, NicCoordinates node)
{
    public String toString()
    {
        return name + "@" + node;
    }
}
