package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.CqRing;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.CqTableEntry;
import org.qnix.abi.Doorbell;
import org.qnix.abi.ViaTablesLayout;

/**
 * Via_Resize_Cq ({@code VipResizeCQ}, {@link org.qnix.abi.DriverCommand#VIA_RESIZE_CQ}): a completion
 * queue moves to a new ring the driver allocated. The NIC is the only writer of a ring's entries and
 * Tail and appends on this same thread ({@link ViaCompletions}), so taking the command between two
 * appends loses no completion: the entries queued in the old ring, {@code [Head, Tail)}, are copied to
 * the same sequence positions of the new one, the new ring gets the old one's Head, Tail and
 * Overflowed, and only then does the CQ table entry name the new ring. The process does not take
 * entries meanwhile (its library holds the CQ for the whole call) and maps the new ring only once
 * the driver answers, after this command's doorbell.
 *
 * <p>The old ring's Head is the process's word: untrusted. A Head that is not within the old ring's
 * queued range is a Bad Command, and nothing moves.
 *
 * <pre>{@code
 * int doorbell = cqResize.resize(cq, owner, generation, oldRing, newRing, newEntries);
 * }</pre>
 */
final class ViaCqResize
{
    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    private final ViaTablesLayout via;
    private final CqTableEntry entry = new CqTableEntry();
    private final CqRing oldRingView = new CqRing();
    private final CqRing newRingView = new CqRing();

    ViaCqResize(final FirmwareContext ctx)
    {
        this.sdram = ctx.sdram();
        this.host = ctx.hostMemory();
        this.via = ctx.sdramLayout().via();
    }

    /**
     * @return Done once the CQ names the new ring; No Resources if the old ring holds more entries than
     * {@code newEntries}; Bad Command if the CQ is not {@code owner}'s of that generation on
     * {@code oldRing}, or a ring does not fit host memory, or the old ring's Head is not sane.
     */
    int resize(final int cq, final int owner, final int generation, final int oldRing, final int newRing,
        final int newEntries)
    {
        if (cq < 0 || cq >= via.cqEntries() || newEntries < 1 || newEntries > ViaTablesLayout.MAX_CQ_ENTRIES)
        {
            return Doorbell.BAD_COMMAND;
        }
        final CqTableEntry e = entry.wrap(sdram, (int)via.cqOffset(cq));
        // Writer: the driver (create, destroy); the command comes after its writes through the queue.
        if (!e.isOwnedBy(owner) || e.generation() != generation || e.ringAddress() != oldRing)
        {
            return Doorbell.BAD_COMMAND;
        }
        final int oldEntries = e.entries();
        if (!fits(oldRing, oldEntries) || !fits(newRing, newEntries))
        {
            return Doorbell.BAD_COMMAND;
        }
        final CqRing from = oldRingView.wrap(host, oldRing, oldEntries);
        final int tail = from.tail();
        // Writer: the process, taking entries; it takes none while its resize call runs.
        final int head = from.headVolatile();
        final int queued = tail - head;
        if (queued < 0 || queued > oldEntries)
        {
            return Doorbell.BAD_COMMAND;
        }
        if (queued > newEntries)
        {
            return Doorbell.NO_RESOURCES;
        }
        from.moveEntriesTo(newRingView.wrap(host, newRing, newEntries), head, tail);
        e.moveRing(newEntries, newRing);
        return Doorbell.DONE;
    }

    private boolean fits(final int ring, final int entries)
    {
        return ring > 0 && (long)ring + CqRingLayout.length(entries) <= host.capacity();
    }
}
