package org.qnix.pcicomm;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ViplDescriptor;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplMemory;

/**
 * The device of one connection (seed 000, 5.2), from the point of view of this node: the outgoing queue
 * of buffers to transmit ({@link OutgoingQueue}), the exported queue of the peer's buffers to transmit
 * into ({@link RemoteExports}), our preposted buffers waiting to be exported and then filled
 * ({@link PrepostedBuffers}), and the control messages ({@link PciCommMessage}) that pass between the
 * two ends, all over one Reliable Reception VI. {@link #doWork()} is one step, Agent-style: take the
 * NIC's completions, in posting order on each queue, then post what can be posted. Not thread safe: its
 * {@link PciConnection} calls it under its monitor.
 *
 * <p>Data moves by RDMA write with immediate data: one write per exported buffer, of the bytes
 * {@code min(bytes left of the send, exported length)}, the byte count as immediate data. A send
 * longer than the head export spans the next ones; a write never fills part of a buffer another
 * write already filled, so the receiver gets each buffer back with the actual length the immediate
 * data says (the seed's "actual length of the region", 5.1.2). The write consumes a receive slot of
 * the peer, whose completion, in order, names the buffer filled. Sends recycle in the order they were
 * given: the NIC completes a VI's sends in order, and a send's last write completes after its data is
 * in the peer's memory (Reliable Reception).
 *
 * <p>Slots: {@link ControlRegionLayout#RECEIVE_SLOTS} receive descriptors, each with room for one
 * control message, stay posted on the VI (reposted as soon as taken);
 * {@link ControlRegionLayout#SEND_SLOTS} send descriptors, reused in a ring in posting order. Their
 * memory is one registered region, the {@link ControlRegionLayout control region}.
 */
final class PciCommDevice
{
    private static final int KIND_DATA = 0;
    private static final int KIND_CONTROL = 1;
    private static final int KIND_DISCONNECT = 2;

    private final Vi vi;
    private final CompletionQueue cq;
    private final ViplMemory control;
    private final MemoryRegion controlRegion;
    private final UnsafeBuffer controlBuffer;
    private final int maxTransfer;
    private final Descriptor[] receives = new Descriptor[ControlRegionLayout.RECEIVE_SLOTS];
    private final Descriptor[] sends = new Descriptor[ControlRegionLayout.SEND_SLOTS];
    private final int[] sendKinds = new int[ControlRegionLayout.SEND_SLOTS];
    private final PciCommMessage message = new PciCommMessage();
    private final CreditWindow credits = new CreditWindow(ControlRegionLayout.RECEIVE_SLOTS);
    private final RemoteExports remote = new RemoteExports();
    private final PrepostedBuffers preposted = new PrepostedBuffers();
    private final OutgoingQueue outgoing = new OutgoingQueue();
    private long sendsPosted;
    private long sendsCompleted;
    private long receivesCompleted;
    private boolean connected;

    private boolean closeRequested;
    private boolean disconnectPosted;
    private boolean disconnectCompleted;
    private boolean peerClosed;
    /** An error completion after the peer's DISCONNECT: its end of the VI is gone. */
    private boolean peerGone;
    private PciCommException failure;

    private final Statistics stats = new Statistics();

    /** What a connection has moved, for tests and tools: counts since it was made. */
    static final class Statistics
    {
        long dataWrites;
        long dataBytesWritten;
        long buffersFilled;
        long bytesReceived;
        long controlMessagesSent;
        long controlBytesSent;
        long buffersExported;
        long creditMessagesSent;
    }

    PciCommDevice(final Vi vi, final CompletionQueue cq, final MemoryRegion controlRegion, final int maxTransfer)
    {
        this.vi = vi;
        this.cq = cq;
        this.control = controlRegion.memory();
        this.controlRegion = controlRegion;
        this.controlBuffer = control.buffer();
        this.maxTransfer = maxTransfer;
        for (int i = 0; i < ControlRegionLayout.RECEIVE_SLOTS; i++)
        {
            receives[i] = control.descriptor(ControlRegionLayout.receiveDescriptorOffset(i));
        }
        for (int i = 0; i < ControlRegionLayout.SEND_SLOTS; i++)
        {
            sends[i] = control.descriptor(ControlRegionLayout.sendDescriptorOffset(i));
        }
    }

    /** Every receive slot to the NIC: before connecting, so the peer's first message finds one (issue 14). */
    void postReceives()
    {
        for (int i = 0; i < ControlRegionLayout.RECEIVE_SLOTS; i++)
        {
            postReceive(i);
        }
    }

