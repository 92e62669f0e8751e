package org.qnix.vipl;

import java.util.Set;

/**
 * What {@link ViplNic#query()} reports ({@code VIP_NIC_ATTRIBUTES} of VIPL 1.0).
 *
 * @param name                   the device name, e.g. {@code "1-0"}.
 * @param hardwareVersion        the emulated NIC's version (its layout version).
 * @param providerVersion        this library's VIPL version (1.0 as 0x00010000).
 * @param nicAddress             the host address bytes: the NIC's torus coordinates (x, y).
 * @param threadSafe             calls may come from several threads (driver requests are serialised).
 * @param maxDiscriminatorLength the longest discriminator of a network address.
 * @param maxRegisterBytes       the most bytes registered in all, per NIC (a region is at most {@code maxRegisterBlockBytes}).
 * @param maxRegisterRegions     memory regions per NIC.
 * @param maxRegisterBlockBytes  the largest region: one allocation.
 * @param maxVi                  VIs one process may hold.
 * @param maxDescriptorsPerQueue descriptors posted and not completed per work queue.
 * @param maxSegmentsPerDesc     data segments per descriptor.
 * @param maxCq                  completion queues per NIC.
 * @param maxCqEntries           entries of one completion queue.
 * @param maxTransferSize        the largest message.
 * @param nativeMtu              the payload of one packet: a page.
 * @param maxPtags               protection tags one process may hold.
 * @param reliabilityLevels      the levels VIs may have.
 * @param rdmaReadSupport        the levels at which RDMA read is allowed.
 */
public record NicAttributes(String name, int hardwareVersion, int providerVersion, byte[] nicAddress,
    boolean threadSafe, int maxDiscriminatorLength, long maxRegisterBytes, int maxRegisterRegions,
    long maxRegisterBlockBytes, int maxVi, int maxDescriptorsPerQueue, int maxSegmentsPerDesc, int maxCq,
    int maxCqEntries, int maxTransferSize, int nativeMtu, int maxPtags, Set<Reliability> reliabilityLevels,
    Set<Reliability> rdmaReadSupport)
{
}
