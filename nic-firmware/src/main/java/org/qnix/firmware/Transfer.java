package org.qnix.firmware;

import org.qnix.abi.PacketHeader;
import org.qnix.abi.PermissionRequestFlyweight;
import org.qnix.abi.ProcessTableLayout;

/**
 * An incoming message this NIC has granted permission for: a Receive Table entry (thesis 3.3.3,
 * Figure 6). It is either attached to a posted receive (data goes straight to the user's buffer
 * through the receive's Descriptor Map) or staged (data goes into NIC managed memory until the
 * receive is posted, DESIGN.md 8, item 4). Identified on the wire by its handle, the index in the
 * {@link TransferTable}, which the data packets carry in their Context Tag.
 */
final class Transfer
{
    final int handle;

    boolean active;
    int receiverIndex;
    int sourceNode;
    int senderPid;
    long operationId;
    int senderAi;
    int senderPi;
    int tag;
    int length;
    int firstPacketLength;
    int packets;
    /** Packets arrive in order on the wire, so the arrived ones are the prefix up to this count. */
    int packetsArrived;
    /** A receive page stopped being the receiver's locked memory: nothing more is written. */
    boolean refused;
    /** The posted receive, or null while staged. */
    ReceiveOperation receive;
    /** Staging space in NIC managed memory: offset from its start, and bytes reserved (0 = none). */
    long stagingOffset;
    int stagingLength;
    /** While staged: the whole pages of managed memory it counts against its receiver's quota. */
    long quotaBytes;

    Transfer previous;
    Transfer next;

    Transfer(final int handle)
    {
        this.handle = handle;
    }

    /**
     * Permission granted for the message {@code request} describes, to the process of Process Table
     * entry {@code receiverIndex}: nothing has arrived yet.
     *
     * @param stagingOffset where in managed memory it is staged, if {@code stagingLength} > 0.
     */
    void grant(final int receiverIndex, final int sourceNode, final PermissionRequestFlyweight request,
        final long stagingOffset, final int stagingLength)
    {
        active = true;
        this.receiverIndex = receiverIndex;
        this.sourceNode = sourceNode;
        senderPid = request.senderPid();
        operationId = request.operationId();
        senderAi = request.senderAi();
        senderPi = request.senderPi();
        tag = request.tag();
        length = request.messageLength();
        firstPacketLength = request.firstPacketLength();
        packets = request.packets();
        packetsArrived = 0;
        refused = false;
        receive = null;
        this.stagingOffset = stagingOffset;
        this.stagingLength = stagingLength;
    }

    /** @return true if a packet or Transfer_Abort with these ids belongs to this transfer. */
    boolean isFrom(final int fromNode, final int fromPid, final int toPid)
    {
        return active && sourceNode == fromNode && senderPid == fromPid &&
            ProcessTableLayout.nicPid(receiverIndex) == toPid;
    }

    /** RX step 2: the next packet in order, of the length its place in the message gives it. */
    boolean expects(final PacketHeader header, final int pageSize)
    {
        final int packet = header.counter();
        return packet == packetsArrived && packet < packets &&
            header.packetLength() == MessageGeometry.packetLength(packet, length, firstPacketLength, pageSize);
    }

    /** From now on the data goes to {@code op}'s buffer through its Descriptor Map. */
    void attach(final ReceiveOperation op)
    {
        receive = op;
    }

    boolean complete()
    {
        return packetsArrived >= packets;
    }

    public String toString()
    {
        return "Transfer{handle " + handle + " from (" + senderAi + "," + senderPi + ") tag " + tag + " len " + length +
            " packets " + packetsArrived + "/" + packets + (null == receive ? " staged" : " direct") + "}";
    }
}