    void connected()
    {
        connected = true;
    }

    /** @return the work done: completions taken and descriptors posted. */
    int doWork()
    {
        // The CQ only wakes the connection's thread; the queues themselves say what completed. Drained
        // first: a completion after this adds an entry, and the next wait returns at once.
        while (null != cq.done())
        {
        }
        int work = takeSendCompletions() + takeReceiveCompletions();
        if (!connected || null != failure)
        {
            return work;
        }
        if (peerClosed || closeRequested && outgoing.isWritten())
        {
            work += postDisconnect();
        }
        if (!disconnectPosted)
        {
            work += postExports();
            work += postWrites();
            work += postCredits();
        }
        return work;
    }

    // ---------------------------------------------------------------------------------------------
    // The application's side, through PciConnection.
    // ---------------------------------------------------------------------------------------------

    /** @return true if one more buffer may be preposted: the peer refuses more than {@link RemoteExports#MAX_EXPORTS}. */
    boolean canPrepost()
    {
        return preposted.canPrepost();
    }

    void prepost(final PciBuffer buffer, final int length)
    {
        preposted.prepost(buffer, length);
    }

    PciBuffer takeFilled()
    {
        return preposted.takeFilled();
    }

    void send(final PciBuffer buffer, final int length)
    {
        outgoing.add(buffer, length);
    }

    PciBuffer takeRecycled()
    {
        return outgoing.takeRecycled();
    }

    /** @return true if sent buffers are still with the library (queued or in flight). */
    boolean sending()
    {
        return outgoing.isSending();
    }

    /** {@code disconnect()}: the queued data goes first, then this end's DISCONNECT. */
    void requestClose()
    {
        closeRequested = true;
    }

    boolean closeRequested()
    {
        return closeRequested;
    }

    /** @return true once this end's DISCONNECT is posted: nothing more is exported, written or credited. */
    boolean disconnectPosted()
    {
        return disconnectPosted;
    }

    boolean peerClosed()
    {
        return peerClosed;
    }

    /**
     * @return true once both ends said DISCONNECT and ours completed (or the peer, having said it, took
     * its VI away): nothing is in flight either way.
     */
    boolean closed()
    {
        return peerClosed && (disconnectCompleted || peerGone);
    }

    PciCommException failure()
    {
        return failure;
    }

    /** The connection broke (or could not be kept): everything waiting ends with this. */
    void fail(final PciCommException.Reason reason, final String why)
    {
        if (null == failure)
        {
            failure = new PciCommException(reason, why);
        }
    }

    /** @return the bytes queued for sending that no write carried yet. */
    long bytesNotWritten()
    {
        return outgoing.bytesNotWritten();
    }

    /**
     * The connection ended (closed or broken): what was sent and is not known to be in the peer's memory
     * goes back to the application ({@link OutgoingQueue#handBackUnsent()}). The VI is disconnected
     * first: the NIC no longer reads them.
     */
    void handBackUnsent()
    {
        outgoing.handBackUnsent();
    }

    /**
     * @return what of this end's sends will not reach the peer, in words, or null if nothing: once the peer
     * said DISCONNECT nothing more is written (it no longer receives), and once the connection ended the
     * buffers are back with the application.
     */
    String unsent()
    {
        return outgoing.unsent(peerClosed);
    }

    /** @return the protocol's state in a line: what a stalled close or a bug report needs. */
    String describe()
    {
        return "sends posted " + sendsPosted + ", completed " + sendsCompleted + "; receives completed " +
            receivesCompleted + "; credits " + credits.credits() + ", owed " + credits.owed() + "; exports held " +
            remote.size() + "; close requested " + closeRequested + ", DISCONNECT posted " + disconnectPosted +
            ", completed " + disconnectCompleted + "; peer closed " + peerClosed + ", gone " + peerGone;
    }

    Statistics statistics()
    {
        return stats;
    }

    // ---------------------------------------------------------------------------------------------
    // Completions.
    // ---------------------------------------------------------------------------------------------

    private int takeSendCompletions()
    {
        int work = 0;
        Descriptor done;
        while (null != (done = vi.sendDone()))
        {
            final long sequence = sendsCompleted++;
            final int slot = (int)(sequence % ControlRegionLayout.SEND_SLOTS);
            work++;
            if (done.hasError())
            {
                broken("a send", done.status());
                continue;
            }
            if (KIND_DATA == sendKinds[slot])
            {
                // Sends complete in posting order: a buffer whose last write completed is in the peer's memory.
                outgoing.recycleThrough(sequence);
            }
            else if (KIND_DISCONNECT == sendKinds[slot])
            {
                disconnectCompleted = true;
            }
        }
        return work;
    }

