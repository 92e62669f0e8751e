package org.qnix.pcicomm;

import java.util.ArrayDeque;

/**
 * This end's preposted buffers (seed 000, 5.2.3: the receiver's kiobufs, exported to the peer), in
 * order, from preposted (not yet exported) to exported (the peer may fill it) to filled (an RDMA write
 * with immediate data landed in it) and back to the application with {@link #takeFilled()}. The peer
 * fills exports in the order they were exported, so the oldest export is the one each write names.
 * Not thread safe: the {@link PciCommDevice} it belongs to is used under its connection's monitor.
 *
 * <pre>{@code
 * if (buffers.canPrepost()) { buffers.prepost(buffer, length); }     // PciConnection.prepostRecv
 * PciBuffer next = buffers.nextToExport();                          // into an EXPORT message
 * if (null != buffers.oldestExported()) { buffers.fillOldest(bytes); }    // a write's completion
 * PciBuffer received = buffers.takeFilled();
 * }</pre>
 */
final class PrepostedBuffers
{
    /** Preposted, not yet exported; exported, not yet filled; filled, not yet received. */
    private final ArrayDeque<PciBuffer> toExport = new ArrayDeque<>();
    private final ArrayDeque<PciBuffer> exported = new ArrayDeque<>();
    private final ArrayDeque<PciBuffer> filled = new ArrayDeque<>();

    /** @return true if one more buffer may be preposted: the peer refuses more than {@link RemoteExports#MAX_EXPORTS}. */
    boolean canPrepost()
    {
        return toExport.size() + exported.size() < RemoteExports.MAX_EXPORTS;
    }

    /** The application preposts {@code length} bytes of {@code buffer}: the library holds it from now on. */
    void prepost(final PciBuffer buffer, final int length)
    {
        buffer.length(length);
        buffer.owner = PciBuffer.PREPOSTED;
        toExport.addLast(buffer);
    }

    boolean hasToExport()
    {
        return !toExport.isEmpty();
    }

    /** @return the oldest preposted buffer not yet exported, now exported (the caller names it to the peer). */
    PciBuffer nextToExport()
    {
        final PciBuffer buffer = toExport.pollFirst();
        exported.addLast(buffer);
        return buffer;
    }

    /** @return the oldest exported buffer: the one the peer's next write fills; null if none. */
    PciBuffer oldestExported()
    {
        return exported.peekFirst();
    }

    /** The peer's write filled {@link #oldestExported()} with {@code bytes} (the caller checked them). */
    void fillOldest(final int bytes)
    {
        final PciBuffer buffer = exported.pollFirst();
        buffer.length(bytes);
        filled.addLast(buffer);
    }

    /** @return the oldest filled buffer, now the application's, or null. */
    PciBuffer takeFilled()
    {
        return PciBuffer.handBack(filled);
    }
}
