package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaPacketHeader;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * What a receiving NIC checks on every VIA packet (issue 14), stepped by hand: an RDMA write's target
 * on every packet, not only the first, so a region whose write enable is taken away mid-message stops
 * the write at that packet with nothing written from it; and that each packet continues its message
 * exactly (the first at offset 0, each next one where the last ended, none past the declared length),
 * so a forged or inconsistent packet writes nothing, is dropped and counted, and breaks a reliable
 * connection.
 */
class ViaPacketChecksTest extends ViaSteppedTest
{
    @Test
    void anRdmaWriteStopsAtThePacketThatFindsTheWriteEnableGone()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        cluster.onePacketPerCycle();
        final int target = b.registerRegion(2, DATA, 8192, PTAG_B, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        cluster.settle();
        a.memory.fill(DATA, 4000, 29);
        rdmaWrite(b.address(DATA), target, 0, 3000, 0);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        final NicControlProgram nicA = cluster.nics.get(0);
        final NicControlProgram nicB = cluster.nics.get(1);
        while (counter(0, NicCounters.DATA_PACKETS_SENT) < 1)
        {
            nicA.doWork();
        }
        nicB.doWork();
        assertRange(b, DATA, bytesOf(a, DATA, 1024), 0, 1024);

        // VipSetMemAttributes: the same region, its RDMA write enable taken away, between two packets.
        assertEquals(target, b.registerRegion(2, DATA, 8192, PTAG_B, 0));
        cluster.settle();
        assertUntouched(b, DATA + 1024, AREA - DATA - 1024);
        assertEquals(ViTableEntry.STATE_ERROR, b.vi(RECEIVE_VI).state());
        assertEquals(ViaProcessStructuresLayout.ERROR_RDMAW_PROT, b.asyncError(0));
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state(), "OP_ERROR told the writer");
    }

    @Test
    void aFirstPacketLongerThanItsMessageWritesNothingAndBreaksAReliableConnection()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        final ViplDescriptor recv = postedReceive(2048);
        forge(ViaPacketHeader.OP_SEND, 0, 150, (byte)1)
            .flags(ViaPacketHeader.FLAG_FIRST | ViaPacketHeader.FLAG_LAST).messageLength(100);
        deliver();
        cluster.settle();
        assertUntouched(b, DATA, AREA - DATA);
        assertEquals(1, counter(1, NicCounters.PACKETS_DROPPED));
        assertEquals(ViTableEntry.STATE_ERROR, b.vi(RECEIVE_VI).state());
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, recv.status());
        assertEquals(ViaProcessStructuresLayout.ERROR_RDMA_TRANSPORT, b.asyncError(0));
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state(), "OP_ERROR told the sender");
    }

    @Test
    void anRdmaWritesFirstPacketAtAnotherOffsetWritesNothingAndAnUnreliableConnectionStays()
    {
        connect(ViTableEntry.UNRELIABLE, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final int target = b.registerRegion(2, DATA, 8192, PTAG_B, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        cluster.settle();
        // Checked for [address, address + 100), it would have written at address + 1000.
        forge(ViaPacketHeader.OP_RDMA_WRITE, 0, 100, (byte)2)
            .flags(ViaPacketHeader.FLAG_FIRST | ViaPacketHeader.FLAG_LAST).messageLength(1100).messageOffset(1000)
            .remoteHandle(target).remoteAddress(b.address(DATA));
        deliver();
        cluster.settle();
        assertUntouched(b, DATA, AREA - DATA);
        assertEquals(1, counter(1, NicCounters.PACKETS_DROPPED));
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state());
    }

    @Test
    void aPacketPastItsMessagesLengthIsDroppedAndTheMessageStillEndsWhole()
    {
        connect(ViTableEntry.UNRELIABLE);
        final ViplDescriptor recv = postedReceive(2048);
        forge(ViaPacketHeader.OP_SEND, 0, 1024, (byte)3).flags(ViaPacketHeader.FLAG_FIRST).messageLength(1100);
        deliver();
        // 200 bytes at 1024 of a message of 1100: 124 of them past its end, though inside the receive.
        forge(ViaPacketHeader.OP_SEND, 0, 200, (byte)4).flags(ViaPacketHeader.FLAG_LAST).messageLength(1100)
            .messageOffset(1024);
        deliver();
        cluster.settle();
        assertFalse(recv.isDone());
        assertEquals(1, counter(1, NicCounters.PACKETS_DROPPED));
        assertUntouched(b, DATA + 1024, AREA - DATA - 1024);

        forge(ViaPacketHeader.OP_SEND, 0, 76, (byte)5).flags(ViaPacketHeader.FLAG_LAST).messageLength(1100)
            .messageOffset(1024);
        deliver();
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status());
        assertEquals(1100, recv.length());
        for (int i = 0; i < 1100; i++)
        {
            assertEquals(i < 1024 ? 3 : 5, b.memory.areaByte(DATA + i), "byte " + i);
        }
        assertUntouched(b, DATA + 1100, AREA - DATA - 1100);
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state());
    }
}
