package org.qnix.firmware;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.WireMessageType;

/**
 * Composes and sends the one-packet NIC-to-NIC system messages of thesis 3.5.1: both PIDs zero, the
 * message code in the Context Tag, the payload laid out as {@link SystemMessage} says. One scratch
 * packet, reused: {@link #begin} a message, write its fields, then send it to one NIC or to all others.
 *
 * <pre>{@code
 * messages.begin(SystemMessage.DELETE_PROCESS)
 *     .putInt(SystemMessage.NAME_AI_OFFSET, 7).putInt(SystemMessage.NAME_PI_OFFSET, 0)
 *     .putInt(SystemMessage.NAME_NIC_PID_OFFSET, 1)
 *     .broadcast(SystemMessage.DELETE_PROCESS_LENGTH);
 * }</pre>
 */
final class SystemMessageSender
{
    private final UnsafeBuffer packet = new UnsafeBuffer(new byte[PacketHeader.LENGTH + SystemMessage.MAX_PAYLOAD_LENGTH]);
    private final PacketHeader header = new PacketHeader().wrap(packet, 0);
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

    SystemMessageSender begin(final int code)
    {
        header.contextTag(code);
        return this;
    }

    /** Writes a payload field, at an offset of {@link SystemMessage}. */
    SystemMessageSender putInt(final int payloadOffset, final int value)
    {
        packet.putInt(PacketHeader.LENGTH + payloadOffset, value);
        return this;
    }

    SystemMessageSender putLong(final int payloadOffset, final long value)
    {
        packet.putLong(PacketHeader.LENGTH + payloadOffset, value);
        return this;
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
