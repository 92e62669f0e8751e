package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * RDMA read and QFENCE (issue 14: "read by request/response, on reliable VIs only; QFENCE waits for
 * earlier reads"), stepped by hand: a reads from a region of b's into its own segments; b's NIC
 * answers without any descriptor of b's, checking the read enable of its VI and region on every
 * response packet. Every byte is checked where it lands; where nothing may move, the destination is
 * checked untouched.
 */
class ViaRdmaReadTest extends ViaSteppedTest
{
    private static final int READ_SOURCE = DATA;
    private static final int SOURCE_LENGTH = 8192;
    /** a's destination area, filled with {@link #UNTOUCHED} before each read. */
    private static final int DESTINATION = DATA + 8192;

    @Test
    void aReadOfSeveralPagesLandsInTheLocalSegmentsByteForByte()
    {
        connect(ViTableEntry.RELIABLE_RECEPTION, ViTableEntry.ATTRIBUTE_RDMA_READ);
        final int source = readableRegion(ViTableEntry.ATTRIBUTE_RDMA_READ);
        // 3000 bytes from 700 bytes into b's region (across three page boundaries) into two segments of a's.
        final ViplDescriptor read = rdmaRead(b.address(READ_SOURCE + 700), source, 3000);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();

        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ, read.status());
        assertEquals(3000, read.length());
        assertRange(a, DESTINATION + 5, bytesOf(b, READ_SOURCE + 700, 1500), 0, 1500);
        assertRange(a, DESTINATION + 3001, bytesOf(b, READ_SOURCE + 2200, 1500), 0, 1500);
        assertUntouched(a, DESTINATION, 5);
        assertUntouched(a, DESTINATION + 1505, 3001 - 1505);
        assertUntouched(a, DESTINATION + 4501, 1000);
        assertEquals(1, a.sendsCompleted(0));
        assertEquals(0, b.receivesCompleted(3), "no descriptor of b's is involved");
        assertEquals(ViTableEntry.STATE_CONNECTED, a.vi(SEND_VI).state());
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state());
    }

    @Test
    void aReadWithoutTheRegionsReadEnableMovesNothingAndFailsOnBothSides()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_READ);
        final int source = readableRegion(ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        assertRefused(rdmaRead(b.address(READ_SOURCE), source, 3000));
    }

    @Test
    void aReadWithoutTheVisReadEnableMovesNothingAndFailsOnBothSides()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final int source = readableRegion(ViTableEntry.ATTRIBUTE_RDMA_READ);
        assertRefused(rdmaRead(b.address(READ_SOURCE), source, 3000));
    }

    @Test
    void aReadStopsAtTheResponsePacketThatFindsTheReadEnableGone()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_READ);
        cluster.onePacketPerCycle();
        final int source = readableRegion(ViTableEntry.ATTRIBUTE_RDMA_READ);
        final ViplDescriptor read = rdmaRead(b.address(READ_SOURCE), source, 3000);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        while (counter(1, NicCounters.DATA_PACKETS_SENT) < 1)
        {
            cluster.step();
        }
        assertEquals(source, b.registerRegion(2, READ_SOURCE, SOURCE_LENGTH, PTAG_B, 0));
        cluster.settle();
        assertEquals(1, counter(1, NicCounters.DATA_PACKETS_SENT), "no response packet after the enable went");
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ |
            ViplDescriptor.STATUS_RDMA_PROT_ERROR, read.status());
        assertUntouched(a, DESTINATION + 5 + 1024, 1500 - 1024);
        assertUntouched(a, DESTINATION + 3001, 1500);
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state());
        assertEquals(ViTableEntry.STATE_ERROR, b.vi(RECEIVE_VI).state());
    }

    @Test
    void aReadOnAnUnreliableViIsAFormatErrorAndMovesNothing()
    {
        connect(ViTableEntry.UNRELIABLE, ViTableEntry.ATTRIBUTE_RDMA_READ);
        final int source = readableRegion(ViTableEntry.ATTRIBUTE_RDMA_READ);
        final ViplDescriptor read = rdmaRead(b.address(READ_SOURCE), source, 3000);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ |
            ViplDescriptor.STATUS_FORMAT_ERROR, read.status());
        assertUntouched(a, DESTINATION, 8192);
        assertEquals(0, counter(0, NicCounters.PACKETS_SENT) - packetsSentAtConnect, "not even a request");
        assertEquals(ViTableEntry.STATE_CONNECTED, a.vi(SEND_VI).state(), "an Unreliable VI stays connected");
    }

    @Test
    void withoutQfenceASendGoesBeforeTheReadsResponseButCompletesAfterTheRead()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_READ);
        final int source = readableRegion(ViTableEntry.ATTRIBUTE_RDMA_READ);
        final ViplDescriptor recv = postedReceive(2048);
        final ViplDescriptor read = rdmaRead(b.address(READ_SOURCE), source, 3000);
        final ViplDescriptor send = sendAfterRead(0);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 256);
        final NicControlProgram nicA = cluster.nics.get(0);
        for (int i = 0; i < 10; i++)
        {
            nicA.doWork();
        }
        assertEquals(1, counter(0, NicCounters.DATA_PACKETS_SENT), "the send went behind the request");
        assertFalse(send.isDone(), "it completes behind the read, which has no response yet");
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ, read.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status());
    }

    @Test
    void aSendWithQfenceStartsOnlyAfterEveryEarlierReadCompleted()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_READ);
        final int source = readableRegion(ViTableEntry.ATTRIBUTE_RDMA_READ);
        final ViplDescriptor recv = postedReceive(2048);
        final ViplDescriptor first = rdmaRead(b.address(READ_SOURCE), source, 3000);
        final ViplDescriptor second = a.descriptor(DESCRIPTORS + 128).control(ViplDescriptor.OP_RDMA_READ)
            .segmentCount(1).length(2000).addressSegment(b.address(READ_SOURCE + 4000), source)
            .dataSegment(0, a.address(DESTINATION + 6000), handleA, 2000);
        final ViplDescriptor fenced = sendAfterRead(ViplDescriptor.CONTROL_QFENCE);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 128);
        a.postSend(SEND_VI, handleA, DESCRIPTORS + 256);
        for (int i = 0; i < 200; i++)
        {
            cluster.step();
            assertTrue(0 == counter(0, NicCounters.DATA_PACKETS_SENT) || first.isDone() && second.isDone(),
                "the fenced send started before the reads completed");
        }
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ, first.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ, second.status());
        assertRange(a, DESTINATION + 6000, bytesOf(b, READ_SOURCE + 4000, 2000), 0, 2000);
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, fenced.status());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status());
        assertRange(b, DATA, bytesOf(a, DESTINATION + 5, 100), 0, 100);
    }

    // ---------------------------------------------------------------------------------------------

    private long packetsSentAtConnect;

    @Override
    void connect(final int reliability, final int attributes)
    {
        super.connect(reliability, attributes);
        packetsSentAtConnect = counter(0, NicCounters.PACKETS_SENT);
    }

    /** b's region over [READ_SOURCE, + SOURCE_LENGTH), filled with a pattern; a's destination untouched. */
    private int readableRegion(final int attributes)
    {
        b.memory.fill(READ_SOURCE, SOURCE_LENGTH, 37);
        fill(a, DESTINATION, 8192, UNTOUCHED);
        final int handle = b.registerRegion(2, READ_SOURCE, SOURCE_LENGTH, PTAG_B, attributes);
        cluster.settle();
        return handle;
    }

    /** An RDMA read at a's DESCRIPTORS of {@code length} bytes into two halves at DESTINATION + 5 and + 3001. */
    private ViplDescriptor rdmaRead(final long remote, final int remoteHandle, final int length)
    {
        final int half = length / 2;
        return a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_RDMA_READ).segmentCount(2).length(length)
            .addressSegment(remote, remoteHandle)
            .dataSegment(0, a.address(DESTINATION + 5), handleA, half)
            .dataSegment(1, a.address(DESTINATION + 3001), handleA, length - half);
    }

    /** A send at a's DESCRIPTORS + 256 of the 100 bytes the first read brings to DESTINATION + 5. */
    private ViplDescriptor sendAfterRead(final int control)
    {
        return a.descriptor(DESCRIPTORS + 256).control(ViplDescriptor.OP_SEND | control).segmentCount(1).length(100)
            .dataSegment(0, a.address(DESTINATION + 5), handleA, 100);
    }

    private void assertRefused(final ViplDescriptor read)
    {
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ |
            ViplDescriptor.STATUS_RDMA_PROT_ERROR, read.status());
        assertUntouched(a, DESTINATION, 8192);
        assertEquals(0, counter(1, NicCounters.DATA_PACKETS_SENT), "no response packet");
        assertEquals(ViTableEntry.STATE_ERROR, b.vi(RECEIVE_VI).state());
        assertEquals(ViaProcessStructuresLayout.ERROR_RDMAR_PROT, b.asyncError(0));
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state());
        assertEquals(ViaProcessStructuresLayout.ERROR_RDMAR_PROT, a.asyncError(0));
    }
}
