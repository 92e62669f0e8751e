package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplDescriptor;

/**
 * How VIA descriptors complete when something fails (issue 14; VIA 1.0: a queue completes in posting
 * order), stepped by hand: a bad post on a reliable VI completes after the older descriptors the
 * Error state flushes; a send failing behind unacknowledged ones carries its own error, the others
 * DESC_FLUSHED; every error and flush reports the op of its descriptor; and a VI made again in its
 * table entry sees nothing of the previous VI's completions.
 */
class ViaCompletionOrderTest extends ViaSteppedTest
{
    /**
     * The order is seen through two descriptors whose control segments overlap: the misaligned one,
     * 8 bytes into the other, has its immediate data word where the other has its status, so the word
     * holds what the later completion wrote there.
     */
    @Test
    void aBadPostOnAReliableViCompletesAfterTheOlderDescriptorsItsErrorFlushes()
    {
        connect(ViTableEntry.RELIABLE_RECEPTION);
        final ViplDescriptor older = a.descriptor(DESCRIPTORS + 64).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, a.address(DATA), handleA, 100);
        a.postRecv(SEND_VI, handleA, DESCRIPTORS + 64);
        cluster.settle();
        final ViplDescriptor misaligned = a.descriptor(DESCRIPTORS + 72).control(ViplDescriptor.OP_SEND);
        a.postRecv(SEND_VI, handleA, DESCRIPTORS + 72);
        cluster.settle();

        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE | ViplDescriptor.STATUS_FORMAT_ERROR,
            misaligned.status());
        assertEquals(0, older.status(), "the bad post's completion (immediate data 0) was written last");
        assertEquals(2, a.receivesCompleted(0));
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state());
    }

    @Test
    void aSendFailingBehindUnacknowledgedOnesCarriesItsOwnErrorAndTheOthersAreFlushed()
    {
        connect(ViTableEntry.RELIABLE_RECEPTION);
        oneSegmentReceive(0, 2048);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
        cluster.settle();
        a.memory.fill(DATA, 300, 31);
        final ViplDescriptor first = oneSegmentSend(0, 100);
        final ViplDescriptor second = a.descriptor(DESCRIPTORS + 128).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .length(10).dataSegment(0, a.address(DATA), handleA, 10);
        final ViplDescriptor third = a.descriptor(DESCRIPTORS + 256).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .length(10).dataSegment(0, a.address(DATA), handleA, 10);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 128);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 256);
        final NicControlProgram nicA = cluster.nics.get(0);
        while (counter(0, NicCounters.DATA_PACKETS_SENT) < 1)
        {
            nicA.doWork();
        }
        // The first is on the wire, unacknowledged (b's NIC has not run); the second goes bad before it starts.
        second.length(11);
        nicA.doWork();

        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND |
            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, first.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND | ViplDescriptor.STATUS_FORMAT_ERROR,
            second.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND |
            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, third.status());
        assertEquals(3, a.sendsCompleted(0));
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state());
    }

    @Test
    void errorsAndFlushesReportTheOpOfTheirDescriptor()
    {
        connect(ViTableEntry.UNRELIABLE, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final int target = b.registerRegion(2, DATA, 8192, PTAG_B, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        // An RDMA write whose segment runs out of its region: PROTECTION, as an RDMA write.
        final ViplDescriptor outside = a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_RDMA_WRITE)
            .segmentCount(1).length(100).addressSegment(b.address(DATA), target)
            .dataSegment(0, a.address(AREA - 50), handleA, 100);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_WRITE |
            ViplDescriptor.STATUS_PROTECTION_ERROR, outside.status());

        // In the Error state an RDMA write is flushed as one.
        cluster.post(0, DriverCommand.VIA_CONNECTION_LOST, new ProcessName(0, 0), 77, SEND_VI, 0, 0);
        cluster.settle();
        final ViplDescriptor write = rdmaWrite(b.address(DATA), target, 0, 100, 0);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_WRITE |
            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, write.status());
        assertUntouched(b, DATA, AREA - DATA);
    }

    @Test
    void aViMadeAgainInItsTableEntrySeesNothingOfThePreviousVisWork()
    {
        // A second VIA process on a's node takes a's VI table entry after a destroyed its VI.
        final SteppedViaProcess c = new SteppedViaProcess(cluster, 0, 1);
        c.register();
        cluster.settle();
        a.createVi(SEND_VI, 0, PTAG_A, ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.NO_CQ);
        final ViplDescriptor posted = a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, a.address(DATA), handleA, 100);
        a.postRecv(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        // VipDestroyVi of an Idle VI and VipCreateVi are the driver's alone: the NIC is not told.
        a.vi(SEND_VI).publishState(ViTableEntry.STATE_FREE);
        c.createVi(SEND_VI, 0, 33, ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.NO_CQ);
        cluster.post(0, DriverCommand.VIA_DISCONNECT, new ProcessName(0, 0), 0, SEND_VI, 0, c.index);
        cluster.settle();

        assertEquals(0, c.asyncEvents(), "nothing of a's receive reaches c");
        assertEquals(0, c.receivesCompleted(0));
        assertEquals(0, posted.status());
    }
}
