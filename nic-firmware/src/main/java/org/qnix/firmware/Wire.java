package org.qnix.firmware;

import org.agrona.DirectBuffer;
import org.agrona.ExpandableRingBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.RxFifo;
import org.qnix.abi.TraceLayout;

/**
 * The emulated router as one NIC sees it: its own input FIFO and every other NIC's (DESIGN.md 3.3),
 * each an {@link RxFifo}. Sending a packet is appending one record to the destination's FIFO; a data
 * page is written into it once, after {@link #claim}, and read out once, by the destination's RX
 * (nothing zeroes it after). A send never blocks: when the destination FIFO is full the packet waits
 * in this NIC's outbox, in order, and {@link #flush()} retries it on a later pass (otherwise two NICs
 * sending to each other could deadlock).
 */
final class Wire
{
    private static final int OUTBOX_NODE_OFFSET = 0;
    private static final int OUTBOX_TYPE_OFFSET = OUTBOX_NODE_OFFSET + Integer.BYTES;
    private static final int OUTBOX_PACKET_OFFSET = OUTBOX_TYPE_OFFSET + Integer.BYTES;
    private static final int MAX_PACKET = 64 * 1024 + 64;

    private final RxFifo[] fifos;
    private final NicWakeUp[] wakeUps;
    private final int selfIndex;
    private final ExpandableRingBuffer outbox = new ExpandableRingBuffer(4096, 64 * 1024 * 1024, true);
    private final UnsafeBuffer outboxScratch = new UnsafeBuffer(new byte[OUTBOX_PACKET_OFFSET + MAX_PACKET]);
    private final ExpandableRingBuffer.MessageConsumer flusher = this::flushOne;
    private final PacketTrace trace;
    private final String nodeName;
    private final MessageHandler tracedReceiver = this::onTaken;
    private MessageHandler receiver;
    private int claimedType;
    private int claimedLength;

    /**
     * @param rings     the FIFO region of every node's {@code rx.fifo} (RxFifoLayout.RING_OFFSET on), by node index.
     * @param selfIndex this NIC's node index.
     * @param trace     where a copy of every packet goes while {@code qnix trace} watches this NIC.
     * @param wakeUps   the waker of every other node's NIC, by node index; null entries (this node, or
     *                  NICs known to run on this thread) are not rung.
     */
    Wire(final AtomicBuffer[] rings, final int selfIndex, final PacketTrace trace, final String nodeName,
        final NicWakeUp[] wakeUps)
    {
        this.wakeUps = wakeUps.clone();
        this.nodeName = nodeName;
        this.selfIndex = selfIndex;
        this.trace = trace;
        fifos = new RxFifo[rings.length];
        for (int i = 0; i < rings.length; i++)
        {
            fifos[i] = new RxFifo(rings[i]);
        }
    }

    int nodeCount()
    {
        return fifos.length;
    }

    int selfIndex()
    {
        return selfIndex;
    }

    /**
     * Sends a packet (header and payload, contiguous) or, if the destination FIFO is full or earlier
     * packets are still waiting, queues it behind them.
     *
     * @return true if it went onto the wire now.
     */
    boolean send(final int nodeIndex, final int messageType, final DirectBuffer packet, final int offset, final int length)
    {
        if (outbox.isEmpty() && fifos[nodeIndex].write(messageType, packet, offset, length))
        {
            sent(nodeIndex, messageType, packet, offset, length);
            wake(nodeIndex);
            return true;
        }
        outboxScratch.putInt(OUTBOX_NODE_OFFSET, nodeIndex);
        outboxScratch.putInt(OUTBOX_TYPE_OFFSET, messageType);
        outboxScratch.putBytes(OUTBOX_PACKET_OFFSET, packet, offset, length);
        if (!outbox.append(outboxScratch, 0, OUTBOX_PACKET_OFFSET + length))
        {
            throw new IllegalStateException("NIC outbox overflow: " + outbox.size() + " bytes waiting");
        }
        return false;
    }

    /**
     * Claims room for one packet of {@code length} bytes (header and payload) in a destination FIFO,
     * so that the emulated DMA engine writes the payload straight into it. Refused while system
     * messages wait in the outbox, so that nothing overtakes them.
     *
     * @return the index in {@link #fifoBuffer(int)} where the packet starts, or -1 if there is no
     * room now (the caller leaves the packet where it is and moves on).
     */
    int claim(final int nodeIndex, final int messageType, final int length)
    {
        if (!outbox.isEmpty())
        {
            return -1;
        }
        final int index = fifos[nodeIndex].tryClaim(messageType, length);
        claimedType = messageType;
        claimedLength = length;
        return index >= 0 ? index : -1;
    }

    AtomicBuffer fifoBuffer(final int nodeIndex)
    {
        return fifos[nodeIndex].buffer();
    }

    /** Makes a claimed packet visible to the destination NIC's RX. */
    void commit(final int nodeIndex, final int index)
    {
        // Copied before the commit: after it the destination may already have taken and reused the room.
        sent(nodeIndex, claimedType, fifos[nodeIndex].buffer(), index, claimedLength);
        fifos[nodeIndex].commit(index);
        wake(nodeIndex);
    }

    boolean outboxEmpty()
    {
        return outbox.isEmpty();
    }

    /** @return packets moved from the outbox onto the wire. */
    int flush()
    {
        return outbox.isEmpty() ? 0 : outbox.consume(flusher, Integer.MAX_VALUE);
    }

    int receive(final MessageHandler handler, final int limit)
    {
        if (!trace.isOn())
        {
            return fifos[selfIndex].read(handler, limit);
        }
        receiver = handler;
        return fifos[selfIndex].read(tracedReceiver, limit);
    }

    private void onTaken(final int messageType, final MutableDirectBuffer buffer, final int index, final int length)
    {
        trace.record(TraceLayout.DIRECTION_TAKEN, messageType, buffer, index, length);
        receiver.onMessage(messageType, buffer, index, length);
    }

    private boolean flushOne(final MutableDirectBuffer buffer, final int offset, final int length, final int headOffset)
    {
        final int nodeIndex = buffer.getInt(offset + OUTBOX_NODE_OFFSET);
        final int type = buffer.getInt(offset + OUTBOX_TYPE_OFFSET);
        // Stops at the first packet that still does not fit, keeping the order.
        if (!fifos[nodeIndex].write(type, buffer, offset + OUTBOX_PACKET_OFFSET, length - OUTBOX_PACKET_OFFSET))
        {
            return false;
        }
        sent(nodeIndex, type, buffer, offset + OUTBOX_PACKET_OFFSET, length - OUTBOX_PACKET_OFFSET);
        wake(nodeIndex);
        return true;
    }

    /**
     * The NIC of node {@code nodeIndex} runs on this NIC's thread: it cannot be asleep while this one
     * sends, so a packet to it rings nothing (a fence and a read saved per packet).
     */
    void sharesThreadWith(final int nodeIndex)
    {
        wakeUps[nodeIndex] = null;
    }

    /** After a packet is in another NIC's FIFO: that NIC may be asleep (HotWindowIdleStrategy). */
    private void wake(final int nodeIndex)
    {
        final NicWakeUp wakeUp = wakeUps[nodeIndex];
        if (null != wakeUp)
        {
            wakeUp.ring();
        }
    }

    /** A packet is on the wire: the trace's copy and the JFR event, each only when switched on. */
    private void sent(final int nodeIndex, final int type, final DirectBuffer packet, final int offset, final int length)
    {
        trace.record(TraceLayout.DIRECTION_SENT, type, packet, offset, length);
        FirmwareEvents.packetSent(nodeName, nodeIndex, type, length);
    }
}
