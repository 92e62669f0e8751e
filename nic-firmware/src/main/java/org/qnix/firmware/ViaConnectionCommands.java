package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.Doorbell;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaTablesLayout;

/**
 * The driver commands that tell this NIC of VIA connections (issue 14: "NICs learn of them through
 * driver commands"): Via_Connect, Via_Disconnect and Via_Connection_Lost, applied to the VI table the
 * driver otherwise writes alone. Going through the NIC gives the driver an ordered point at which the
 * NIC has taken the change (the Driver Doorbell): the VIA data path ({@link ViaEngine}) resets or
 * flushes its per-VI work here, and the NIC's own words of the entry (sequence numbers) are written by the NIC.
 * Each command is checked against the entry's owner, Generation and state; a mismatch is a Bad Command.
 * The Generation matters for a NIC that was silent (a debugger's breakpoint): the driver gives up on a
 * command after a while and writes the entry itself, but the command stays queued, and the VI may have
 * been destroyed and made again, for the same process, before this NIC reads it. Applied to the newer
 * VI, a stale Via_Connect would connect it to the old peer and a stale Via_Disconnect or
 * Via_Connection_Lost would flush what the process posted on it.
 *
 * <pre>{@code
 * int doorbell = viaConnections.connect(vi, owner, generation, connectionId, peerNic, peerVi, peerNicPid);
 * }</pre>
 */
final class ViaConnectionCommands
{
    private final AtomicBuffer sdram;
    private final ViaTablesLayout tables;
    private final ProcessSlot[] slots;
    private final ViTableEntry entry = new ViTableEntry();
    private final ViaEngine via;

    ViaConnectionCommands(final FirmwareContext ctx, final ViaEngine via)
    {
        this.via = via;
        this.sdram = ctx.sdram();
        this.tables = ctx.sdramLayout().via();
        this.slots = ctx.processSlots();
    }

    /** Via_Connect: a Connect Pending (client) or Idle (server) VI of a live VIA process becomes Connected. */
    int connect(final int vi, final int owner, final int generation, final int connectionId, final int peerNic,
        final int peerVi, final int peerNicPid)
    {
        final ViTableEntry e = owned(vi, owner, generation);
        if (null == e || 0 == connectionId || owner >= slots.length || null == slots[owner] || !slots[owner].active ||
            !slots[owner].via)
        {
            return Doorbell.BAD_COMMAND;
        }
        final int state = e.state();
        if (ViTableEntry.STATE_PENDING != state && ViTableEntry.STATE_IDLE != state)
        {
            return Doorbell.BAD_COMMAND;
        }
        e.connect(connectionId, peerNic, peerVi, peerNicPid);
        via.connected(vi);
        return Doorbell.DONE;
    }

    /** Via_Disconnect: the VI is Idle, its connection forgotten; its owner may be gone already. */
    int disconnect(final int vi, final int owner, final int generation)
    {
        final ViTableEntry e = owned(vi, owner, generation);
        if (null == e || ViTableEntry.STATE_FREE == e.state())
        {
            return Doorbell.BAD_COMMAND;
        }
        via.disconnecting(vi);
        e.disconnect();
        return Doorbell.DONE;
    }

    /** Via_Connection_Lost: Connected to Error, if the VI is still on that connection. */
    int connectionLost(final int vi, final int owner, final int generation, final int connectionId)
    {
        final ViTableEntry e = owned(vi, owner, generation);
        if (null == e)
        {
            return Doorbell.BAD_COMMAND;
        }
        if (e.connectionId() == connectionId && e.breakConnection())
        {
            via.connectionLost(vi);
        }
        return Doorbell.DONE;
    }

    /**
     * @return the entry of {@code vi} if it exists and holds the VI of Process Table entry {@code owner}
     * the command was posted for (that Generation), else null.
     */
    private ViTableEntry owned(final int vi, final int owner, final int generation)
    {
        if (vi < 0 || vi >= tables.viEntries())
        {
            return null;
        }
        final ViTableEntry e = entry.wrap(sdram, (int)tables.viOffset(vi));
        // Writer: the driver, the Generation before the State (release), so the State is read first.
        return ViTableEntry.STATE_FREE != e.state() && e.owner() == owner && e.generation() == generation ? e : null;
    }
}
