package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.RxFifo;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaPacketHeader;
import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.WireMessageType;

/**
 * What the stepped tests of the VIA data path (issue 14) share: a 2x1 torus with 1 KiB pages, a VIA
 * process on each node, one region over its area, a VI pair connected through Via_Connect (a's
 * {@link #SEND_VI} to b's {@link #RECEIVE_VI}); descriptors in the area posted on the Command Queue;
 * checks of every byte where it lands and of the destination untouched where nothing may move; and a
 * forged VIA packet put in a NIC's input FIFO as if its peer had sent it.
 */
abstract class ViaSteppedTest extends SteppedClusterTest
{
    static final int PTAG_A = 11;
    static final int PTAG_B = 22;
    static final int SEND_VI = 2;
    static final int RECEIVE_VI = 5;
    static final int CQ = 1;
    /** Area layout: descriptors in the first 4 KiB, data after. */
    static final int DESCRIPTORS = 0;
    static final int DATA = 4096;
    static final int AREA = SteppedProcess.AREA_PAGES * 1024;
    static final byte UNTOUCHED = (byte)0x5A;

    SteppedViaProcess a;
    SteppedViaProcess b;
    int handleA;
    int handleB;
    long ringB;
    private UnsafeBuffer forged;

    @BeforeEach
    void setUp()
    {
        cluster = new SteppedCluster(base, SteppedCluster.smallParameters(2, 1).hostMemoryBytes(4 << 20).build());
        a = new SteppedViaProcess(cluster, 0, 0);
        b = new SteppedViaProcess(cluster, 1, 0);
        a.register();
        b.register();
        cluster.settle();
        handleA = a.registerRegion(0, 0, AREA, PTAG_A);
        handleB = b.registerRegion(0, 0, AREA, PTAG_B);
        ringB = b.createCq(CQ, 16);
        fill(b, DATA, AREA - DATA, UNTOUCHED);
    }

    void connect(final int reliability)
    {
        connect(reliability, 0);
    }

    /** @param attributes the receiving VI's RDMA enables. */
    void connect(final int reliability, final int attributes)
    {
        a.createVi(SEND_VI, 0, PTAG_A, reliability, ViTableEntry.NO_CQ);
        b.createVi(RECEIVE_VI, 3, PTAG_B, reliability, CQ, attributes);
        a.connect(SEND_VI, b, RECEIVE_VI, 77);
        b.connect(RECEIVE_VI, a, SEND_VI, 77);
        cluster.settle();
        assertEquals(ViTableEntry.STATE_CONNECTED, a.vi(SEND_VI).state());
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state());
    }


    /** An RDMA write descriptor at a's DESCRIPTORS: two segments of a's data (at 0 and at 2000). */
    ViplDescriptor rdmaWrite(final long remote, final int remoteHandle, final int at, final int first,
        final int second)
    {
        final ViplDescriptor d = a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_RDMA_WRITE)
            .segmentCount(0 == second ? 1 : 2).length(first + second).addressSegment(remote, remoteHandle);
        d.dataSegment(0, a.address(DATA + at), handleA, first);
        if (0 != second)
        {
            d.dataSegment(1, a.address(DATA + 2000), handleA, second);
        }
        return d;
    }

    ViplDescriptor oneSegmentSend(final int at, final int length)
    {
        return a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(1).length(length)
            .dataSegment(0, a.address(DATA + at), handleA, length);
    }

    ViplDescriptor oneSegmentReceive(final int at, final int capacity)
    {
        return b.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, b.address(DATA + at), handleB, capacity);
    }

    /**
     * The arrange step most tests share: b's receive of {@code capacity} bytes into {@link #DATA}
     * ({@link #oneSegmentReceive}), posted on {@link #RECEIVE_VI} and taken by its NIC.
     */
    ViplDescriptor postedReceive(final int capacity)
    {
        final ViplDescriptor recv = oneSegmentReceive(0, capacity);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
        cluster.settle();
        return recv;
    }

    /**
     * The act step several tests share: a's first {@code length} bytes of {@link #DATA} filled from {@code
     * seed}, sent by one {@link #oneSegmentSend} on {@link #SEND_VI}, and the cluster settled.
     */
    ViplDescriptor sentOneSegment(final int length, final int seed)
    {
        a.memory.fill(DATA, length, seed);
        final ViplDescriptor send = oneSegmentSend(0, length);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        return send;
    }

    static byte[] bytesOf(final SteppedViaProcess p, final int offset, final int length)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = p.memory.areaByte(offset + i);
        }
        return bytes;
    }

    void fill(final SteppedViaProcess p, final int offset, final int length, final byte value)
    {
        cluster.images.get(p.node).hostMemory().setMemory((int)p.memory.areaAddress(offset), length, value);
    }

    static void assertRange(final SteppedViaProcess p, final int offset, final byte[] expected,
        final int from, final int length)
    {
        for (int i = 0; i < length; i++)
        {
            assertEquals(expected[from + i], p.memory.areaByte(offset + i), "byte " + (offset + i));
        }
    }

    static void assertUntouched(final SteppedViaProcess p, final int offset, final int length)
    {
        for (int i = 0; i < length; i++)
        {
            assertEquals(UNTOUCHED, p.memory.areaByte(offset + i), "byte " + (offset + i) + " was written");
        }
    }

    /**
     * A VIA packet from a's NIC to b's {@link #RECEIVE_VI} on connection 77, put straight in b's input
     * FIFO: {@code payload} bytes of value {@code value} after the headers.
     *
     * @return the VIA header, to be filled in before {@link #deliver}.
     */
    ViaPacketHeader forge(final int op, final int sequence, final int payload, final byte value)
    {
        forged = new UnsafeBuffer(new byte[PacketHeader.LENGTH + ViaPacketHeader.LENGTH + payload]);
        final int width = cluster.params.torusWidth();
        new PacketHeader().wrap(forged, 0)
            .destination(NicCoordinates.packedOfIndex(1, width)).receiverPid(ProcessTableLayout.nicPid(b.index))
            .source(NicCoordinates.packedOfIndex(0, width)).senderPid(ProcessTableLayout.nicPid(a.index))
            .contextTag(0).packetLength(ViaPacketHeader.LENGTH + payload).counter(0);
        forged.setMemory(PacketHeader.LENGTH + ViaPacketHeader.LENGTH, payload, value);
        return new ViaPacketHeader().wrap(forged, PacketHeader.LENGTH)
            .destinationVi(RECEIVE_VI).connectionId(77).sequence(sequence).op(op);
    }

    /** The packet {@link #forge} made, into b's input FIFO. */
    void deliver()
    {
        if (!new RxFifo(cluster.images.get(1).rxRing()).write(WireMessageType.VIA_PACKET, forged, 0, forged.capacity()))
        {
            throw new IllegalStateException("b's FIFO is full");
        }
    }
}
