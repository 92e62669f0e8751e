package org.qnix.firmware;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.qnix.abi.BarrierFlyweight;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NewGroupFlyweight;
import org.qnix.abi.NewProcessFlyweight;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.PermissionReplyFlyweight;
import org.qnix.abi.PermissionRequestFlyweight;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.WireMessageType;

/**
 * RX (thesis 3.5, RX steps 1 and 3): drains this NIC's input FIFO, checks every packet's header (it
 * came from another process's memory), passes data packets to the {@link ReceiveTable} and decodes each
 * system message (3.5.1) with its qnix-abi flyweight for the role that handles it: Permission_Request
 * and Eager_Short to the {@link PermissionGrants}, Transfer_Abort to the {@link ReceiveTable},
 * Permission_Reply and Eager_Short_Reply to
 * the {@link SendScheduler}, the
 * process and group messages to the {@link ProcessRegistrations}, Barrier to the
 * {@link GroupOperations}; VIA packets (issue 14) to the {@link ViaReceiver}. A message too short for its layout, or from outside the torus, is counted
 * as rejected; one that throws is the {@link DutyCycleErrorHandler}'s, counted with its kind, and the
 * next packet is read as usual.
 *
 * <pre>{@code
 * int work = rx.doWork();  // packets taken from the input FIFO, at most a batch
 * }</pre>
 */
final class SystemMessageDispatcher
{
    private static final int RX_BATCH = 64;
    /** At most this many batches in one {@link #drain()}. */
    private static final int DRAIN_BATCHES = 64;

    private final ClusterParameters params;
    private final int selfPacked;
    private final Wire wire;
    private final NicCounters counters;
    private final DutyCycleErrorHandler errors;
    private final SendScheduler scheduler;
    private final ReceiveTable receives;
    private final PermissionGrants grants;
    private final ProcessRegistrations registrations;
    private final GroupOperations groupOperations;
    private final ViaReceiver via;
    private final PacketHeader inHeader = new PacketHeader();
    private final PermissionRequestFlyweight permissionRequest = new PermissionRequestFlyweight();
    private final PermissionReplyFlyweight permissionReply = new PermissionReplyFlyweight();
    private final NewProcessFlyweight newProcess = new NewProcessFlyweight();
    private final NewGroupFlyweight newGroup = new NewGroupFlyweight();
    private final BarrierFlyweight barrier = new BarrierFlyweight();
    private final MessageHandler rxHandler = this::onPacket;

    SystemMessageDispatcher(final FirmwareContext ctx, final SendScheduler scheduler, final ReceiveTable receives,
        final PermissionGrants grants, final ProcessRegistrations registrations, final GroupOperations groupOperations,
        final ViaReceiver via)
    {
        this.params = ctx.parameters();
        this.selfPacked = ctx.self().packed();
        this.wire = ctx.wire();
        this.counters = ctx.counters();
        this.errors = ctx.errorHandler();
        this.scheduler = scheduler;
        this.receives = receives;
        this.grants = grants;
        this.registrations = registrations;
        this.groupOperations = groupOperations;
        this.via = via;
    }

    /** @return the packets taken from the input FIFO. */
    int doWork()
    {
        return wire.receive(rxHandler, RX_BATCH);
    }

    /**
     * Takes what the input FIFO holds now, ahead of the cycle's RX step: the driver's news of a peer
     * (Via_Connection_Lost) must not overtake what that peer's NIC sent before it (see
     * {@link DriverCommandReader}). Bounded, since other NICs' threads may keep writing meanwhile.
     */
    void drain()
    {
        for (int batch = 0; batch < DRAIN_BATCHES && doWork() > 0; batch++)
        {
            // Each batch is up to RX_BATCH packets, handled as the RX step handles them.
        }
    }

    private void onPacket(final int messageType, final MutableDirectBuffer buffer, final int index, final int length)
    {
        counters.packetsReceived.increment();
        try
        {
            if (length < PacketHeader.LENGTH)
            {
                counters.packetsDropped.increment();
                return;
            }
            inHeader.wrap(buffer, index);
            if (inHeader.destination() != selfPacked || inHeader.packetLength() != length - PacketHeader.LENGTH)
            {
                counters.packetsDropped.increment();
                return;
            }
        }
        catch (final RuntimeException ex)
        {
            errors.onWireMessageError(ex, messageType);
            return;
        }

        if (WireMessageType.SYSTEM_MESSAGE == messageType && inHeader.isSystemMessage())
        {
            final int code = inHeader.contextTag();
            try
            {
                onSystemMessage(code, buffer, index + PacketHeader.LENGTH, length - PacketHeader.LENGTH);
            }
            catch (final RuntimeException ex)
            {
                // A malformed packet must never stop the loop (DESIGN.md 4).
                errors.onSystemMessageError(ex, code);
            }
        }
        else if (WireMessageType.DATA_PACKET == messageType && !inHeader.isSystemMessage())
        {
            try
            {
                receives.onDataPacket(inHeader, buffer, index);
            }
            catch (final RuntimeException ex)
            {
                errors.onDataPacketError(ex);
            }
        }
        else if (WireMessageType.VIA_PACKET == messageType && !inHeader.isSystemMessage())
        {
            try
            {
                via.onPacket(inHeader, buffer, index, length);
            }
            catch (final RuntimeException ex)
            {
                errors.onError(ex, "VIA packet");
            }
        }
        else
        {
            counters.packetsDropped.increment();
        }
    }