    private int takeReceiveCompletions()
    {
        int work = 0;
        Descriptor done;
        while (null != (done = vi.recvDone()))
        {
            final int slot = (int)(receivesCompleted++ % ControlRegionLayout.RECEIVE_SLOTS);
            work++;
            final int status = done.status();
            if (done.hasError())
            {
                broken("a receive", status);
                continue;
            }
            if (null != failure)
            {
                // Once the peer broke the protocol, which export a write landed in is a guess: nothing
                // more is handed out as filled.
                continue;
            }
            if (ViplDescriptor.STATUS_OP_REMOTE_RDMA_WRITE == (status & ViplDescriptor.STATUS_OP_MASK))
            {
                onWrite(status, done.immediateData());
            }
            else
            {
                onMessage(slot, done.length());
            }
            if (null == failure)
            {
                postReceive(slot);
                credits.reposted();
            }
        }
        return work;
    }

    /** The peer filled the oldest exported buffer: the immediate data is how many bytes. */
    private void onWrite(final int status, final int bytes)
    {
        final PciBuffer buffer = preposted.oldestExported();
        if (0 == (status & ViplDescriptor.STATUS_IMMEDIATE) || null == buffer || bytes < 1 || bytes > buffer.length())
        {
            fail(PciCommException.Reason.CONNECTION_LOST, "the peer wrote " + bytes + " bytes into " +
                (null == buffer ? "no exported buffer" : "an exported buffer of " + buffer.length()) +
                ": not a PCIComm peer, or a broken one");
            return;
        }
        preposted.fillOldest(bytes);
        stats.buffersFilled++;
        stats.bytesReceived += bytes;
    }

    private void onMessage(final int slot, final int length)
    {
        // Writer: the NIC, by DMA, before the receive descriptor's status (release), which recvDone read
        // with acquire before this call: plain reads of the message are enough.
        final int at = ControlRegionLayout.receiveMessageOffset(slot);
        final String bad = PciCommMessage.check(controlBuffer, at, length, maxTransfer);
        if (null != bad)
        {
            fail(PciCommException.Reason.CONNECTION_LOST, "the peer sent " + bad);
            return;
        }
        final PciCommMessage m = message.wrap(controlBuffer, at);
        if (!credits.returned(m.credits()))
        {
            fail(PciCommException.Reason.CONNECTION_LOST, "the peer returned " + m.credits() + " credits with " +
                credits.credits() + " of " + credits.slots() + " held");
            return;
        }
        switch (m.type())
        {
            case PciCommMessage.EXPORT:
                if (!remote.canTake(m.entryCount()))
                {
                    fail(PciCommException.Reason.CONNECTION_LOST, "the peer exported " + m.entryCount() +
                        " more buffers with " + remote.size() + " unfilled: more than the " + RemoteExports.MAX_EXPORTS +
                        " an end may have preposted");
                    return;
                }
                for (int i = 0; i < m.entryCount(); i++)
                {
                    remote.add(m.entryAddress(i), m.entryHandle(i), m.entryLength(i));
                }
                break;

            case PciCommMessage.DISCONNECT:
                peerClosed = true;
                break;

            default:
                // CREDIT: its credits are all it carries.
        }
    }

    /**
     * An error completion. Once the peer said DISCONNECT, its end of the VI going away flushes what is
     * still posted here: that is the close, not a failure.
     */
    private void broken(final String what, final int status)
    {
        if (peerClosed)
        {
            peerGone = true;
            return;
        }
        fail(PciCommException.Reason.CONNECTION_LOST, 0 != (status & ViplDescriptor.STATUS_DESC_FLUSHED_ERROR) ?
            "the connection broke: the peer died or left without disconnecting (" + what + " was flushed, status 0x" +
            Integer.toHexString(status) + ")" :
            "the NIC completed " + what + " with status 0x" + Integer.toHexString(status));
    }

    // ---------------------------------------------------------------------------------------------
    // Posting.
    // ---------------------------------------------------------------------------------------------

    private boolean sendSlotFree()
    {
        return sendsPosted - sendsCompleted < ControlRegionLayout.SEND_SLOTS;
    }

