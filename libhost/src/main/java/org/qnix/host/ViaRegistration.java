package org.qnix.host;

/**
 * The driver's VIA_REGISTERED reply (issue 14): the VIA process's Process Table entry, and where its
 * VNI (for the Command Queue), Host Process Structures and VIA Process Structures are, to map.
 *
 * @param structuresAddress the VIA Process Structures' offset in {@code host.mem}.
 * @param structuresPages   their pages, contiguous.
 * @param onNicCpu          whether the driver advises the process to run on the NICs' CPU (issue 13).
 */
public record ViaRegistration(int index, int nicPid, long vniAddress, int vniLength, long hpsAddress,
    long structuresAddress, int structuresPages, boolean onNicCpu)
{
}
