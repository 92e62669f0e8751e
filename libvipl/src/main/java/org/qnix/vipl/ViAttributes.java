package org.qnix.vipl;

/**
 * A VI's attributes ({@code VIP_VI_ATTRIBUTES}): reliability level, the largest transfer, its ptag and
 * the RDMA operations it may take part in. The QoS of VIA 1.0 has no meaning on the emulated NIC.
 *
 * <pre>{@code
 * Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, 65536, ptag, true, false), sendCq, null);
 * }</pre>
 */
public record ViAttributes(Reliability reliability, int maxTransferSize, ProtectionTag ptag, boolean enableRdmaWrite,
    boolean enableRdmaRead)
{
    public ViAttributes
    {
        if (null == reliability)
        {
            throw new ViplException(org.qnix.abi.ViplResult.INVALID_RELIABILITY_LEVEL, "a VI needs a reliability level");
        }
        if (null == ptag)
        {
            throw new ViplException(org.qnix.abi.ViplResult.INVALID_PTAG, "a VI needs a protection tag");
        }
    }
}
