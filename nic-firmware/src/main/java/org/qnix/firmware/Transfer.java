package org.qnix.firmware;

/**
 * An incoming message this NIC has granted permission for: a Receive Table entry (thesis 3.3.3,
 * Figure 6). It is either attached to a posted receive (data goes straight to the user's buffer
 * through the receive's Descriptor Map) or staged (data goes into NIC managed memory until the
 * receive is posted, DESIGN.md 8, item 4). Identified on the wire by its handle, the index in the
 * NIC's transfer table, which the data packets carry in their Context Tag.
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
