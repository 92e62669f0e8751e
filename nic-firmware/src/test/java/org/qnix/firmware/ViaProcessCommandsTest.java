package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.qnix.abi.CommandQueueEntry;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViTableEntry;

/**
 * New_Via_Process and Delete_Via_Process (issue 14), stepped by hand on a 2x1 torus: the entry is
 * active and registered at once with nothing broadcast, the NIC checks the command against the
 * entry's PID and Kind, and a VIA process's posts are taken from its Command Queue (a post naming no
 * VI of the process is rejected) without any QNIX command running on its behalf; the connection commands
 * (Via_Connect, Via_Connection_Lost, Via_Disconnect) move a VI entry only when its owner and state allow.
 */
class ViaProcessCommandsTest extends SteppedClusterTest
{
    private static final ProcessName NO_NAME = new ProcessName(0, 0);
    private static final int PID = 4242;

    @BeforeEach
    void setUp()
    {
        cluster = new SteppedCluster(base, 2, 1);
    }

    @Test
    void aViaProcessIsRegisteredAtOnceAndNothingIsBroadcast()
    {
        prepareEntry(0, 0, PID, ProcessTableLayout.KIND_VIA);
        final long sentBefore = counter(0, NicCounters.SYSTEM_MESSAGES_SENT);
        final int position = cluster.post(0, DriverCommand.NEW_VIA_PROCESS, NO_NAME, PID, 0, 0, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(0, position));
        assertEquals(ProcessTableLayout.STATE_REGISTERED, cluster.processState(0, 0));
        assertEquals(sentBefore, counter(0, NicCounters.SYSTEM_MESSAGES_SENT), "no New_Process, no New_Group");
        assertEquals(0, counter(1, NicCounters.SYSTEM_MESSAGES_RECEIVED));
        assertEquals(0, cluster.nics.get(1).nameTable().size());
        assertEquals(0, cluster.nics.get(0).nameTable().size());

        // A QNIX command, and a VIA post naming a VI that is not its own, are taken and rejected; no
        // doorbell of its rings.
        final AtomicBuffer sdram = cluster.images.get(0).sdram();
        final NicSdramLayout layout = cluster.images.get(0).sdramLayout();
        final CommandQueueEntry entry = new CommandQueueEntry();
        entry.wrap(sdram, (int)(layout.vniOffset(0) + layout.vni().commandOffset(0))).publish(ProcessCommand.SEND, 0, 0, 0);
        entry.wrap(sdram, (int)(layout.vniOffset(0) + layout.vni().commandOffset(1)))
            .publish(ProcessCommand.VIA_POST_SEND, 0, 1, 0);
        cluster.settle();
        assertTrue(entry.isEmpty());
        assertEquals(2, counter(0, NicCounters.COMMANDS_REJECTED));
        assertEquals(0, counter(0, NicCounters.SENDS_COMPLETED));
        assertEquals(Doorbell.FREE, cluster.images.get(0).hostMemory().getIntVolatile(
            (int)(hps(0, 0) + HostProcessStructuresLayout.sendDoorbellOffset(0))));

        final int deleted = cluster.post(0, DriverCommand.DELETE_VIA_PROCESS, NO_NAME, PID, 0, 0, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(0, deleted));
        assertEquals(ProcessTableLayout.STATE_FREE, cluster.processState(0, 0));
        assertEquals(0, counter(1, NicCounters.SYSTEM_MESSAGES_RECEIVED), "no Delete_Process either");
    }

