package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.Test;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplDescriptor;

/**
 * How VIA descriptors complete when something fails (issue 14; VIA 1.0: a queue completes in posting
 * order), stepped by hand: a bad post on a reliable VI completes after the older descriptors the
 * Error state flushes; a send failing behind unacknowledged ones carries its own error, the others
 * DESC_FLUSHED; on an Unreliable VI, which stays connected, a bad post of either queue completes
 * after the older descriptors in progress; every error and flush reports the op of its descriptor; and
 * a VI made again in its table entry, for another process or the same one, sees nothing of the
 * previous VI's work, nor of the connection commands the driver posted for it.
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
        postedReceive(2048);
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
        a.connectionLost(SEND_VI, 77);
        cluster.settle();
        final ViplDescriptor write = rdmaWrite(b.address(DATA), target, 0, 100, 0);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_WRITE |
            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, write.status());
        assertUntouched(b, DATA, AREA - DATA);
    }

    /**
     * a's NIC is silent (a debugger's breakpoint) longer than the driver waits for a command: the driver
     * gives up on its Via_Connect and Via_Disconnect and writes the VI entry itself each time, and the
     * process destroys the VI and makes it again in the same entry. When the NIC runs again it takes both
     * commands, which are for the previous VI (its Generation): refused, so the new VI is neither
     * connected to the old peer nor has its receive flushed.
     */
    @Test
    void connectionCommandsTheDriverGaveUpOnDoNotReachAViMadeAgainInTheirEntry()
    {
        a.createVi(SEND_VI, 0, PTAG_A, ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.NO_CQ);
        b.createVi(RECEIVE_VI, 3, PTAG_B, ViTableEntry.RELIABLE_DELIVERY, CQ);
        final int staleConnect = a.connect(SEND_VI, b, RECEIVE_VI, 77);
        a.vi(SEND_VI).connect(77, NicCoordinates.packedOfIndex(b.node, cluster.params.torusWidth()), RECEIVE_VI,
            ProcessTableLayout.nicPid(b.index));
        final int staleDisconnect = a.disconnect(SEND_VI);
        a.vi(SEND_VI).disconnect();
        a.vi(SEND_VI).publishState(ViTableEntry.STATE_FREE);
        a.createVi(SEND_VI, 0, PTAG_A, ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.NO_CQ);
        final ViplDescriptor fresh = a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, a.address(DATA), handleA, 100);
        a.postRecv(SEND_VI, handleA, DESCRIPTORS);

        cluster.settle();

        assertEquals(Doorbell.BAD_COMMAND, cluster.driverDoorbell(0, staleConnect));
        assertEquals(Doorbell.BAD_COMMAND, cluster.driverDoorbell(0, staleDisconnect));
        assertEquals(ViTableEntry.STATE_IDLE, a.vi(SEND_VI).state(), "not connected to the old peer");
        assertEquals(0, a.vi(SEND_VI).connectionId());
        assertEquals(0, fresh.status(), "the new VI's receive waits, not flushed");
        assertEquals(0, a.asyncEvents());
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
        c.disconnect(SEND_VI);
        cluster.settle();

        assertEquals(0, c.asyncEvents(), "nothing of a's receive reaches c");
        assertEquals(0, c.receivesCompleted(0));
        assertEquals(0, posted.status());
    }

    @Test
    void aBadSendOnAnUnreliableViCompletesAfterTheLongSendInProgressBeforeIt()
    {
        connect(ViTableEntry.UNRELIABLE);
        final ViplDescriptor recv = postedReceive(4096);
        a.memory.fill(DATA, 3000, 13);
        final ViplDescriptor longSend = oneSegmentSend(0, 3000);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        final NicControlProgram nicA = cluster.nics.get(0);
        while (counter(0, NicCounters.DATA_PACKETS_SENT) < 1)
        {
            nicA.doWork();
        }
        // The first of its three packets is out; a misaligned send is posted behind it.
        final ViplDescriptor misaligned = a.descriptor(DESCRIPTORS + 200).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).length(10).dataSegment(0, a.address(DATA), handleA, 10);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 200);
        for (int step = 0; !misaligned.isDone(); step++)
        {
            assertTrue(step < 1000, "the misaligned send never completed");
            nicA.doWork();
            if (counter(0, NicCounters.DATA_PACKETS_SENT) < 3)
            {
                assertFalse(misaligned.isDone(), "completed while the older send was still going out");
                assertEquals(0, a.sendsCompleted(0));
            }
        }
        cluster.settle();

        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, longSend.status());
        assertEquals(3000, longSend.length());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_FORMAT_ERROR, misaligned.status());
        assertEquals(2, a.sendsCompleted(0));
        assertEquals(3, counter(0, NicCounters.DATA_PACKETS_SENT), "nothing of the misaligned send moved");
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status());
        assertEquals(3000, recv.length());
        assertRange(b, DATA, bytesOf(a, DATA, 3000), 0, 3000);
        assertUntouched(b, DATA + 3000, AREA - DATA - 3000);
        assertEquals(ViTableEntry.STATE_CONNECTED, a.vi(SEND_VI).state(), "an Unreliable VI stays connected");

        // The queue goes on: the next send is the next message.
        final ViplDescriptor next = b.descriptor(DESCRIPTORS + 256).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, b.address(DATA + 5000), handleB, 100);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS + 256);
        oneSegmentSend(100, 50);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, next.status());
        assertRange(b, DATA + 5000, bytesOf(a, DATA + 100, 50), 0, 50);
        assertEquals(3, a.sendsCompleted(0));
    }

    @Test
    void aBadReceiveOnAnUnreliableViCompletesAfterTheGoodReceivePostedBeforeIt()
    {
        connect(ViTableEntry.UNRELIABLE);
        final ViplDescriptor good = oneSegmentReceive(0, 4096);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
        // A segment running out of its region: PROTECTION, and nothing written where it points.
        final ViplDescriptor outside = b.descriptor(DESCRIPTORS + 128).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).dataSegment(0, b.address(AREA - 50), handleB, 100);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS + 128);
        cluster.settle();
        assertFalse(outside.isDone(), "the receive posted before it has not completed");
        assertEquals(0, b.receivesCompleted(3));

        a.memory.fill(DATA, 2500, 29);
        final ViplDescriptor send = oneSegmentSend(0, 2500);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        final NicControlProgram nicB = cluster.nics.get(1);
        for (int step = 0; !outside.isDone(); step++)
        {
            assertTrue(step < 1000, "the bad receive never completed");
            cluster.nics.get(0).doWork();
            nicB.doWork();
            assertTrue(!outside.isDone() || good.isDone(), "the bad receive completed before the good one");
        }
        cluster.settle();

        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, good.status());
        assertEquals(2500, good.length());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            ViplDescriptor.STATUS_PROTECTION_ERROR, outside.status());
        assertEquals(0, outside.length());
        assertEquals(2, b.receivesCompleted(3));
        assertRange(b, DATA, bytesOf(a, DATA, 2500), 0, 2500);
        assertUntouched(b, DATA + 2500, AREA - DATA - 2500);
        // Both on the receive CQ, the good one's entry first.
        final AtomicBuffer host = cluster.images.get(1).hostMemory();
        assertEquals(2, host.getIntVolatile((int)ringB + CqRingLayout.TAIL_OFFSET));
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state(), "an Unreliable VI stays connected");
    }

    @Test
    void aBadSendPostedWhileIdleBehindAGoodOneCompletesAfterItOnceConnected()
    {
        a.createVi(SEND_VI, 0, PTAG_A, ViTableEntry.UNRELIABLE, ViTableEntry.NO_CQ);
        b.createVi(RECEIVE_VI, 3, PTAG_B, ViTableEntry.UNRELIABLE, CQ);
        final ViplDescriptor recv = oneSegmentReceive(0, 4096);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
        a.memory.fill(DATA, 2000, 3);
        final ViplDescriptor good = oneSegmentSend(0, 2000);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        final ViplDescriptor badLength = a.descriptor(DESCRIPTORS + 128).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).length(11).dataSegment(0, a.address(DATA), handleA, 10);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 128);
        cluster.settle();
        assertFalse(badLength.isDone(), "the send posted before it has not gone yet");

        a.connect(SEND_VI, b, RECEIVE_VI, 77);
        b.connect(RECEIVE_VI, a, SEND_VI, 77);
        cluster.settle();

        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, good.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND | ViplDescriptor.STATUS_FORMAT_ERROR,
            badLength.status());
        assertEquals(2, a.sendsCompleted(0));
        assertEquals(2000, recv.length());
        assertRange(b, DATA, bytesOf(a, DATA, 2000), 0, 2000);
        assertEquals(2, counter(0, NicCounters.DATA_PACKETS_SENT), "only the good send's packets");
    }

    @Test
    void aViDestroyedWhileIdleAndMadeAgainForTheSameProcessStartsWithEmptyQueues()
    {
        final ViplDescriptor old = aReceiveOnAViDestroyedWhileIdle();
        final int generation = b.vi(RECEIVE_VI).generation();
        // VipCreateVi, like VipDestroyVi of an Idle VI, is the driver's alone: the NIC is not told. Same
        // owner, same connection id (0): only the Generation differs.
        b.createVi(RECEIVE_VI, 3, PTAG_B, ViTableEntry.UNRELIABLE, CQ);
        assertEquals(generation + 1, b.vi(RECEIVE_VI).generation());
        final ViplDescriptor fresh = b.descriptor(DESCRIPTORS + 128).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, b.address(DATA + 5000), handleB, 4096);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS + 128);
        a.createVi(SEND_VI, 0, PTAG_A, ViTableEntry.UNRELIABLE, ViTableEntry.NO_CQ);
        a.connect(SEND_VI, b, RECEIVE_VI, 77);
        b.connect(RECEIVE_VI, a, SEND_VI, 77);
        cluster.settle();

        sentOneSegment(300, 41);
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, fresh.status(),
            "the new VI's own receive is its head");
        assertRange(b, DATA + 5000, bytesOf(a, DATA, 300), 0, 300);
        // The old receive is gone with its VI: the next message finds the queue empty and is dropped.
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(1, b.vi(RECEIVE_VI).dropped());
        // Nor does a flush complete it into the new VI.
        b.disconnect(RECEIVE_VI);
        cluster.settle();

        assertEquals(0, old.status());
        assertUntouched(b, DATA, 5000);
        assertEquals(1, b.receivesCompleted(3));
        assertEquals(1, cluster.images.get(1).hostMemory().getIntVolatile((int)ringB + CqRingLayout.TAIL_OFFSET));
        assertEquals(0, b.asyncEvents());
        assertEquals(0, counter(1, NicCounters.VIA_COMPLETIONS_LOST), "dropped, not completed into the new VI");
    }

    @Test
    void aViMadeAgainForTheSameProcessAndConnectedAtOnceKeepsNothingOfThePreviousVisReceives()
    {
        final ViplDescriptor old = aReceiveOnAViDestroyedWhileIdle();
        // Made again and connected without a post to it in between: Via_Connect finds the old work.
        connect(ViTableEntry.UNRELIABLE);
        sentOneSegment(300, 43);

        assertEquals(0, old.status());
        assertEquals(1, b.vi(RECEIVE_VI).dropped(), "no receive of the new VI: dropped");
        assertEquals(0, b.receivesCompleted(3));
        assertUntouched(b, DATA, AREA - DATA);
    }

    /**
     * An Unreliable receiving VI of b with one receive posted and taken by its NIC, then destroyed while
     * Idle (VipDestroyVi of an Idle VI is the driver's alone: the State goes to Free, the NIC is not told).
     *
     * @return the receive left on the destroyed VI.
     */
    private ViplDescriptor aReceiveOnAViDestroyedWhileIdle()
    {
        b.createVi(RECEIVE_VI, 3, PTAG_B, ViTableEntry.UNRELIABLE, CQ);
        final ViplDescriptor old = postedReceive(4096);
        b.vi(RECEIVE_VI).publishState(ViTableEntry.STATE_FREE);
        return old;
    }
}
