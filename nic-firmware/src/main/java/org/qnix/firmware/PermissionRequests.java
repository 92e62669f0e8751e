package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.PermissionRequestFlyweight;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.WireMessageType;

/**
 * What a sending NIC asks the receiving NIC before its data may go (thesis 3.5.1 and 3.2, Reliability):
 * the Permission_Request of a send, asked again while no answer comes, less and less often the longer it
 * waits ({@link #retryInterval}); and with eager short messages (thesis 3.7) the Eager_Short, which
 * carries the request's fields and the message at once. The {@link SendScheduler} decides when a send
 * asks; this class writes what it asks and keeps each send's retry timing in its {@link SendOperation}.
 *
 * <pre>{@code
 * requests.sendEager(slot, op);                          // Send_Short, eager: the message goes now
 * requests.ask(slot, op);                                // Send, or a fallen-back Eager_Short
 * if (requests.askAgainIfDue(slot, op, now)) work++;     // TX step 2: still no permission
 * }</pre>
 */
final class PermissionRequests
{
    /** How soon a send without permission first asks again (thesis 3.2, Reliability). */
    static final int PERMISSION_RETRY_MS = 1;
    /**
     * A send that has waited long (8 s and more) asks again at most this far apart. A Send blocked on a
     * receiver that posts nothing, on a 2x1 cluster, cost the machine 0.43 cores with a retry every
     * millisecond, 0.019 with retries at most 100 ms apart and 0.0087 with this (java processes, 30 s;
     * docs/IMPLEMENTATION.md, "Permission retries").
     */
    static final int PERMISSION_RETRY_MAX_MS = 1000;
    /** A send that has waited {@code w} ms asks again {@code w >> 3} ms later: an eighth of its wait. */
    private static final int PERMISSION_RETRY_SHIFT = 3;

    private final String nodeName;
    private final int torusWidth;
    private final int selfPacked;
    private final AtomicBuffer sdram;
    private final Wire wire;
    private final NicCounters counters;
    private final EpochClock clock;
    private final ContextReader contexts;
    private final SystemMessageSender messages;
    private final PacketHeader eagerHeader = new PacketHeader();
    private final PermissionRequestFlyweight eagerFields = new PermissionRequestFlyweight();
    /** An Eager_Short that has to wait in the outbox is composed here first (the outbox copies it). */
    private final UnsafeBuffer eagerScratch;

    PermissionRequests(final FirmwareContext ctx)
    {
        this.nodeName = ctx.nodeName();
        this.torusWidth = ctx.parameters().torusWidth();
        this.selfPacked = ctx.self().packed();
        this.sdram = ctx.sdram();
        this.wire = ctx.wire();
        this.counters = ctx.counters();
        this.clock = ctx.cachedClock();
        this.contexts = ctx.contextReader();
        this.messages = ctx.systemMessages();
        this.eagerScratch = new UnsafeBuffer(
            new byte[PacketHeader.LENGTH + SystemMessage.eagerShortLength(ctx.parameters().shortThreshold())]);
    }

    /**
     * How long a send that has waited {@code waitedMs} for permission waits before it asks again: 1 ms at
     * first, as the thesis' TX loop asks on every turn, then an eighth of its wait, up to
     * {@link #PERMISSION_RETRY_MAX_MS}. A receiver that posts nothing for long (a Send blocked for
     * seconds) would otherwise keep both NICs from ever going idle with a request every millisecond. A
     * send granted late this way waits at most an eighth longer than it had, and usually no longer at
     * all: the receiving NIC keeps the requests it left unanswered and answers them as soon as a Receive
     * of their process is posted or staging memory is freed ({@link DeferredRequests}); only one it could
     * not keep waits for its retry.
     */
    static int retryInterval(final long waitedMs)
    {
        return bounded(waitedMs >> PERMISSION_RETRY_SHIFT);
    }

    /** @return {@code intervalMs} within [{@link #PERMISSION_RETRY_MS}, {@link #PERMISSION_RETRY_MAX_MS}]. */
    static int bounded(final long intervalMs)
    {
        return (int)Math.max(PERMISSION_RETRY_MS, Math.min(PERMISSION_RETRY_MAX_MS, intervalMs));
    }

    /** The first Permission_Request of a send (or of an Eager_Short sent back to the permission path). */
    void ask(final ProcessSlot slot, final SendOperation op)
    {
        final long now = clock.time();
        op.firstRequestMs = now;
        op.retryMs = PERMISSION_RETRY_MS;
        send(slot, op, now);
    }

    /**
     * TX step 2 for a send still without permission: asks again if its retry interval has passed, telling
     * the receiver when it will ask next.
     *
     * @return true if it asked.
     */
    boolean askAgainIfDue(final ProcessSlot slot, final SendOperation op, final long now)
    {
        if (now - op.lastRequestMs < op.retryMs)
        {
            return false;
        }
        op.retryMs = retryInterval(now - op.firstRequestMs);
        send(slot, op, now);
        counters.permissionRetries.increment();
        return true;
    }

    private void send(final ProcessSlot slot, final SendOperation op, final long now)
    {
        op.writeRequest(messages.permissionRequest(), slot, now);
        FirmwareEvents.permissionAsked(nodeName, op.destinationNode, op.operationId, op.length);
        messages.sendTo(op.destinationNode, SystemMessage.PERMISSION_REQUEST_LENGTH);
        counters.permissionRequestsSent.increment();
    }

    /**
     * Thesis 3.7: the message goes with the Permission_Request's fields, at once, as Eager_Short. It is
     * written straight into the destination FIFO, or, if that is full or system messages wait in the
     * outbox, composed in a scratch buffer and queued behind them: it never overtakes a system message
     * this NIC sent before, in particular the Permission_Request of an earlier message that fell back.
     * The data stays in the Context Region (or the short cast's) until the reply, so a fallback can
     * still send it.
     */
    void sendEager(final ProcessSlot slot, final SendOperation op)
    {
        final int node = op.destinationNode;
        final int payloadLength = SystemMessage.eagerShortLength(op.length);
        final int packetLength = PacketHeader.LENGTH + payloadLength;
        final int claimed = wire.claim(node, WireMessageType.SYSTEM_MESSAGE, packetLength);
        final AtomicBuffer packet = claimed >= 0 ? wire.fifoBuffer(node) : eagerScratch;
        final int at = Math.max(0, claimed);
        eagerHeader.wrap(packet, at)
            .destination(NicCoordinates.packedOfIndex(node, torusWidth)).receiverPid(0)
            .source(selfPacked).senderPid(0)
            .contextTag(SystemMessage.EAGER_SHORT).packetLength(payloadLength).counter(0);
        op.writeRequest(eagerFields.wrap(packet, at + PacketHeader.LENGTH), slot, clock.time());
        // Programmed I/O: the data is in NIC memory, in the Context Region (a short cast's is too).
        final int source =
            null != op.cast ? (int)op.cast.dataAddress : contexts.sendRegionAddress(slot.index, op.context);
        packet.putBytes(at + PacketHeader.LENGTH + SystemMessage.EAGER_SHORT_DATA_OFFSET, sdram, source, op.length);
        if (claimed >= 0)
        {
            wire.commit(node, claimed);
        }
        else if (!wire.send(node, WireMessageType.SYSTEM_MESSAGE, eagerScratch, 0, packetLength))
        {
            counters.packetsDeferred.increment();
        }
        op.eager = true;
        counters.eagerShortsSent.increment();
        counters.systemMessagesSent.increment();
        counters.packetsSent.increment();
        counters.dataBytesSent.getAndAddRelease(op.length);
    }
}
