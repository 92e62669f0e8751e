package org.qnix.host;

/**
 * The driver's REGISTERED reply: where the process's Virtual Network Interface and Host Process
 * Structures page are, for the process to map (thesis 3.4, steps 3-5).
 *
 * @param index      the Process Table index.
 * @param nicPid     the NIC PID (index + 1).
 * @param vniAddress the VNI's offset in {@code nic.sdram}.
 * @param vniLength  the VNI's length.
 * @param hpsAddress the Host Process Structures page's offset in {@code host.mem}.
 * @param onNicCpu   whether the driver advises the process to run on the NICs' CPU (issue 13), else off it.
 */
public record Registration(int index, int nicPid, long vniAddress, int vniLength, long hpsAddress, boolean onNicCpu)
{
}
