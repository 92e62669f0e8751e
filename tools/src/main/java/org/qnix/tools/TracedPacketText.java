package org.qnix.tools;

import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;

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
 * One line per traced packet, the text form of {@code qnix trace}: when, which NIC sent or took it, the
 * header, and for a system message its fields, decoded with the same qnix-abi flyweights the firmware
 * uses (what the Wireshark dissector in {@code tools/wireshark/qnix.lua} shows too).
 *
 * <pre>{@code
 * 18:02:11.123456789 0-0 sent  Permission_Request 0-0 -> 1-0 receiver PID 1 sender PID 1: 10000 bytes, tag 0, 3 packets
 * }</pre>
 */
final class TracedPacketText
{
    private static final DateTimeFormatter TIME =
        DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSSSSS").withZone(ZoneId.systemDefault());

    private final PacketHeader header = new PacketHeader();
    private final PermissionRequestFlyweight request = new PermissionRequestFlyweight();
    private final PermissionReplyFlyweight reply = new PermissionReplyFlyweight();
    private final NewProcessFlyweight process = new NewProcessFlyweight();
    private final NewGroupFlyweight group = new NewGroupFlyweight();
    private final BarrierFlyweight barrier = new BarrierFlyweight();

    String describe(final PacketTracer.Packet packet)
    {
        final StringBuilder line = new StringBuilder(160)
            .append(TIME.format(Instant.ofEpochSecond(0, packet.epochNanos()))).append(' ')
            .append(packet.node()).append(packet.isSent() ? " sent  " : " taken ");
        if (packet.bytes().length < PacketHeader.LENGTH)
        {
            return line.append("(").append(packet.bytes().length).append(" bytes: shorter than a header)").toString();
        }
        final UnsafeBuffer bytes = new UnsafeBuffer(packet.bytes());
        header.wrap(bytes, 0);
        final String route = NicCoordinates.unpack(header.source()) + " -> " + NicCoordinates.unpack(header.destination()) +
            " receiver PID " + header.receiverPid() + " sender PID " + header.senderPid();
        if (WireMessageType.SYSTEM_MESSAGE != packet.wireType())
        {
            return line.append(WireMessageType.DATA_PACKET == packet.wireType() ? "Data " : "Type " + packet.wireType() + " ")
                .append(route).append(": transfer ").append(header.contextTag()).append(", packet ")
                .append(header.counter()).append(", ").append(packet.wireLength() - PacketHeader.LENGTH)
                .append(" bytes").toString();
        }
        final int code = header.contextTag();
        line.append(SystemMessage.name(code)).append(' ').append(route).append(": ");
        final int available = packet.bytes().length - PacketHeader.LENGTH;
        final UnsafeBuffer payload = new UnsafeBuffer(packet.bytes(), PacketHeader.LENGTH, available);
        switch (code)
        {
            case SystemMessage.PERMISSION_REQUEST, SystemMessage.EAGER_SHORT ->
            {
                if (available < SystemMessage.PERMISSION_REQUEST_LENGTH)
                {
                    return line.append("(cut)").toString();
                }
                request.wrap(payload, 0);
                line.append(request.messageLength()).append(" bytes, tag ").append(request.tag()).append(", ")
                    .append(request.packets()).append(" packets, from (").append(request.senderAi()).append(',')
                    .append(request.senderPi()).append("), operation ").append(request.operationId())
                    .append(", receiver incarnation ").append(request.receiverIncarnation());
                if (SystemMessage.PERMISSION_REQUEST == code)
                {
                    line.append(", asks again within ").append(request.retryMs()).append(" ms");
                }
                return line.toString();
            }
            case SystemMessage.PERMISSION_REPLY, SystemMessage.TRANSFER_ABORT, SystemMessage.EAGER_SHORT_REPLY ->
            {
                if (available < SystemMessage.PERMISSION_REPLY_LENGTH)
                {
                    return line.append("(cut)").toString();
                }
                reply.wrap(payload, 0);
                return line.append("status ").append(reply.status()).append(", handle ").append(reply.handle())
                    .append(", operation ").append(reply.operationId()).toString();
            }
            case SystemMessage.NEW_PROCESS, SystemMessage.NEW_PROCESS_ACK, SystemMessage.DELETE_PROCESS ->
            {
                // The three share their first fields; Delete_Process is the shortest.
                if (available < SystemMessage.DELETE_PROCESS_LENGTH)
                {
                    return line.append("(cut)").toString();
                }
                process.wrap(payload, 0);
                return line.append('(').append(process.ai()).append(',').append(process.pi()).append(") NIC PID ")
                    .append(process.nicPid()).toString();
            }
            case SystemMessage.NEW_GROUP ->
            {
                if (available < SystemMessage.NEW_GROUP_LENGTH)
                {
                    return line.append("(cut)").toString();
                }
                group.wrap(payload, 0);
                return line.append("group ").append(group.group()).append(" of ").append(group.groupSize())
                    .append(", member (").append(group.memberAi()).append(',').append(group.memberPi()).append(')')
                    .toString();
            }
            case SystemMessage.NEW_GROUP_ACK ->
            {
                if (available < SystemMessage.NEW_GROUP_ACK_LENGTH)
                {
                    return line.append("(cut)").toString();
                }
                group.wrap(payload, 0);
                return line.append("group ").append(group.group()).append(", member NIC PID ").append(group.ackNicPid())
                    .toString();
            }
            case SystemMessage.BARRIER ->
            {
                if (available < SystemMessage.BARRIER_LENGTH)
                {
                    return line.append("(cut)").toString();
                }
                barrier.wrap(payload, 0);
                return line.append("group ").append(barrier.group()).append(", barrier ").append(barrier.sequence())
                    .append(", member (").append(barrier.memberAi()).append(',').append(barrier.memberPi()).append(')')
                    .toString();
            }
            default ->
            {
                return line.append(available).append(" bytes").toString();
            }
        }
    }
}
