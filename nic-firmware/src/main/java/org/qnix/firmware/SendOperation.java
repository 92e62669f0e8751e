package org.qnix.firmware;

import org.qnix.abi.PacketHeader;
import org.qnix.abi.PermissionReplyFlyweight;
import org.qnix.abi.PermissionRequestFlyweight;
import org.qnix.abi.ProcessCommand;

/**
 * A Scheduling Queue entry (thesis 3.3.3, Figure 5): Send Info, Header Info and the Permission Flag of
 * one pending Send or Send_Short, and what happens to them: described from the Send Context, scheduled
 * with a new operation id, granted by a Permission_Reply, advanced one packet at a time, ended. There
 * is one per Send Context, made when the process registers and reused for every operation of that
 * context, so scheduling allocates nothing; the entries of Broadcast and Multicast destinations come
 * from a pool of the {@link SendScheduler} (thesis 3.5.2, Broadcast step 2).
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
    /** The receiver's incarnation in its Process Table entry, as the Name Table said at step 2.4. */
    int destinationIncarnation;
    int receiverAi;
    int receiverPi;
    int tag;
    /** The Permission Flag. */
    boolean permitted;
    /**
     * Sent as Eager_Short, waiting for its Eager_Short_Reply (thesis 3.7): it asks for no permission
     * meanwhile; the data stays in the Context Region until the reply.
     */
    boolean eager;
    /** The receiver's transfer handle, carried by every data packet (Permission_Reply). */
    int transferHandle;
    long lastRequestMs;
    /** When its first Permission_Request went: how long it has waited decides how often it asks again. */
    long firstRequestMs;
    /** How long after its last Permission_Request it asks again, which that request told the receiver. */
    int retryMs;
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

    /** Send step 2: the fields of the Send Context (the message itself is read into {@link #buffer}). */
    void describe(final int command, final boolean doorbellFlag, final int receiverAi, final int receiverPi,
        final int tag)
    {
        this.command = command;
        this.doorbellFlag = doorbellFlag;
        this.receiverAi = receiverAi;
        this.receiverPi = receiverPi;
        this.tag = tag;
    }

    /** The message's geometry: its length, its first packet's length (page alignment) and packet count. */
    void message(final int length, final int firstPacketLength, final int packets)
    {
        this.length = length;
        this.firstPacketLength = firstPacketLength;
        this.packets = packets;
    }

    /** One destination of a Broadcast or Multicast: the cast's message, from its copy (thesis 3.5.2, step 3). */
    void describeCastDestination(final int processIndex, final CastOperation cast, final int destination)
    {
        this.processIndex = processIndex;
        this.context = cast.context;
        this.cast = cast;
        describe(cast.isShort() ? ProcessCommand.SEND_SHORT : ProcessCommand.SEND, cast.doorbellFlag,
            cast.destinationAi[destination], cast.destinationPi[destination], cast.tag);
        message(cast.length, cast.firstPacketLength, cast.packets);
    }

    /** Send step 3: a new operation for the destination NIC and PID, waiting for permission. */
    void schedule(final int destinationNode, final int destinationPid, final int destinationIncarnation,
        final long operationId)
    {
        this.destinationNode = destinationNode;
        this.destinationPid = destinationPid;
        this.destinationIncarnation = destinationIncarnation;
        this.operationId = operationId;
        nextPacket = 0;
        permitted = false;
        eager = false;
        transferHandle = -1;
        retryMs = PermissionRequests.PERMISSION_RETRY_MS;
        active = true;
    }

    /** @return true if this operation is waiting for a Permission_Reply with this id. */
    boolean awaitsPermission(final long id)
    {
        return active && operationId == id && !permitted;
    }

    /** @return true if this operation went eagerly and waits for an Eager_Short_Reply with this id. */
    boolean awaitsEagerReply(final long id)
    {
        return active && operationId == id && eager;
    }

    /** Permission_Reply granted: the Permission Flag, and the handle every data packet carries. */
    void grant(final int handle)
    {
        permitted = true;
        transferHandle = handle;
    }

    void end()
    {
        active = false;
        permitted = false;
        eager = false;
    }

    boolean finished()
    {
        return nextPacket >= packets;
    }

    /** Data from the sender's pages (Send), not NIC memory (Send_Short, or a cast's copy). */
    boolean readsHostMemory()
    {
        return null == cast ? ProcessCommand.SEND_SHORT != command : cast.fromHost;
    }

    /** The host address of the message byte at {@code offset}, in the Send's or the cast's pages. */
    long hostAddress(final int offset, final int pageSize)
    {
        return null == cast ? buffer.address(offset, pageSize) : cast.buffer.address(offset, pageSize);
    }

    /** Send step 3: the Permission_Request asking for this operation's transfer (thesis 3.5.1). */
    void writeRequest(final PermissionRequestFlyweight request, final ProcessSlot sender, final long now)
    {
        lastRequestMs = now;
        request
            .receiverPid(destinationPid)
            .senderPid(sender.nicPid)
            .tag(tag)
            .messageLength(length)
            .firstPacketLength(firstPacketLength)
            .packets(packets)
            .operationId(operationId)
            .senderAi(sender.aiName)
            .senderPi(sender.piName)
            .receiverIncarnation(destinationIncarnation)
            .retryMs(retryMs);
    }

    /** Transfer_Abort for this granted operation, ended with {@code status}. */
    void writeAbort(final PermissionReplyFlyweight abort, final int senderPid, final int status)
    {
        abort
            .receiverPid(destinationPid)
            .senderPid(senderPid)
            .operationId(operationId)
            .status(status)
            .handle(transferHandle);
    }

    /** TX step 4: the header of the next data packet (thesis 3.5, Figure 7). */
    void writeHeader(final PacketHeader header, final int destination, final int source, final int senderPid,
        final int packetLength)
    {
        header
            .destination(destination)
            .receiverPid(destinationPid)
            .source(source)
            .senderPid(senderPid)
            .contextTag(transferHandle)
            .packetLength(packetLength)
            .counter(nextPacket);
    }

    public String toString()
    {
        return "Send{process " + processIndex + " context " + context + " op " + operationId + " to (" + receiverAi +
            "," + receiverPi + ") tag " + tag + " len " + length + " packet " + nextPacket + "/" + packets +
            (permitted ? " permitted" : eager ? " sent eagerly, waiting for its reply" : " waiting for permission") + "}";
    }
}