    @Test
    void viaCommandsAreCheckedAgainstTheProcessTableEntry()
    {
        prepareEntry(0, 0, PID, ProcessTableLayout.KIND_QNIX);
        final int wrongKind = cluster.post(0, DriverCommand.NEW_VIA_PROCESS, NO_NAME, PID, 0, 0, 0);
        prepareEntry(0, 1, PID, ProcessTableLayout.KIND_VIA);
        final int wrongPid = cluster.post(0, DriverCommand.NEW_VIA_PROCESS, NO_NAME, PID + 1, 1, 0, 0);
        final int deleteNobody = cluster.post(0, DriverCommand.DELETE_VIA_PROCESS, NO_NAME, PID, 1, 0, 0);
        final int good = cluster.post(0, DriverCommand.NEW_VIA_PROCESS, NO_NAME, PID, 1, 0, 0);
        final int twice = cluster.post(0, DriverCommand.NEW_VIA_PROCESS, NO_NAME, PID, 1, 0, 0);
        final int qnixOverVia = cluster.post(0, DriverCommand.NEW_PROCESS, new ProcessName(3, 0), PID, 1, 3, 1);
        final int deleteAsQnix = cluster.post(0, DriverCommand.DELETE_PROCESS, NO_NAME, PID, 1, 0, 0);
        cluster.settle();
        for (final int position : new int[] {wrongKind, wrongPid, deleteNobody, twice, qnixOverVia, deleteAsQnix})
        {
            assertEquals(Doorbell.BAD_COMMAND, cluster.driverDoorbell(0, position), "position " + position);
        }
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(0, good));
        assertEquals(ProcessTableLayout.STATE_REGISTERED, cluster.processState(0, 1));
        assertEquals(0, cluster.nics.get(0).nameTable().size());
    }

    @Test
    void connectionCommandsMoveTheViEntryAndAreCheckedAgainstItsOwnerAndState()
    {
        prepareEntry(0, 0, PID, ProcessTableLayout.KIND_VIA);
        cluster.post(0, DriverCommand.NEW_VIA_PROCESS, NO_NAME, PID, 0, 0, 0);
        prepareEntry(0, 1, PID + 1, ProcessTableLayout.KIND_QNIX);
        cluster.settle();
        final AtomicBuffer sdram = cluster.images.get(0).sdram();
        final NicSdramLayout layout = cluster.images.get(0).sdramLayout();
        final ViTableEntry vi = new ViTableEntry().wrap(sdram, (int)layout.via().viOffset(5));
        vi.create(0, 77, 0, ViTableEntry.RELIABLE_DELIVERY, 4096, ViTableEntry.NO_CQ, ViTableEntry.NO_CQ, 0, 64);
        final ViTableEntry foreign = new ViTableEntry().wrap(sdram, (int)layout.via().viOffset(6));
        foreign.create(1, 78, 0, ViTableEntry.UNRELIABLE, 0, ViTableEntry.NO_CQ, ViTableEntry.NO_CQ, 0, 64);
        final int peerNic = NicCoordinates.ofIndex(1, 2).packed();

        final int wrongOwner = connect(5, 1, 9);
        final int noId = connect(5, 0, 0);
        final int notVia = connect(6, 1, 9);
        final int freeVi = connect(7, 0, 9);
        cluster.settle();
        for (final int position : new int[] {wrongOwner, noId, notVia, freeVi})
        {
            assertEquals(Doorbell.BAD_COMMAND, cluster.driverDoorbell(0, position), "position " + position);
        }
        assertEquals(ViTableEntry.STATE_IDLE, vi.state());

        final int connected = connect(5, 0, 9);
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(0, connected));
        assertEquals(ViTableEntry.STATE_CONNECTED, vi.state());
        assertEquals(9, vi.connectionId());
        assertEquals(peerNic, vi.peerNic());
        assertEquals(3, vi.peerVi());
        assertEquals(4, vi.peerNicPid());
        assertEquals(0, vi.sendSequence());
        final int twice = connect(5, 0, 10);
        cluster.settle();
        assertEquals(Doorbell.BAD_COMMAND, cluster.driverDoorbell(0, twice), "already connected");

        final int staleLoss = cluster.post(0, DriverCommand.VIA_CONNECTION_LOST, NO_NAME, 8, 5, 0, 0, vi.generation());
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(0, staleLoss));
        assertEquals(ViTableEntry.STATE_CONNECTED, vi.state(), "a loss of an older connection is ignored");
        final int loss = cluster.post(0, DriverCommand.VIA_CONNECTION_LOST, NO_NAME, 9, 5, 0, 0, vi.generation());
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(0, loss));
        assertEquals(ViTableEntry.STATE_ERROR, vi.state());

        final int disconnected = cluster.post(0, DriverCommand.VIA_DISCONNECT, NO_NAME, 0, 5, 0, 0, vi.generation());
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(0, disconnected));
        assertEquals(ViTableEntry.STATE_IDLE, vi.state());
        assertEquals(0, vi.connectionId());
    }

    /** Via_Connect of VI {@code vi} of entry {@code owner} to VI 3 of node 1 (NIC PID 4), for the VI it holds. */
    private int connect(final int vi, final int owner, final int connectionId)
    {
        final NodeImage image = cluster.images.get(0);
        final ViTableEntry entry = new ViTableEntry().wrap(image.sdram(), (int)image.sdramLayout().via().viOffset(vi));
        return cluster.post(0, DriverCommand.VIA_CONNECT, new ProcessName(NicCoordinates.ofIndex(1, 2).packed(), 3),
            connectionId, vi, 4, owner, entry.generation());
    }

    /** What the driver writes before it posts New_Via_Process: the entry's addresses, Kind, then its PID. */
    private void prepareEntry(final int node, final int index, final int pid, final int kind)
    {
        final AtomicBuffer sdram = cluster.images.get(node).sdram();
        final NicSdramLayout layout = cluster.images.get(node).sdramLayout();
        final int entry = (int)layout.processEntryOffset(index);
        final long hps = hps(node, index);
        sdram.putLong(entry + ProcessTableLayout.SEND_DOORBELLS_OFFSET, hps + HostProcessStructuresLayout.sendDoorbellOffset(0));
        sdram.putLong(entry + ProcessTableLayout.RECEIVE_DOORBELLS_OFFSET,
            hps + HostProcessStructuresLayout.receiveDoorbellOffset(cluster.params.contextsPerProcess(), 0));
        sdram.putLong(entry + ProcessTableLayout.PROCESS_CQ_HEAD_OFFSET, hps + HostProcessStructuresLayout.CQ_HEAD_OFFSET);
        sdram.putInt(entry + ProcessTableLayout.KIND_OFFSET, kind);
        sdram.putIntRelease(entry + ProcessTableLayout.PID_OFFSET, pid);
    }

    private long hps(final int node, final int index)
    {
        final int pages = HostProcessStructuresLayout.pages(cluster.params.contextsPerProcess(), cluster.params.pageSize());
        return cluster.images.get(node).hostLayout().pagePoolOffset() + (long)index * pages * cluster.params.pageSize();
    }
}
