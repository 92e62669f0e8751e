package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.Test;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * The VIA data path (issue 14), stepped by hand on a 2x1 torus with 1 KiB pages: a VIA process on each
 * node, one region over its area, a VI pair connected through Via_Connect. Sends and receives are
 * descriptors in the area posted on the Command Queue; every byte is checked where it lands, and where
 * nothing may move the destination is checked untouched.
 */
class ViaDataPathTest extends ViaSteppedTest
{
    @Test
    void aMessageOfSeveralPagesAndSegmentsLandsInThePostedReceiveByteForByte()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        // Receive: three segments (700 + 1500 + 1000 = 3200 bytes) at odd places of b's area.
        final ViplDescriptor recv = b.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(3);
        recv.dataSegment(0, b.address(DATA + 3), handleB, 700)
            .dataSegment(1, b.address(DATA + 5000), handleB, 1500)
            .dataSegment(2, b.address(DATA + 9000), handleB, 1000);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
        // Send: 2900 bytes from two segments (1000 + 1900), with immediate data.
        a.memory.fill(DATA, 4000, 7);
        final ViplDescriptor send = a.descriptor(DESCRIPTORS)
            .control(ViplDescriptor.OP_SEND | ViplDescriptor.CONTROL_IMMEDIATE).segmentCount(2).length(2900)
            .immediateData(0xCAFE);
        send.dataSegment(0, a.address(DATA + 1), handleA, 1000).dataSegment(1, a.address(DATA + 2001), handleA, 1900);
        cluster.settle();
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();

        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE | ViplDescriptor.STATUS_IMMEDIATE,
            recv.status());
        assertEquals(2900, recv.length());
        assertEquals(0xCAFE, recv.immediateData());
        // The send keeps what the program wrote: it can be posted again as it is.
        assertEquals(2900, send.length());
        assertEquals(0xCAFE, send.immediateData());
        assertEquals(1, a.sendsCompleted(0));
        assertEquals(1, b.receivesCompleted(3));
        // The message, in order: a's bytes 1..1000 then 2001..3900, into b's 700, 1500, then 700 of 1000.
        final byte[] message = new byte[2900];
        for (int i = 0; i < 2900; i++)
        {
            message[i] = a.memory.areaByte(DATA + (i < 1000 ? 1 + i : 2001 + i - 1000));
        }
        assertRange(b, DATA + 3, message, 0, 700);
        assertRange(b, DATA + 5000, message, 700, 1500);
        assertRange(b, DATA + 9000, message, 2200, 700);
        assertUntouched(b, DATA + 9700, 300);
        assertUntouched(b, DATA, 3);
        assertUntouched(b, DATA + 703, 5000 - 703);
        // The receive queue's CQ has the entry.
        final AtomicBuffer host = cluster.images.get(1).hostMemory();
        assertEquals(1, host.getIntVolatile((int)ringB + CqRingLayout.TAIL_OFFSET));
        assertEquals(RECEIVE_VI, host.getInt((int)ringB + CqRingLayout.entryOffset(16, 0)));
        assertEquals(CqRingLayout.QUEUE_RECEIVE,
            host.getInt((int)ringB + CqRingLayout.entryOffset(16, 0) + CqRingLayout.ENTRY_QUEUE_OFFSET));
        assertEquals(3, counter(0, NicCounters.DATA_PACKETS_SENT));
    }

    @Test
    void aPacketGatheredFromTheMostSegmentsEachAcrossAPageBoundaryArrivesWhole()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        // One packet (a page of payload) from 64 segments of 16 bytes, each across a page boundary of
        // a's memory: 128 pieces to gather (it overflowed the firmware's piece list once).
        final int segments = ViplDescriptor.MAX_SEGMENTS;
        final int pageSize = cluster.params.pageSize();
        final ViplDescriptor recv = b.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(1);
        recv.dataSegment(0, b.address(DATA), handleB, segments * 16);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
        a.memory.fill(DATA, 2 * pageSize, 11);
        final ViplDescriptor send = a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(segments)
            .length(segments * 16);
        for (int i = 0; i < segments; i++)
        {
            send.dataSegment(i, a.address(DATA + pageSize - 8), handleA, 16);
        }
        cluster.settle();
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();

        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status());
        final byte[] message = new byte[segments * 16];
        for (int i = 0; i < message.length; i++)
        {
            message[i] = a.memory.areaByte(DATA + pageSize - 8 + i % 16);
        }
        assertRange(b, DATA, message, 0, message.length);
        assertEquals(0, counter(0, NicCounters.DUTY_CYCLE_ERRORS));
    }

    @Test
    void sendsAndReceivesCompleteInPostingOrder()
    {
        connect(ViTableEntry.RELIABLE_RECEPTION);
        final int[] lengths = {0, 1, 1024, 1500};
        final ViplDescriptor[] sends = new ViplDescriptor[lengths.length];
        final ViplDescriptor[] recvs = new ViplDescriptor[lengths.length];
        a.memory.fill(DATA, 8000, 3);
        for (int m = 0; m < lengths.length; m++)
        {
            recvs[m] = b.descriptor(DESCRIPTORS + 128 * m).control(ViplDescriptor.OP_SEND).segmentCount(1);
            recvs[m].dataSegment(0, b.address(DATA + 2048 * m), handleB, 2048);
            b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS + 128 * m);
            sends[m] = a.descriptor(DESCRIPTORS + 128 * m).control(ViplDescriptor.OP_SEND).segmentCount(1)
                .length(lengths[m]);
            sends[m].dataSegment(0, a.address(DATA + 2048 * m), handleA, lengths[m]);
        }
        cluster.settle();
        for (int m = 0; m < lengths.length; m++)
        {
            a.postSend(SEND_VI, handleA, DESCRIPTORS + 128 * m);
        }
        // Step by step: a completion never appears before the one posted before it.
        for (int i = 0; i < 200; i++)
        {
            cluster.step();
            for (int m = 1; m < lengths.length; m++)
            {
                assertTrue(!sends[m].isDone() || sends[m - 1].isDone(), "send " + m + " before " + (m - 1));
                assertTrue(!recvs[m].isDone() || recvs[m - 1].isDone(), "receive " + m + " before " + (m - 1));
            }
        }
        for (int m = 0; m < lengths.length; m++)
        {
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, sends[m].status(), "send " + m);
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recvs[m].status(), "recv " + m);
            assertEquals(lengths[m], recvs[m].length());
            for (int i = 0; i < lengths[m]; i++)
            {
                assertEquals(a.memory.areaByte(DATA + 2048 * m + i), b.memory.areaByte(DATA + 2048 * m + i));
            }
            assertUntouched(b, DATA + 2048 * m + lengths[m], 2048 - lengths[m]);
        }
        assertEquals(lengths.length, a.sendsCompleted(0));
        assertEquals(lengths.length, b.receivesCompleted(3));
        assertEquals(lengths.length, a.vi(SEND_VI).sendSequence());
        assertEquals(lengths.length, b.vi(RECEIVE_VI).receiveSequence());
    }

    /**
     * A VI disconnected, destroyed and made again while its entry waits in its process's TX list behind
     * other VIs (a packet a duty cycle) is in that list once after its next post, not twice: it gets one
     * turn of every round, as the others do. Every send then completes.
     */
    @Test
    void aViMadeAgainBeforeItsTxTurnIsInItsProcesssListOnce()
    {
        connect(ViTableEntry.UNRELIABLE);
        final int[] others = {6, 7, 8};
        for (int i = 0; i < others.length; i++)
        {
            a.createVi(others[i], 1 + i, PTAG_A, ViTableEntry.UNRELIABLE, ViTableEntry.NO_CQ);
            a.connect(others[i], b, RECEIVE_VI, 100 + i);
        }
        cluster.settle();
        cluster.onePacketPerCycle();
        final int length = 8 * 1024;
        final ViplDescriptor[] sends = new ViplDescriptor[others.length + 2];
        for (int d = 0; d < sends.length; d++)
        {
            sends[d] = a.descriptor(DESCRIPTORS + 128 * d).control(ViplDescriptor.OP_SEND).segmentCount(1)
                .length(length).dataSegment(0, a.address(DATA), handleA, length);
        }
        // A duty cycle reads one command, then the TX list is the others, then SEND_VI, its head sending a packet.
        for (int i = 0; i < others.length; i++)
        {
            a.postSend(others[i], handleA, DESCRIPTORS + 128 * (1 + i));
        }
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        for (int cycle = 0; cycle < 1 + others.length; cycle++)
        {
            cluster.step();
        }
        assertEquals(1, cluster.nics.get(0).viaTimesScheduled(a.index, SEND_VI));
        a.disconnect(SEND_VI);
        cluster.step();
        a.vi(SEND_VI).publishState(ViTableEntry.STATE_FREE);
        a.createVi(SEND_VI, 0, PTAG_A, ViTableEntry.UNRELIABLE, ViTableEntry.NO_CQ);
        a.connect(SEND_VI, b, RECEIVE_VI, 78);
        cluster.step();
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 128 * (1 + others.length));
        cluster.step();

        assertEquals(1, cluster.nics.get(0).viaTimesScheduled(a.index, SEND_VI));
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND | ViplDescriptor.STATUS_DESC_FLUSHED_ERROR,
            sends[0].status(), "flushed by the disconnect");
        for (int d = 1; d < sends.length; d++)
        {
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, sends[d].status(), "send " + d);
        }
        assertEquals(0, counter(0, NicCounters.DUTY_CYCLE_ERRORS));
    }

    @Test
    void anUnreliableMessageWithNoReceivePostedIsDroppedAndCounted()
    {
        connect(ViTableEntry.UNRELIABLE);
        final ViplDescriptor send = sentOneSegment(100, 9);
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
        assertEquals(0, b.receivesCompleted(3));
        assertEquals(1, b.vi(RECEIVE_VI).dropped());
        assertEquals(1, counter(1, NicCounters.VIA_MESSAGES_DROPPED));
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state());
        assertUntouched(b, DATA, AREA - DATA);

        // The connection goes on: the next message finds its receive.
        final ViplDescriptor recv = postedReceive(200);
        a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(1).length(100)
            .dataSegment(0, a.address(DATA), handleA, 100);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status());
        assertRange(b, DATA, bytesOf(a, DATA, 100), 0, 100);
    }

    @Test
    void reliableDeliveryCompletesBeforeThePeersRxRuns()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        final ViplDescriptor recv = postedReceive(2048);
        final ViplDescriptor send = oneSegmentSend(0, 1500);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        final NicControlProgram nicA = cluster.nics.get(0);
        for (int i = 0; i < 10; i++)
        {
            nicA.doWork();
        }
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
        assertFalse(recv.isDone(), "the peer's NIC has not run");
        cluster.settle();
        assertTrue(recv.isDone());
    }

    @Test
    void reliableReceptionCompletesOnlyAfterThePeerReceived()
    {
        connect(ViTableEntry.RELIABLE_RECEPTION);
        final ViplDescriptor recv = postedReceive(2048);
        final ViplDescriptor send = oneSegmentSend(0, 1500);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        final NicControlProgram nicA = cluster.nics.get(0);
        final NicControlProgram nicB = cluster.nics.get(1);
        for (int i = 0; i < 10; i++)
        {
            nicA.doWork();
        }
        assertFalse(send.isDone(), "every packet is in the peer's FIFO, but nothing is received yet");
        nicB.doWork();
        assertTrue(recv.isDone());
        assertFalse(send.isDone(), "the acknowledgement is in a's FIFO, not yet taken");
        nicA.doWork();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
        assertEquals(1500, send.length());
    }

    @Test
    void aReceiveShorterThanTheMessageIsLengthAndBreaksAReliableConnection()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        final ViplDescriptor recv = oneSegmentReceive(0, 100);
        final ViplDescriptor second = b.descriptor(DESCRIPTORS + 128).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, b.address(DATA + 4096), handleB, 4096);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS + 128);
        cluster.settle();
        oneSegmentSend(0, 500);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE | ViplDescriptor.STATUS_LENGTH_ERROR,
            recv.status());
        assertUntouched(b, DATA, AREA - DATA);
        assertEquals(ViTableEntry.STATE_ERROR, b.vi(RECEIVE_VI).state());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, second.status(), "the rest is flushed");
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state(), "OP_ERROR told the sender");
        assertEquals(1, a.asyncEvents());
        assertEquals(ViaProcessStructuresLayout.ERROR_CONN_LOST, a.asyncError(0));
        assertEquals(1, b.asyncEvents());
    }

    @Test
    void anUnreliableShortReceiveIsLengthAndTheConnectionStays()
    {
        connect(ViTableEntry.UNRELIABLE);
        final ViplDescriptor recv = postedReceive(100);
        oneSegmentSend(0, 500);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE | ViplDescriptor.STATUS_LENGTH_ERROR,
            recv.status());
        assertEquals(500, recv.length());
        assertUntouched(b, DATA, AREA - DATA);
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state());
    }

    @Test
    void badDescriptorsCompleteWithTheirErrorAndMoveNothing()
    {
        connect(ViTableEntry.UNRELIABLE);
        final ViplDescriptor recv = postedReceive(4096);
        // A region of a's under another ptag: a segment naming it is foreign to the VI.
        final int otherPtag = a.registerRegion(1, 8192, 4096, PTAG_A + 1);
        a.memory.fill(DATA, 8000, 5);

        // Misaligned: 8 bytes past a 64-byte boundary.
        final ViplDescriptor misaligned = a.descriptor(DESCRIPTORS + 200).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).length(10).dataSegment(0, a.address(DATA), handleA, 10);
        final ViplDescriptor foreign = a.descriptor(DESCRIPTORS + 256).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).length(10).dataSegment(0, a.address(8192), otherPtag, 10);
        final ViplDescriptor outside = a.descriptor(DESCRIPTORS + 512).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).length(100).dataSegment(0, a.address(AREA - 50), handleA, 100);
        final ViplDescriptor tooMany = a.descriptor(DESCRIPTORS + 768).control(ViplDescriptor.OP_SEND)
            .segmentCount(ViplDescriptor.MAX_SEGMENTS + 1).length(0);
        final ViplDescriptor badLength = a.descriptor(DESCRIPTORS + 832).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).length(11).dataSegment(0, a.address(DATA), handleA, 10);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 200);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 256);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 512);
        cluster.settle();
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 768);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 832);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_FORMAT_ERROR, misaligned.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_PROTECTION_ERROR, foreign.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_PROTECTION_ERROR, outside.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_FORMAT_ERROR, tooMany.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_FORMAT_ERROR, badLength.status());
        assertEquals(0, counter(0, NicCounters.DATA_PACKETS_SENT), "nothing moved");
        assertFalse(recv.isDone());
        assertUntouched(b, DATA, AREA - DATA);
        assertEquals(ViTableEntry.STATE_CONNECTED, a.vi(SEND_VI).state(), "an Unreliable VI stays connected");

        // A good one after them goes through.
        oneSegmentSend(0, 10);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status());
        assertRange(b, DATA, bytesOf(a, DATA, 10), 0, 10);
    }

    @Test
    void aBadDescriptorBreaksAReliableViWhichFlushesEverythingPostedNowAndLater()
    {
        connect(ViTableEntry.RELIABLE_RECEPTION);
        final ViplDescriptor recvA = a.descriptor(DESCRIPTORS + 1024).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).dataSegment(0, a.address(DATA), handleA, 100);
        a.postRecv(SEND_VI, handleA, DESCRIPTORS + 1024);
        final ViplDescriptor recvB = postedReceive(100);
        final ViplDescriptor misaligned = a.descriptor(DESCRIPTORS + 72).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).length(10).dataSegment(0, a.address(DATA), handleA, 10);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 72);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_FORMAT_ERROR, misaligned.status());
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, recvA.status());
        assertEquals(ViTableEntry.STATE_ERROR, b.vi(RECEIVE_VI).state(), "the peer was told (OP_ERROR)");
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, recvB.status());
        assertEquals(1, a.asyncEvents());
        assertEquals(ViaProcessStructuresLayout.ERROR_POST_DESC, a.asyncError(0));

        // Later posts are flushed at once; only disconnect leaves Error.
        final ViplDescriptor later = oneSegmentSend(0, 10);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND |
            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, later.status());
        assertEquals(0, counter(0, NicCounters.DATA_PACKETS_SENT));
        a.disconnect(SEND_VI);
        cluster.settle();
        assertEquals(ViTableEntry.STATE_IDLE, a.vi(SEND_VI).state());
    }

    /**
     * Reliable Reception: b's NIC completes the receive and sends the OP_ACK into a's input FIFO; before
     * a's NIC runs again, the driver tells it the connection is lost (b's process saw its receive and
     * disconnected at once, and the daemon's news overtook the acknowledgement). The send was received,
     * so it completes DONE; only then does the VI go to Error. With the driver command taken first, it
     * completed DESC_FLUSHED (ViplHello's server, "send failed, status 0x21", in a full verify).
     */
    @Test
    void aSendWhoseReceiveCompletedIsDoneWhenTheConnectionLossOvertakesItsAcknowledgement()
    {
        connect(ViTableEntry.RELIABLE_RECEPTION);
        final ViplDescriptor recv = postedReceive(100);
        final ViplDescriptor send = oneSegmentSend(0, 40);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        for (int i = 0; i < 100 && !recv.isDone(); i++)
        {
            cluster.step();
        }
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status());
        assertFalse(send.isDone(), "the acknowledgement waits in a's input FIFO");

        a.connectionLost(SEND_VI, 77);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
        assertEquals(40, send.length());
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state());
        assertEquals(1, a.asyncEvents());
        assertEquals(ViaProcessStructuresLayout.ERROR_CONN_LOST, a.asyncError(0));
    }

    @Test
    void aLostConnectionFlushesWhatIsPosted()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        final ViplDescriptor first = oneSegmentReceive(0, 100);
        final ViplDescriptor second = b.descriptor(DESCRIPTORS + 128).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, b.address(DATA + 100), handleB, 100);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS + 128);
        cluster.settle();
        b.connectionLost(RECEIVE_VI, 77);
        cluster.settle();
        assertEquals(ViTableEntry.STATE_ERROR, b.vi(RECEIVE_VI).state());
        final int flushed = ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR;
        assertEquals(flushed, first.status());
        assertEquals(flushed, second.status());
        assertEquals(2, b.receivesCompleted(3));
        assertEquals(1, b.asyncEvents());
        assertEquals(ViaProcessStructuresLayout.ERROR_CONN_LOST, b.asyncError(0));
    }

    @Test
    void anRdmaWriteLandsAtTheRemoteAddressAndConsumesNoReceive()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final int target = b.registerRegion(2, DATA, 8192, PTAG_B, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final ViplDescriptor recv = postedReceive(100);
        a.memory.fill(DATA, 4000, 13);
        final ViplDescriptor write = rdmaWrite(b.address(DATA + 7), target, 0, 1000, 1500);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_WRITE, write.status());
        assertRange(b, DATA + 7, bytesOf(a, DATA, 1000), 0, 1000);
        assertRange(b, DATA + 1007, bytesOf(a, DATA + 2000, 1500), 0, 1500);
        assertUntouched(b, DATA + 2507, 100);
        assertUntouched(b, DATA, 7);
        assertFalse(recv.isDone(), "no immediate data: no receive consumed");
        assertEquals(0, b.receivesCompleted(3));
    }

    @Test
    void anRdmaWriteWithImmediateDataCompletesAReceiveAndReliableReceptionAcknowledgesIt()
    {
        connect(ViTableEntry.RELIABLE_RECEPTION, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final int target = b.registerRegion(2, DATA, 8192, PTAG_B, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final ViplDescriptor recv = postedReceive(0);
        a.memory.fill(DATA, 4000, 17);
        final ViplDescriptor write = rdmaWrite(b.address(DATA + 4096), target, 0, 2048, 0);
        write.control(ViplDescriptor.OP_RDMA_WRITE | ViplDescriptor.CONTROL_IMMEDIATE).immediateData(0xBEEF);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_WRITE, write.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_REMOTE_RDMA_WRITE |
            ViplDescriptor.STATUS_IMMEDIATE, recv.status());
        assertEquals(0xBEEF, recv.immediateData());
        assertEquals(2048, recv.length());
        assertRange(b, DATA + 4096, bytesOf(a, DATA, 2048), 0, 2048);
        assertUntouched(b, DATA + 4096 + 2048, 100);
    }

    @Test
    void anRdmaWriteWithoutWriteEnableWritesNothingAndBreaksAReliableConnection()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final int noEnable = b.registerRegion(2, DATA, 8192, PTAG_B, 0);
        a.memory.fill(DATA, 4000, 19);
        rdmaWrite(b.address(DATA), noEnable, 0, 3000, 0);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertUntouched(b, DATA, AREA - DATA);
        assertEquals(ViTableEntry.STATE_ERROR, b.vi(RECEIVE_VI).state());
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state());
        assertEquals(1, b.asyncEvents(), "one event for one refused write");
        assertEquals(ViaProcessStructuresLayout.ERROR_RDMAW_PROT, b.asyncError(0));
    }

    @Test
    void anUnreliableRdmaWriteOutOfRangeWritesNothingAndTheConnectionStays()
    {
        connect(ViTableEntry.UNRELIABLE, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final int target = b.registerRegion(2, DATA, 2048, PTAG_B, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        a.memory.fill(DATA, 4000, 23);
        rdmaWrite(b.address(DATA + 1024), target, 0, 2000, 0);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertUntouched(b, DATA, AREA - DATA);
        assertEquals(1, b.asyncEvents());
        assertEquals(ViaProcessStructuresLayout.ERROR_RDMAW_PROT, b.asyncError(0));
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state());
    }
}
