package org.qnix.pcicomm;

import java.util.ArrayDeque;

/**
 * The outgoing queue of a connection (seed 000, 5.2: the device's queue of buffers to transmit): the
 * buffers the application sent, in order, from queued (not all of their bytes written yet) to in
 * flight (every write posted, not all completed) to recycled (their last write completed, so they
 * are in the peer's memory: Reliable Reception) and back to the application with
 * {@link #takeRecycled()}. When the connection ends, what never reached the peer goes back to the
 * application at once, counted for the exception that says so. Not thread safe: the
 * {@link PciCommDevice} it belongs to is used under its connection's monitor.
 *
 * <pre>{@code
 * queue.add(buffer, length);                  // PciConnection.send
 * PciBuffer head = queue.head();              // the device writes it into the peer's exports
 * queue.wrote(head, bytes, sequence);
 * queue.recycleThrough(completedSequence);    // a send completion
 * PciBuffer back = queue.takeRecycled();
 * }</pre>
 */
final class OutgoingQueue
{
    /** Sent, not all posted; all posted, not completed; completed, not yet recycled. */
    private final ArrayDeque<PciBuffer> queued = new ArrayDeque<>();
    private final ArrayDeque<PciBuffer> inFlight = new ArrayDeque<>();
    private final ArrayDeque<PciBuffer> recycled = new ArrayDeque<>();
    /** Sends given back to the application when the connection ended before they were in the peer's memory. */
    private int sendsHandedBack;
    private long bytesHandedBack;

    /** The application sends {@code length} bytes of {@code buffer}: the library holds it from now on. */
    void add(final PciBuffer buffer, final int length)
    {
        buffer.length(length);
        buffer.posted = 0;
        buffer.owner = PciBuffer.SENDING;
        queued.addLast(buffer);
    }

    /** @return the oldest sent buffer whose bytes are not all written yet, or null. */
    PciBuffer head()
    {
        return queued.peekFirst();
    }

    /** @return true if no sent buffer waits for a write (some may still be in flight). */
    boolean isWritten()
    {
        return queued.isEmpty();
    }

    /**
     * {@code bytes} more of the head were posted as one write of send {@code sequence}; once all its
     * bytes are, the head is in flight until that send completes.
     */
    void wrote(final PciBuffer head, final int bytes, final long sequence)
    {
        head.posted += bytes;
        if (head.posted == head.length())
        {
            head.lastSequence = sequence;
            inFlight.addLast(queued.pollFirst());
        }
    }

    /**
     * Send {@code sequence} completed. A VI's sends complete in posting order, so every buffer whose
     * last write is at or before it is in the peer's memory.
     */
    void recycleThrough(final long sequence)
    {
        while (!inFlight.isEmpty() && inFlight.peekFirst().lastSequence <= sequence)
        {
            recycled.addLast(inFlight.pollFirst());
        }
    }

    /** @return the oldest recycled buffer, now the application's, or null. */
    PciBuffer takeRecycled()
    {
        return PciBuffer.handBack(recycled);
    }

    /** @return true if sent buffers are still with the library (queued or in flight). */
    boolean isSending()
    {
        return !queued.isEmpty() || !inFlight.isEmpty();
    }

    /** @return the bytes queued for sending that no write carried yet. */
    long bytesNotWritten()
    {
        long bytes = 0;
        for (final PciBuffer b : queued)
        {
            bytes += b.length() - b.posted;
        }
        return bytes;
    }

    /**
     * The connection ended (closed or broken): the sends still queued will not be written, and those in
     * flight are not known to have landed (their completions were flushed, or never came), so their
     * buffers go back to the application, counted first. The caller disconnected the VI before: the
     * NIC no longer reads them.
     */
    void handBackUnsent()
    {
        sendsHandedBack += queued.size() + inFlight.size();
        bytesHandedBack += bytesNotWritten();
        for (final PciBuffer b : inFlight)
        {
            bytesHandedBack += b.length();
        }
        PciBuffer.handBackAll(queued);
        PciBuffer.handBackAll(inFlight);
    }

    /**
     * @param peerClosed true once the peer said DISCONNECT: nothing queued will be written any more.
     * @return what of this end's sends will not reach the peer, in words, or null if nothing.
     */
    String unsent(final boolean peerClosed)
    {
        final int sends = sendsHandedBack + (peerClosed ? queued.size() : 0);
        if (0 == sends)
        {
            return null;
        }
        return sends + (1 == sends ? " send" : " sends") + " queued here (up to " +
            (bytesHandedBack + (peerClosed ? bytesNotWritten() : 0)) + " bytes) did not reach the peer's memory" +
            (0 == sendsHandedBack ? "" : "; their buffers are back with the application");
    }
}
