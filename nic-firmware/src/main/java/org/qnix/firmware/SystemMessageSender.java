package org.qnix.firmware;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.BarrierFlyweight;
import org.qnix.abi.NewGroupFlyweight;
import org.qnix.abi.NewProcessFlyweight;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.PermissionReplyFlyweight;
import org.qnix.abi.PermissionRequestFlyweight;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.WireMessageType;

/**
 * Composes and sends the one-packet NIC-to-NIC system messages of thesis 3.5.1: both PIDs zero, the
 * message code in the Context Tag, the payload written through the qnix-abi flyweight of the message
 * (the same flyweights {@link SystemMessageDispatcher} reads with). One scratch packet, reused: start
 * a message with the method named after it, write its fields, then send it to one NIC or to all others.
 *
 * <pre>{@code
 * messages.deleteProcess().ai(7).pi(0).nicPid(1);
 * messages.broadcast(SystemMessage.DELETE_PROCESS_LENGTH);
 * }</pre>
 */
final class SystemMessageSender
{
    private final UnsafeBuffer packet = new UnsafeBuffer(new byte[PacketHeader.LENGTH + SystemMessage.MAX_PAYLOAD_LENGTH]);
    private final PacketHeader header = new PacketHeader().wrap(packet, 0);
    private final PermissionRequestFlyweight permissionRequest =
        new PermissionRequestFlyweight().wrap(packet, PacketHeader.LENGTH);
    private final PermissionReplyFlyweight permissionReply =
        new PermissionReplyFlyweight().wrap(packet, PacketHeader.LENGTH);
    private final NewProcessFlyweight newProcess = new NewProcessFlyweight().wrap(packet, PacketHeader.LENGTH);
    private final NewGroupFlyweight newGroup = new NewGroupFlyweight().wrap(packet, PacketHeader.LENGTH);
    private final BarrierFlyweight barrier = new BarrierFlyweight().wrap(packet, PacketHeader.LENGTH);
    private final Wire wire;
    private final NicCounters counters;
    private final int torusWidth;

    SystemMessageSender(final Wire wire, final NicCounters counters, final NicCoordinates self, final int torusWidth)
    {
        this.wire = wire;
        this.counters = counters;
        this.torusWidth = torusWidth;
        header.receiverPid(0).senderPid(0).source(self.packed()).counter(0);
    }

    PermissionRequestFlyweight permissionRequest()
    {
        header.contextTag(SystemMessage.PERMISSION_REQUEST);
        return permissionRequest;
    }

    PermissionReplyFlyweight permissionReply()
    {
        header.contextTag(SystemMessage.PERMISSION_REPLY);
        return permissionReply;
    }

    /** Transfer_Abort has the layout of Permission_Reply. */
    PermissionReplyFlyweight transferAbort()
    {
        header.contextTag(SystemMessage.TRANSFER_ABORT);
        return permissionReply;
    }

    /** Eager_Short_Reply has the layout of Permission_Reply. */
    PermissionReplyFlyweight eagerShortReply()
    {
        header.contextTag(SystemMessage.EAGER_SHORT_REPLY);
        return permissionReply;
    }

    NewProcessFlyweight newProcess()
    {
        header.contextTag(SystemMessage.NEW_PROCESS);
        return newProcess;
    }

    /** New_Process_Ack: the first three fields of New_Process. */
    NewProcessFlyweight newProcessAck()
    {
        header.contextTag(SystemMessage.NEW_PROCESS_ACK);
        return newProcess;
    }

    /** Delete_Process: the first three fields of New_Process. */
    NewProcessFlyweight deleteProcess()
    {
        header.contextTag(SystemMessage.DELETE_PROCESS);
        return newProcess;
    }

    NewGroupFlyweight newGroup()
    {
        header.contextTag(SystemMessage.NEW_GROUP);
        return newGroup;
    }

    /** New_Group_Ack: Group and the acknowledged member's NIC PID. */
    NewGroupFlyweight newGroupAck()
    {
        header.contextTag(SystemMessage.NEW_GROUP_ACK);
        return newGroup;
    }

    BarrierFlyweight barrier()
    {
        header.contextTag(SystemMessage.BARRIER);
        return barrier;
    }

    /** Sends the message to one NIC; it waits in the outbox if that NIC's FIFO is full. */
    void sendTo(final int nodeIndex, final int payloadLength)
    {
        header.destination(NicCoordinates.packedOfIndex(nodeIndex, torusWidth)).packetLength(payloadLength);
        if (!wire.send(nodeIndex, WireMessageType.SYSTEM_MESSAGE, packet, 0, PacketHeader.LENGTH + payloadLength))
        {
            counters.packetsDeferred.increment();
        }
        counters.systemMessagesSent.increment();
        counters.packetsSent.increment();
    }

    /** Sends the message to every other NIC of the NIC Table. */
    void broadcast(final int payloadLength)
    {
        for (int node = 0; node < wire.nodeCount(); node++)
        {
            if (node != wire.selfIndex())
            {
                sendTo(node, payloadLength);
            }
        }
    }
}