    private void onSystemMessage(final int code, final MutableDirectBuffer buffer, final int payload, final int length)
    {
        counters.systemMessagesReceived.increment();
        // The source as a node index, without an object: the permission protocol is on the data path.
        final int sourcePacked = inHeader.source();
        final int sourceIndex = NicCoordinates.indexOfPacked(sourcePacked, params.torusWidth());
        if (((sourcePacked >> 8) & 0xFF) >= params.torusWidth() || (sourcePacked & 0xFF) >= params.torusHeight() ||
            length < minimumLength(code))
        {
            counters.systemMessagesRejected.increment();
            return;
        }

        switch (code)
        {
            case SystemMessage.PERMISSION_REQUEST:
                grants.onPermissionRequest(sourceIndex, permissionRequest.wrap(buffer, payload));
                break;

            case SystemMessage.PERMISSION_REPLY:
                scheduler.onPermissionReply(permissionReply.wrap(buffer, payload));
                break;

            case SystemMessage.TRANSFER_ABORT:
                receives.onTransferAbort(sourceIndex, permissionReply.wrap(buffer, payload));
                break;

            case SystemMessage.EAGER_SHORT:
                grants.onEagerShort(sourceIndex, permissionRequest.wrap(buffer, payload), buffer,
                    payload + SystemMessage.EAGER_SHORT_DATA_OFFSET, length - SystemMessage.EAGER_SHORT_DATA_OFFSET);
                break;

            case SystemMessage.EAGER_SHORT_REPLY:
                scheduler.onEagerShortReply(permissionReply.wrap(buffer, payload));
                break;

            case SystemMessage.NEW_PROCESS:
                registrations.onNewProcess(
                    NicCoordinates.unpack(sourcePacked), sourceIndex, newProcess.wrap(buffer, payload));
                break;

            case SystemMessage.NEW_PROCESS_ACK:
                registrations.onNewProcessAck(sourceIndex, newProcess.wrap(buffer, payload));
                break;

            case SystemMessage.NEW_GROUP:
                registrations.onNewGroup(
                    NicCoordinates.unpack(sourcePacked), sourceIndex, newGroup.wrap(buffer, payload));
                break;

            case SystemMessage.NEW_GROUP_ACK:
                registrations.onNewGroupAck(sourceIndex, newGroup.wrap(buffer, payload));
                break;

            case SystemMessage.DELETE_PROCESS:
                registrations.onDeleteProcess(
                    NicCoordinates.unpack(sourcePacked), sourceIndex, newProcess.wrap(buffer, payload));
                break;

            case SystemMessage.BARRIER:
                groupOperations.onBarrierMessage(sourceIndex, barrier.wrap(buffer, payload));
                break;

            default:
                counters.systemMessagesRejected.increment();
        }
    }

    /** @return the payload length of the system message {@code code}; 0 for an unknown code. */
    private static int minimumLength(final int code)
    {
        switch (code)
        {
            case SystemMessage.PERMISSION_REQUEST: return SystemMessage.PERMISSION_REQUEST_LENGTH;
            case SystemMessage.PERMISSION_REPLY: return SystemMessage.PERMISSION_REPLY_LENGTH;
            case SystemMessage.TRANSFER_ABORT: return SystemMessage.TRANSFER_ABORT_LENGTH;
            case SystemMessage.EAGER_SHORT: return SystemMessage.EAGER_SHORT_DATA_OFFSET;
            case SystemMessage.EAGER_SHORT_REPLY: return SystemMessage.EAGER_SHORT_REPLY_LENGTH;
            case SystemMessage.NEW_PROCESS: return SystemMessage.NEW_PROCESS_LENGTH;
            case SystemMessage.NEW_PROCESS_ACK: return SystemMessage.NEW_PROCESS_ACK_LENGTH;
            case SystemMessage.NEW_GROUP: return SystemMessage.NEW_GROUP_LENGTH;
            case SystemMessage.NEW_GROUP_ACK: return SystemMessage.NEW_GROUP_ACK_LENGTH;
            case SystemMessage.DELETE_PROCESS: return SystemMessage.DELETE_PROCESS_LENGTH;
            case SystemMessage.BARRIER: return SystemMessage.BARRIER_LENGTH;
            default: return 0;
        }
    }
}