    /** Exports every preposted buffer not yet exported, up to a message's worth at a time. */
    private int postExports()
    {
        int work = 0;
        while (preposted.hasToExport() && credits.canSend(CreditWindow.KEEP_FOR_DATA) && sendSlotFree())
        {
            final int slot = (int)(sendsPosted % ControlRegionLayout.SEND_SLOTS);
            final PciCommMessage m = message.wrap(controlBuffer, ControlRegionLayout.sendMessageOffset(slot));
            int n = 0;
            while (n < PciCommMessage.MAX_ENTRIES && preposted.hasToExport())
            {
                final PciBuffer buffer = preposted.nextToExport();
                m.entry(n++, buffer.address(), buffer.handle(), buffer.length());
            }
            m.type(PciCommMessage.EXPORT).entryCount(n).credits(credits.takeOwed());
            stats.buffersExported += n;
            postControl(slot, KIND_CONTROL, m.length());
            work++;
        }
        return work;
    }

    /** Fills the peer's exported buffers from the outgoing queue, one RDMA write with immediate data each. */
    private int postWrites()
    {
        int work = 0;
        while (!outgoing.isWritten() && !remote.isEmpty() && credits.canSend(CreditWindow.KEEP_FOR_DATA) &&
            sendSlotFree())
        {
            final PciBuffer buffer = outgoing.head();
            final int bytes = Math.min(Math.min(buffer.length() - buffer.posted, remote.length()), maxTransfer);
            final long sequence = sendsPosted;
            final int slot = (int)(sequence % ControlRegionLayout.SEND_SLOTS);
            final Descriptor d = sends[slot];
            d.fields().reset().control(ViplDescriptor.OP_RDMA_WRITE | ViplDescriptor.CONTROL_IMMEDIATE)
                .segmentCount(1).length(bytes).immediateData(bytes)
                .addressSegment(remote.address(), remote.handle())
                .dataSegment(0, buffer.address(buffer.posted), buffer.handle(), bytes);
            remote.remove();
            sendKinds[slot] = KIND_DATA;
            post(d);
            outgoing.wrote(buffer, bytes, sequence);
            stats.dataWrites++;
            stats.dataBytesWritten += bytes;
            work++;
        }
        return work;
    }

    private int postCredits()
    {
        if (credits.shouldReturn() && credits.canSend(CreditWindow.KEEP_FOR_CREDIT) && sendSlotFree())
        {
            final int slot = (int)(sendsPosted % ControlRegionLayout.SEND_SLOTS);
            final PciCommMessage m = message.wrap(controlBuffer, ControlRegionLayout.sendMessageOffset(slot));
            m.type(PciCommMessage.CREDIT).entryCount(0).credits(credits.takeOwed());
            stats.creditMessagesSent++;
            postControl(slot, KIND_CONTROL, m.length());
            return 1;
        }
        return 0;
    }

    /** This end's last message: after the queued data when closing, at once when the peer closed first. */
    private int postDisconnect()
    {
        if (disconnectPosted || !credits.canSend(CreditWindow.KEEP_FOR_DISCONNECT) || !sendSlotFree())
        {
            return 0;
        }
        final int slot = (int)(sendsPosted % ControlRegionLayout.SEND_SLOTS);
        final PciCommMessage m = message.wrap(controlBuffer, ControlRegionLayout.sendMessageOffset(slot));
        m.type(PciCommMessage.DISCONNECT).entryCount(0).credits(credits.takeOwed());
        postControl(slot, KIND_DISCONNECT, m.length());
        disconnectPosted = true;
        return 1;
    }

    private void postControl(final int slot, final int kind, final int length)
    {
        final Descriptor d = sends[slot];
        d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(length)
            .dataSegment(0, control.address(ControlRegionLayout.sendMessageOffset(slot)),
                controlRegion.handle(), length);
        sendKinds[slot] = kind;
        stats.controlMessagesSent++;
        stats.controlBytesSent += length;
        post(d);
    }

    private void post(final Descriptor d)
    {
        credits.sent();
        sendsPosted++;
        try
        {
            // Reader of the descriptor (and a control send's message), written with plain stores: this
            // node's NIC, after the Command Queue entry the post publishes with release.
            vi.postSend(d, controlRegion);
        }
        catch (final ViplException ex)
        {
            fail(PciCommException.Reason.CONNECTION_LOST, "the VIPL refused a send: " + ex.getMessage());
        }
    }

    private void postReceive(final int slot)
    {
        final Descriptor d = receives[slot];
        d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, control.address(ControlRegionLayout.receiveMessageOffset(slot)),
                controlRegion.handle(), PciCommMessage.MAX_LENGTH);
        try
        {
            vi.postRecv(d, controlRegion);
        }
        catch (final ViplException ex)
        {
            fail(PciCommException.Reason.CONNECTION_LOST, "the VIPL refused a receive: " + ex.getMessage());
        }
    }
}
