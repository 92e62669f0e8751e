package org.qnix.firmware;

/**
 * A Scheduling Queue entry (thesis 3.3.3, Figure 5): Send Info, Header Info and the Permission Flag of
 * one pending Send or Send_Short. There is one per Send Context, made when the process registers and
 * reused for every operation of that context, so scheduling allocates nothing; the entries of
 * Broadcast and Multicast destinations come from a pool of the NIC (thesis 3.5.2, Broadcast step 2).
 */
final class SendOperation
{
    /** Set once for a Send Context's own operation; for a destination of a Broadcast, per use. */
    int processIndex;
    int context;
    /** Index in the NIC's table of send operations; the low bits of every operation id. */
    final int slot;
    final PageList buffer;

    boolean active;
    /** ProcessCommand.SEND or SEND_SHORT. */
    int command;
    boolean doorbellFlag;
    long operationId;
    int length;
    int firstPacketLength;
    int packets;
    /** Header Info: Packet Counter of the next packet. */
    int nextPacket;
    int destinationNode;
    int destinationPid;
    int receiverAi;
    int receiverPi;
    int tag;
    /** The Permission Flag. */
    boolean permitted;
    /** The receiver's transfer handle, carried by every data packet (Permission_Reply). */
    int transferHandle;
    long lastRequestMs;
    /** The Broadcast or Multicast this send is one destination of, or null for a Send. */
    CastOperation cast;

    SendOperation previous;
    SendOperation next;

    SendOperation(final int processIndex, final int context, final int slot, final int descriptors)
    {
        this.processIndex = processIndex;
        this.context = context;
        this.slot = slot;
        this.buffer = new PageList(Math.max(1, descriptors));
    }

    boolean finished()
    {
        return nextPacket >= packets;
    }

    public String toString()
    {
        return "Send{process " + processIndex + " context " + context + " op " + operationId + " to (" + receiverAi +
            "," + receiverPi + ") tag " + tag + " len " + length + " packet " + nextPacket + "/" + packets +
            (permitted ? " permitted" : " waiting for permission") + "}";
    }
}
