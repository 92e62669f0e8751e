package org.qnix.vipl;

import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViTableEntry;
import org.qnix.host.ViaPeer;

/**
 * The other end of a connection as {@code VipConnectWait} and {@code VipConnectRequest} report it: its
 * NIC and its VI's attributes (the ptag is the peer's own business).
 */
public record RemoteVi(NicCoordinates node, Reliability reliability, int maxTransferSize, boolean enableRdmaWrite,
    boolean enableRdmaRead)
{
    static RemoteVi of(final ViaPeer peer)
    {
        return new RemoteVi(NicCoordinates.unpack(peer.node()), Reliability.of(peer.reliability()), peer.maxTransfer(),
            0 != (peer.attributes() & ViTableEntry.ATTRIBUTE_RDMA_WRITE),
            0 != (peer.attributes() & ViTableEntry.ATTRIBUTE_RDMA_READ));
    }
}
