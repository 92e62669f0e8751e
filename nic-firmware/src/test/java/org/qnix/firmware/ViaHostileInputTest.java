package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.function.LongUnaryOperator;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.qnix.abi.CqRingLayout;
import org.qnix.abi.MemoryRegionEntry;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;

/**
 * Hostile values a VIA process can write into the memory it shares with its NIC (issue 14), stepped by
 * hand on the {@link ViaSteppedTest} cluster, sometimes with a third VIA process ({@link #other},
 * Process Table entry 1 of a's or b's node, its whole area one region filled with a pattern). In every
 * case the NIC keeps running (no exception out of {@code doWork()}, none swallowed by its error handler:
 * {@link #theFirmwareKeptRunning}), the bad post completes with the status the code and
 * docs/IMPLEMENTATION.md ("The VI Provider Library: the data path") give it, or the VI goes to Error
 * with an asynchronous event, and nothing of another VI or process changes:
 *
 * <ol>
 * <li>a post (send and receive queue) naming a VI that is negative, past the VI table, Free, or another
 * process's, even with the owner's own descriptor: rejected, nothing read, queued or completed
 * ({@link #postsNamingAViThatIsNotThePostersAreRejectedAndTouchNothingOfThatVi});</li>
 * <li>a data segment whose memory handle is another process's region (same ptag), a freed region, a
 * stale generation or garbage, at the post or written after it: PROTECTION, nothing moved; a post whose
 * descriptor handle is such a one: rejected with an async event, nothing completed there
 * ({@link #sendSegmentsInAnotherProcesssAFreedOrAStaleRegionAreProtectionErrorsAndMoveNothing},
 * {@link #receiveSegmentsInAnotherProcesssRegionAreProtectionErrorsAndNothingIsWrittenThere},
 * {@link #aPostWhoseDescriptorIsInAnotherProcesssOrAGoneRegionIsRejectedWithAnAsyncEventAndCompletesNothing});</li>
 * <li>a segment count from 65 to 65,535, at the post (65 on the send queue is
 * {@code ViaDataPathTest.badDescriptorsCompleteWithTheirErrorAndMoveNothing}'s) or written after it, when
 * the NIC reads the descriptor again: FORMAT
 * ({@link #aSegmentCountAbove64IsAFormatErrorOnEitherQueueAndMovesNothing},
 * {@link #aSegmentCountRewrittenAbove64AfterThePostIsAFormatErrorWhenTheNicReadsTheDescriptorAgain});</li>
 * <li>a forged CQ Tail and Head, and a forged async-event ring Tail and Head: reduced modulo the ring,
 * a full ring overflowed, and not one byte written outside the words the NIC owns in that process's
 * structures, nor in another process's
 * ({@link #aForgedCqTailOrHeadIsReducedModuloTheRingAndNothingElseIsWritten},
 * {@link #aForgedAsyncEventTailOrHeadIsReducedModuloTheRingAndNothingElseIsWritten});</li>
 * <li>a VI entry whose completion line is not in its owner's VIA Process Structures: the completion
 * dropped and nothing written at that line
 * ({@link #aCompletionLineOutsideItsOwnersStructuresIsNotCountedThere});</li>
 * <li>an RDMA write or read whose remote address is near {@link Long#MAX_VALUE}, overflows there, lies
 * below the region's base or is {@link Long#MIN_VALUE}, or whose remote handle is another process's
 * region with the VI's ptag and the enable: refused, nothing moved, both VIs in Error
 * ({@link #anRdmaWriteToAnAddressOutsideTheRegionByOverflowWritesNothing},
 * {@link #anRdmaReadFromAnAddressOutsideTheRegionByOverflowReadsNothing},
 * {@link #anRdmaWriteNamingAnotherProcesssRegionWritesNothingThere},
 * {@link #anRdmaReadNamingAnotherProcesssRegionReadsNothingOfIt}).</li>
 * </ol>
 */
class ViaHostileInputTest extends ViaSteppedTest
{
    /** The other process's region slot, clear of the slots a and b use here (0, 2, 3). */
    private static final int OTHER_SLOT = 5;
    private static final int OTHER_SEED = 99;
    private static final int OTHER_CQ = 2;
    /** A VI entry of a's node nobody created. */
    private static final int FREE_VI = 9;
    /** The other process's VI on a's node. */
    private static final int OTHERS_VI = 7;
    /** a's receive buffer and RDMA read destination. */
    private static final int DESTINATION = DATA + 8192;

    private SteppedViaProcess other;
    private int handleOther;
    private byte[] otherBefore;

    /** Whatever a test did, neither NIC dropped work on an exception its error handler caught. */
    @AfterEach
    void theFirmwareKeptRunning()
    {
        for (int node = 0; node < 2; node++)
        {
            assertEquals(0, counter(node, NicCounters.DUTY_CYCLE_ERRORS),
                "NIC " + node + " threw in its duty cycle: " + cluster.errorLog(node));
        }
    }

    // ---------------------------------------------------------------------------------------------
    // 1. The VI of a post
    // ---------------------------------------------------------------------------------------------

    /**
     * a's posts naming VIs that are not a's, with a's own valid descriptor, and the other process's
     * posts naming a's VI, with a's descriptors or its own, are rejected: a's descriptors are not
     * completed, nothing is sent, and a's VI keeps its receive queue (b's message lands in the receive a
     * posted before) and its send queue (a's next post goes out as the first message). A send on a Free
     * VI is also in {@code ViaProcessCommandsTest.aViaProcessIsRegisteredAtOnceAndNothingIsBroadcast}.
     */
    @Test
    void postsNamingAViThatIsNotThePostersAreRejectedAndTouchNothingOfThatVi()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        otherProcessOn(0, PTAG_A, 0);
        other.createVi(OTHERS_VI, 0, PTAG_A, ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.NO_CQ);
        final ViplDescriptor bReceive = postedReceive(4096);
        final ViplDescriptor aReceive = a.descriptor(DESCRIPTORS + 1024).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).dataSegment(0, a.address(DESTINATION), handleA, 200);
        a.postRecv(SEND_VI, handleA, DESCRIPTORS + 1024);
        cluster.settle();
        a.memory.fill(DATA, 100, 3);
        final ViplDescriptor aSend = oneSegmentSend(0, 100);
        final ViplDescriptor othersSend = other.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND)
            .segmentCount(1).length(100).dataSegment(0, other.address(DATA), handleOther, 100);
        otherBefore = bytesOf(other, 0, AREA);
        final long rejected = counter(0, NicCounters.COMMANDS_REJECTED);

        final int viEntries = cluster.images.get(0).sdramLayout().via().viEntries();
        for (final int vi : new int[] {-1, Integer.MIN_VALUE, viEntries, Integer.MAX_VALUE, OTHERS_VI})
        {
            a.postSend(vi, handleA, DESCRIPTORS);
            a.postRecv(vi, handleA, DESCRIPTORS);
            cluster.settle();
        }
        a.postRecv(FREE_VI, handleA, DESCRIPTORS);
        // The other process, on a's VI: a's send descriptor, a's posted receive again, its own send.
        other.postSend(SEND_VI, handleA, DESCRIPTORS);
        other.postRecv(SEND_VI, handleA, DESCRIPTORS + 1024);
        other.postSend(SEND_VI, handleOther, DESCRIPTORS);
        cluster.settle();

        assertEquals(rejected + 14, counter(0, NicCounters.COMMANDS_REJECTED), "every post rejected");
        assertEquals(0, aSend.status(), "a's descriptor not completed by a post on a VI not a's");
        assertEquals(0, othersSend.status(), "the other process's descriptor not completed");
        assertEquals(0, aReceive.status(), "a's receive not completed by the other process's post");
        assertEquals(0, counter(0, NicCounters.VIA_DESCRIPTORS_COMPLETED), "nothing completed on a's NIC");
        assertEquals(0, counter(0, NicCounters.DATA_PACKETS_SENT), "nothing sent");
        assertEquals(0, counter(0, NicCounters.VIA_ASYNC_EVENTS), "no async event for anyone");
        assertEquals(ViTableEntry.STATE_CONNECTED, a.vi(SEND_VI).state(), "a's VI still connected");
        assertEquals(0, a.vi(SEND_VI).sendSequence(), "no message started on a's VI");
        assertEquals(ViTableEntry.STATE_IDLE, other.vi(OTHERS_VI).state(), "the other process's VI still Idle");
        assertEquals(ViTableEntry.STATE_FREE, a.vi(FREE_VI).state(), "the Free VI still Free");
        assertEquals(0, other.sendsCompleted(0) + other.receivesCompleted(0), "no completion on the other's VI");
        assertFalse(bReceive.isDone(), "b received nothing");
        assertUntouched(b, DATA, AREA - DATA);
        assertOtherUntouched();

        // a's VI kept its queues: b's message lands in a's receive, a's send is the connection's first message.
        b.memory.fill(DATA + 16384, 100, 21);
        b.descriptor(DESCRIPTORS + 256).control(ViplDescriptor.OP_SEND).segmentCount(1).length(100)
            .dataSegment(0, b.address(DATA + 16384), handleB, 100);
        b.postSend(RECEIVE_VI, handleB, DESCRIPTORS + 256);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, aReceive.status(),
            "a's receive, posted before the other's posts, took b's message");
        assertRange(a, DESTINATION, bytesOf(b, DATA + 16384, 100), 0, 100);
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, aSend.status(), "a's own post went");
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, bReceive.status(),
            "b received a's message");
        assertRange(b, DATA, bytesOf(a, DATA, 100), 0, 100);
        assertEquals(1, a.sendsCompleted(0), "a's send counted once");
        assertOtherUntouched();
    }

    // ---------------------------------------------------------------------------------------------
    // 2. The memory handles of a descriptor
    // ---------------------------------------------------------------------------------------------

    /**
     * On an Unreliable VI (each bad send completes and the VI stays), sends whose segments name the
     * other process's region (with a's very ptag, so only the owner tells them apart), alone or after a
     * good segment, a region a deregistered, a stale generation of a region a registered again, or no
     * region at all, complete PROTECTION and send nothing; so does a good send whose segment is made
     * the other process's after the NIC took the post. None of the other process's bytes leave.
     */
    @Test
    void sendSegmentsInAnotherProcesssAFreedOrAStaleRegionAreProtectionErrorsAndMoveNothing()
    {
        connect(ViTableEntry.UNRELIABLE);
        otherProcessOn(0, PTAG_A, 0);
        final ViplDescriptor recv = postedReceive(4096);
        final int freed = a.registerRegion(2, DATA, 8192, PTAG_A);
        region(0, 2).clear();
        final int stale = a.registerRegion(3, DATA, 8192, PTAG_A);
        assertEquals(MemoryRegionEntry.handle(2, 3), registerAgain(0, 3), "slot 3 registered again");
        a.memory.fill(DATA, 200, 7);

        final int[] handles = {handleOther, freed, stale, -1, MemoryRegionEntry.handle(1, 127)};
        final long[] addresses = {other.address(DATA), a.address(DATA), a.address(DATA), a.address(DATA),
            a.address(DATA)};
        for (int i = 0; i < handles.length; i++)
        {
            final ViplDescriptor send = a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(1)
                .length(100).dataSegment(0, addresses[i], handles[i], 100);
            a.postSend(SEND_VI, handleA, DESCRIPTORS);
            cluster.settle();
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND |
                ViplDescriptor.STATUS_PROTECTION_ERROR, send.status(),
                "segment handle " + Integer.toHexString(handles[i]));
        }
        final ViplDescriptor mixed = a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(2)
            .length(200).dataSegment(0, a.address(DATA), handleA, 100)
            .dataSegment(1, other.address(DATA), handleOther, 100);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND |
            ViplDescriptor.STATUS_PROTECTION_ERROR, mixed.status(), "a good segment, then the other's");

        // Good at its post, the other process's by its first packet.
        final ViplDescriptor rewritten = oneSegmentSend(0, 100);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        final long taken = counter(0, NicCounters.COMMANDS);
        cluster.nics.get(0).doWork();
        assertEquals(taken + 1, counter(0, NicCounters.COMMANDS), "the NIC took the post");
        assertEquals(0, rewritten.status(), "taken, not started");
        rewritten.dataSegment(0, other.address(DATA), handleOther, 100);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND |
            ViplDescriptor.STATUS_PROTECTION_ERROR, rewritten.status(), "checked again at its start");

        assertEquals(0, counter(0, NicCounters.DATA_PACKETS_SENT), "nothing sent");
        assertFalse(recv.isDone(), "b received nothing");
        assertUntouched(b, DATA, AREA - DATA);
        assertEquals(ViTableEntry.STATE_CONNECTED, a.vi(SEND_VI).state(), "an Unreliable VI stays connected");
        assertEquals(0, a.asyncEvents(), "each error is the descriptor's");
        assertOtherUntouched();
    }

    /**
     * b's receive whose segment is the other process's region on b's node (b's ptag) completes
     * PROTECTION at its post, and the message that follows finds no receive; a good receive whose
     * segment is made the other's after its post completes PROTECTION when the message arrives. Not a
     * byte of either message is written into the other process's memory, nor into b's.
     */
    @Test
    void receiveSegmentsInAnotherProcesssRegionAreProtectionErrorsAndNothingIsWrittenThere()
    {
        connect(ViTableEntry.UNRELIABLE);
        otherProcessOn(1, PTAG_B, 0);
        a.memory.fill(DATA, 100, 9);
        final ViplDescriptor atPost = b.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, other.address(DATA), handleOther, 4096);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            ViplDescriptor.STATUS_PROTECTION_ERROR, atPost.status(), "checked at the post");
        oneSegmentSend(0, 100);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(1, b.vi(RECEIVE_VI).dropped(), "the failed receive was not queued: the message found none");

        final ViplDescriptor rewritten = postedReceive(4096);
        rewritten.dataSegment(0, other.address(DATA), handleOther, 4096);
        oneSegmentSend(0, 100);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            ViplDescriptor.STATUS_PROTECTION_ERROR, rewritten.status(), "checked again at the message's first packet");

        assertEquals(2, b.receivesCompleted(3), "both receives completed");
        assertUntouched(b, DATA, AREA - DATA);
        assertOtherUntouched();
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state(), "an Unreliable VI stays connected");
    }

    /**
     * Posts whose descriptor handle is the other process's region (its descriptor there, valid), a
     * region b deregistered, or a stale generation of one b registered again: the NIC cannot write a
     * status, so each is rejected with an async event naming handle and offset ({@code ERROR_POST_DESC},
     * resource descriptor); the other process's descriptor is not completed, nothing is queued, and even
     * a Reliable VI stays connected (docs: "the post is rejected and an async event says so").
     */
    @Test
    void aPostWhoseDescriptorIsInAnotherProcesssOrAGoneRegionIsRejectedWithAnAsyncEventAndCompletesNothing()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY);
        otherProcessOn(1, PTAG_B, 0);
        other.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_SEND).segmentCount(1).length(100)
            .dataSegment(0, other.address(DATA), handleOther, 100);
        otherBefore = bytesOf(other, 0, AREA);
        final int freed = b.registerRegion(2, 0, 4096, PTAG_B);
        region(1, 2).clear();
        final int stale = b.registerRegion(3, 0, 4096, PTAG_B);
        registerAgain(1, 3);
        final long rejected = counter(1, NicCounters.COMMANDS_REJECTED);

        final int[] handles = {handleOther, handleOther, freed, stale};
        final int[] offsets = {DESCRIPTORS, DESCRIPTORS, 64, 128};
        b.postRecv(RECEIVE_VI, handles[0], offsets[0]);
        b.postSend(RECEIVE_VI, handles[1], offsets[1]);
        b.postRecv(RECEIVE_VI, handles[2], offsets[2]);
        b.postRecv(RECEIVE_VI, handles[3], offsets[3]);
        cluster.settle();

        assertEquals(rejected + 4, counter(1, NicCounters.COMMANDS_REJECTED), "every post rejected");
        assertEquals(4, b.asyncEvents(), "one async event a post");
        for (int n = 0; n < 4; n++)
        {
            assertEquals(ViaProcessStructuresLayout.RESOURCE_DESCRIPTOR,
                eventWord(b, n, ViaProcessStructuresLayout.EVENT_RESOURCE_OFFSET), "resource of event " + n);
            assertEquals(ViaProcessStructuresLayout.ERROR_POST_DESC,
                eventWord(b, n, ViaProcessStructuresLayout.EVENT_ERROR_OFFSET), "error of event " + n);
            assertEquals(handles[n], eventWord(b, n, ViaProcessStructuresLayout.EVENT_DESCRIPTOR_HANDLE_OFFSET),
                "handle of event " + n);
            assertEquals(offsets[n], eventWord(b, n, ViaProcessStructuresLayout.EVENT_DESCRIPTOR_OFFSET_OFFSET),
                "offset of event " + n);
            assertEquals(RECEIVE_VI, eventWord(b, n, ViaProcessStructuresLayout.EVENT_VI_OFFSET), "VI of event " + n);
        }
        assertEquals(0, counter(1, NicCounters.VIA_DESCRIPTORS_COMPLETED), "nothing completed on b's NIC");
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state(), "b's VI stays connected");
        assertOtherUntouched();

        // Nothing was queued: the next message lands in the receive b posts now.
        final ViplDescriptor recv = postedReceive(4096);
        sentOneSegment(100, 11);
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status(),
            "b's good receive is the head of its queue");
        assertRange(b, DATA, bytesOf(a, DATA, 100), 0, 100);
        assertEquals(ViTableEntry.STATE_CONNECTED, a.vi(SEND_VI).state(), "a's VI stays connected");
        assertOtherUntouched();
    }

    // ---------------------------------------------------------------------------------------------
    // 3. Segment counts past 64
    // ---------------------------------------------------------------------------------------------

    /**
     * A send, an RDMA write and a receive of {@code count} one-byte segments, each written out where the
     * descriptor fits in its region (1000 do; 65535 would need 1 MiB), complete FORMAT at their post,
     * with nothing sent and nothing of b's area written but the receive's completion words; the VI goes on.
     */
    @ParameterizedTest(name = "{0} segments")
    @ValueSource(ints = {1000, 65535})
    void aSegmentCountAbove64IsAFormatErrorOnEitherQueueAndMovesNothing(final int count)
    {
        connect(ViTableEntry.UNRELIABLE, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final ViplDescriptor send = manySegments(a, handleA, ViplDescriptor.OP_SEND, count, 0);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND | ViplDescriptor.STATUS_FORMAT_ERROR,
            send.status(), "the send");
        final ViplDescriptor write = manySegments(a, handleA, ViplDescriptor.OP_RDMA_WRITE, count, b.address(DATA));
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_WRITE |
            ViplDescriptor.STATUS_FORMAT_ERROR, write.status(), "the RDMA write");
        final ViplDescriptor recv = manySegments(b, handleB, ViplDescriptor.OP_SEND, count, 0);
        final long area = b.memory.areaAddress(0);
        final byte[] before = hostBytes(1, area, AREA);
        b.postRecv(RECEIVE_VI, handleB, DESCRIPTORS);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            ViplDescriptor.STATUS_FORMAT_ERROR, recv.status(), "the receive");
        assertHostUnchangedExcept(1, area, before, area + DESCRIPTORS + ViplDescriptor.IMMEDIATE_DATA_OFFSET,
            ViplDescriptor.CONTROL_SEGMENT_LENGTH - ViplDescriptor.IMMEDIATE_DATA_OFFSET);
        assertEquals(0, counter(0, NicCounters.DATA_PACKETS_SENT), "nothing sent");
        assertEquals(2, a.sendsCompleted(0), "both sends completed");
        assertEquals(1, b.receivesCompleted(3), "the receive completed");

        // The VI goes on.
        final ViplDescriptor good = postedReceive(4096);
        sentOneSegment(100, 15);
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, good.status(),
            "a good message after");
        assertRange(b, DATA, bytesOf(a, DATA, 100), 0, 100);
    }

    /**
     * A good receive whose segment count b sets to {@code count} after its NIC took it, and a good send
     * whose count a sets after its NIC took it but before its first packet, complete FORMAT when the
     * NIC reads them again (the message's first packet; the send's start): nothing is written into b,
     * nothing of the second send leaves.
     */
    @ParameterizedTest(name = "{0} segments")
    @ValueSource(ints = {65, 1000, 65535})
    void aSegmentCountRewrittenAbove64AfterThePostIsAFormatErrorWhenTheNicReadsTheDescriptorAgain(final int count)
    {
        connect(ViTableEntry.UNRELIABLE);
        final ViplDescriptor recv = postedReceive(4096);
        recv.segmentCount(count);
        final ViplDescriptor send = sentOneSegment(100, 17);
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status(),
            "an Unreliable send completes in the peer's FIFO");
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE | ViplDescriptor.STATUS_FORMAT_ERROR,
            recv.status(), "the receive, read again at the message's first packet");
        assertUntouched(b, DATA, AREA - DATA);
        assertEquals(ViTableEntry.STATE_CONNECTED, b.vi(RECEIVE_VI).state(), "an Unreliable VI stays connected");

        final ViplDescriptor second = postedReceive(4096);
        final ViplDescriptor rewritten = oneSegmentSend(0, 100);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        final long taken = counter(0, NicCounters.COMMANDS);
        final long sent = counter(0, NicCounters.DATA_PACKETS_SENT);
        cluster.nics.get(0).doWork();
        assertEquals(taken + 1, counter(0, NicCounters.COMMANDS), "the NIC took the post");
        assertEquals(0, rewritten.status(), "taken, not started");
        rewritten.segmentCount(count);
        cluster.settle();
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND | ViplDescriptor.STATUS_FORMAT_ERROR,
            rewritten.status(), "the send, read again at its start");
        assertEquals(sent, counter(0, NicCounters.DATA_PACKETS_SENT), "nothing of it sent");
        assertFalse(second.isDone(), "b's next receive waits");
        assertUntouched(b, DATA, AREA - DATA);
    }

    // ---------------------------------------------------------------------------------------------
    // 4. Forged ring indexes
    // ---------------------------------------------------------------------------------------------

    /**
     * b writes its receive CQ's Tail (the NIC's word, in b's memory) and Head, then two messages
     * complete into the 16-entry ring: their entries go to {@code position} and the next one modulo 16,
     * the Tail becomes {@code tailAfter}; with 16 or more outstanding in 32-bit arithmetic, the ring is
     * overflowed (Overflowed set, a catastrophic async event of the CQ, no entry). Nothing else of b's
     * VIA Process Structures and ring changes but its receive counter, nor anything of the other
     * process's (on b's node, with a CQ of its own).
     */
    @ParameterizedTest(name = "Tail {0}, Head {1}")
    @CsvSource({
        "-1, -1, 15, 1",
        "2147483647, 2147483644, 15, -2147483647",
        "-2147483648, 2147483647, 0, -2147483646",
        "5, 1000000, 5, 7",
        "0, -2147483648, 0, 2",
        "1000, 0, -1, 1000",
    })
    void aForgedCqTailOrHeadIsReducedModuloTheRingAndNothingElseIsWritten(final int tail, final int head,
        final int position, final int tailAfter)
    {
        connect(ViTableEntry.UNRELIABLE);
        otherProcessOn(1, PTAG_B, 0);
        final long otherRing = other.createCq(OTHER_CQ, 16);
        final AtomicBuffer host = cluster.images.get(1).hostMemory();
        host.putInt((int)ringB + CqRingLayout.TAIL_OFFSET, tail);
        host.putInt((int)ringB + CqRingLayout.HEAD_OFFSET, head);
        final int window = (int)(otherRing + CqRingLayout.length(16) + 4096 - b.structures);
        final byte[] before = hostBytes(1, b.structures, window);

        for (int m = 0; m < 2; m++)
        {
            final ViplDescriptor recv = postedReceive(64);
            oneSegmentSend(0, 1);
            a.postSend(SEND_VI, handleA, DESCRIPTORS);
            cluster.settle();
            assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, recv.status(),
                "receive " + m + " completes whatever its CQ's words say");
        }

        assertEquals(2, b.receivesCompleted(3), "both counted");
        assertEquals(tailAfter, host.getInt((int)ringB + CqRingLayout.TAIL_OFFSET), "the Tail");
        final long counterWord = b.structures + ViaProcessStructuresLayout.receiveCompletionOffset(3) +
            ViaProcessStructuresLayout.COMPLETION_COUNTER_OFFSET;
        if (position >= 0)
        {
            final long first = ringB + CqRingLayout.entryOffset(16, position);
            final long second = ringB + CqRingLayout.entryOffset(16, (position + 1) % 16);
            for (final long entry : new long[] {first, second})
            {
                assertEquals(RECEIVE_VI, host.getInt((int)entry + CqRingLayout.ENTRY_VI_OFFSET), "entry's VI");
                assertEquals(CqRingLayout.QUEUE_RECEIVE, host.getInt((int)entry + CqRingLayout.ENTRY_QUEUE_OFFSET),
                    "entry's queue");
            }
            assertEquals(0, host.getInt((int)ringB + CqRingLayout.OVERFLOWED_OFFSET), "not overflowed");
            assertEquals(0, b.asyncEvents(), "no async event");
            assertHostUnchangedExcept(1, b.structures, before, counterWord, Integer.BYTES,
                ringB + CqRingLayout.TAIL_OFFSET, Integer.BYTES, first, CqRingLayout.ENTRY_LENGTH,
                second, CqRingLayout.ENTRY_LENGTH);
        }
        else
        {
            assertEquals(1, host.getInt((int)ringB + CqRingLayout.OVERFLOWED_OFFSET), "overflowed");
            assertEquals(2, b.asyncEvents(), "an async event each");
            for (int n = 0; n < 2; n++)
            {
                assertEquals(ViaProcessStructuresLayout.RESOURCE_CQ,
                    eventWord(b, n, ViaProcessStructuresLayout.EVENT_RESOURCE_OFFSET), "resource of event " + n);
                assertEquals(CQ, eventWord(b, n, ViaProcessStructuresLayout.EVENT_CQ_OFFSET), "CQ of event " + n);
                assertEquals(ViaProcessStructuresLayout.ERROR_CATASTROPHIC, b.asyncError(n), "error of event " + n);
            }
            assertHostUnchangedExcept(1, b.structures, before, counterWord, Integer.BYTES,
                ringB + CqRingLayout.OVERFLOWED_OFFSET, Integer.BYTES,
                b.structures + ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET, Integer.BYTES,
                b.structures + ViaProcessStructuresLayout.asyncEventOffset(0),
                2 * ViaProcessStructuresLayout.EVENT_LENGTH);
        }
        assertOtherUntouched();
    }

    /**
     * b's VI entry names a completion line in the other process's VIA Process Structures (a driver's word,
     * overwritten here as a VI entry read while the driver made another VI in it could give it): the
     * receive's completion is dropped and counted lost, and not one byte of the other process's
     * structures or memory changes.
     */
    @Test
    void aCompletionLineOutsideItsOwnersStructuresIsNotCountedThere()
    {
        connect(ViTableEntry.UNRELIABLE);
        otherProcessOn(1, PTAG_B, 0);
        final NodeImage image = cluster.images.get(1);
        image.sdram().putLong((int)image.sdramLayout().via().viOffset(RECEIVE_VI) +
            ViTableEntry.RECEIVE_COMPLETION_OFFSET, other.structures + ViaProcessStructuresLayout.receiveCompletionOffset(3));
        final byte[] othersStructures = hostBytes(1, other.structures, ViaProcessStructuresLayout.LENGTH);
        final long lost = counter(1, NicCounters.VIA_COMPLETIONS_LOST);

        final ViplDescriptor recv = postedReceive(64);
        oneSegmentSend(0, 1);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();

        assertEquals(lost + 1, counter(1, NicCounters.VIA_COMPLETIONS_LOST), "the completion is counted lost");
        assertEquals(0, recv.status(), "and not completed");
        assertArrayEquals(othersStructures, hostBytes(1, other.structures, ViaProcessStructuresLayout.LENGTH),
            "nothing written in the other process's structures");
        assertOtherUntouched();
    }

    /**
     * b writes its async-event ring's Tail (the NIC's word) and Head, then two posts whose descriptor
     * handle is a stale generation of b's region each raise an event: at {@code position} and the next
     * one modulo 64, the Tail becoming {@code tailAfter}; with 64 or more outstanding, Overflowed is set
     * and no entry is written. Nothing else of b's VIA Process Structures changes, nor anything of the
     * other process's.
     */
    @ParameterizedTest(name = "Tail {0}, Head {1}")
    @CsvSource({
        "-1, -1, 63, 1",
        "2147483647, 2147483642, 63, -2147483647",
        "-2147483648, 2147483647, 0, -2147483646",
        "3, 1000000, 3, 5",
        "0, -2147483648, 0, 2",
        "70, 0, -1, 70",
    })
    void aForgedAsyncEventTailOrHeadIsReducedModuloTheRingAndNothingElseIsWritten(final int tail, final int head,
        final int position, final int tailAfter)
    {
        b.createVi(RECEIVE_VI, 3, PTAG_B, ViTableEntry.UNRELIABLE, CQ);
        otherProcessOn(1, PTAG_B, 0);
        final long otherRing = other.createCq(OTHER_CQ, 16);
        final AtomicBuffer host = cluster.images.get(1).hostMemory();
        host.putInt((int)b.structures + ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET, tail);
        host.putInt((int)b.structures + ViaProcessStructuresLayout.ASYNC_HEAD_OFFSET, head);
        final int window = (int)(otherRing + CqRingLayout.length(16) + 4096 - b.structures);
        final byte[] before = hostBytes(1, b.structures, window);
        final int stale = MemoryRegionEntry.handle(2, 0);

        b.postRecv(RECEIVE_VI, stale, 64);
        b.postRecv(RECEIVE_VI, stale, 128);
        cluster.settle();

        assertEquals(2, counter(1, NicCounters.VIA_ASYNC_EVENTS), "two events raised");
        assertEquals(tailAfter, b.asyncEvents(), "the Tail");
        final long overflowed = b.structures + ViaProcessStructuresLayout.ASYNC_OVERFLOWED_OFFSET;
        if (position >= 0)
        {
            assertEquals(0, host.getInt((int)overflowed), "not overflowed");
            for (int n = 0; n < 2; n++)
            {
                final int at = (position + n) % ViaProcessStructuresLayout.ASYNC_EVENTS;
                assertEquals(1, eventWord(b, at, ViaProcessStructuresLayout.EVENT_VALID_OFFSET),
                    "event " + n + " valid");
                assertEquals(ViaProcessStructuresLayout.ERROR_POST_DESC, b.asyncError(at), "event " + n + "'s error");
                assertEquals(stale, eventWord(b, at, ViaProcessStructuresLayout.EVENT_DESCRIPTOR_HANDLE_OFFSET),
                    "event " + n + "'s handle");
                assertEquals(64 * (n + 1), eventWord(b, at, ViaProcessStructuresLayout.EVENT_DESCRIPTOR_OFFSET_OFFSET),
                    "event " + n + "'s offset: in posting order");
            }
            final long first = b.structures + ViaProcessStructuresLayout.asyncEventOffset(position);
            final long second = b.structures + ViaProcessStructuresLayout.asyncEventOffset(
                (position + 1) % ViaProcessStructuresLayout.ASYNC_EVENTS);
            assertHostUnchangedExcept(1, b.structures, before,
                b.structures + ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET, Integer.BYTES,
                first, ViaProcessStructuresLayout.EVENT_LENGTH, second, ViaProcessStructuresLayout.EVENT_LENGTH);
        }
        else
        {
            assertEquals(1, host.getInt((int)overflowed), "overflowed");
            assertHostUnchangedExcept(1, b.structures, before, overflowed, Integer.BYTES);
        }
        assertOtherUntouched();
    }

    // ---------------------------------------------------------------------------------------------
    // 5. RDMA targets
    // ---------------------------------------------------------------------------------------------

    /** Remote addresses outside the target region [base, base + 8192) by overflow or wrap, for 3000 bytes. */
    enum RemoteAddress
    {
        /** Past the region, its end past Long.MAX_VALUE. */
        NEAR_LONG_MAX(base -> Long.MAX_VALUE - 8),
        /** Past the region; the later packets' address + offset overflow to negative. */
        CROSSING_LONG_MAX(base -> Long.MAX_VALUE - 1500),
        /** 1 KiB below the base: the later packets' address + offset lie inside the region. */
        BELOW_BASE(base -> base - 1024),
        MIN(base -> Long.MIN_VALUE);

        final LongUnaryOperator fromBase;

        RemoteAddress(final LongUnaryOperator fromBase)
        {
            this.fromBase = fromBase;
        }
    }

    @ParameterizedTest
    @EnumSource(RemoteAddress.class)
    void anRdmaWriteToAnAddressOutsideTheRegionByOverflowWritesNothing(final RemoteAddress remote)
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        final int target = b.registerRegion(2, DATA, 8192, PTAG_B, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        a.memory.fill(DATA, 3000, 23);
        rdmaWrite(remote.fromBase.applyAsLong(b.address(DATA)), target, 0, 3000, 0);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertUntouched(b, DATA, AREA - DATA);
        assertRefused(ViaProcessStructuresLayout.ERROR_RDMAW_PROT, 1);
    }

    @ParameterizedTest
    @EnumSource(RemoteAddress.class)
    void anRdmaReadFromAnAddressOutsideTheRegionByOverflowReadsNothing(final RemoteAddress remote)
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_READ);
        final int source = b.registerRegion(2, DATA, 8192, PTAG_B, ViTableEntry.ATTRIBUTE_RDMA_READ);
        b.memory.fill(DATA, AREA - DATA, 37);
        final ViplDescriptor read = rdmaRead(remote.fromBase.applyAsLong(b.address(DATA)), source);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertReadRefused(read);
    }

    /** The other process's region on b's node, with b's ptag and the write enable: only its owner differs. */
    @Test
    void anRdmaWriteNamingAnotherProcesssRegionWritesNothingThere()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        otherProcessOn(1, PTAG_B, ViTableEntry.ATTRIBUTE_RDMA_WRITE);
        a.memory.fill(DATA, 3000, 29);
        rdmaWrite(other.address(DATA), handleOther, 0, 3000, 0);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertOtherUntouched();
        assertUntouched(b, DATA, AREA - DATA);
        assertRefused(ViaProcessStructuresLayout.ERROR_RDMAW_PROT, 1);
    }

    @Test
    void anRdmaReadNamingAnotherProcesssRegionReadsNothingOfIt()
    {
        connect(ViTableEntry.RELIABLE_DELIVERY, ViTableEntry.ATTRIBUTE_RDMA_READ);
        otherProcessOn(1, PTAG_B, ViTableEntry.ATTRIBUTE_RDMA_READ);
        final ViplDescriptor read = rdmaRead(other.address(DATA), handleOther);
        a.postSend(SEND_VI, handleA, DESCRIPTORS);
        cluster.settle();
        assertReadRefused(read);
        assertOtherUntouched();
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * A third VIA process, Process Table entry 1 of {@code node}, registered; its whole area its region
     * in slot {@link #OTHER_SLOT} under {@code ptag} with {@code attributes}, filled with a pattern.
     */
    private void otherProcessOn(final int node, final int ptag, final int attributes)
    {
        other = new SteppedViaProcess(cluster, node, 1);
        other.register();
        cluster.settle();
        handleOther = other.registerRegion(OTHER_SLOT, 0, AREA, ptag, attributes);
        other.memory.fill(0, AREA, OTHER_SEED);
        otherBefore = bytesOf(other, 0, AREA);
    }

    private void assertOtherUntouched()
    {
        assertArrayEquals(otherBefore, bytesOf(other, 0, AREA), "the other process's memory changed");
        assertEquals(0, other.asyncEvents(), "the other process got an async event");
    }

    /** The region table entry {@code slot} of node {@code node}. */
    private MemoryRegionEntry region(final int node, final int slot)
    {
        final NodeImage image = cluster.images.get(node);
        return new MemoryRegionEntry().wrap(image.sdram(), (int)image.sdramLayout().via().regionOffset(slot));
    }

    /**
     * Deregistered and registered again in the same slot, as the driver does it: the generation one up.
     *
     * @return the new handle.
     */
    private int registerAgain(final int node, final int slot)
    {
        final MemoryRegionEntry r = region(node, slot);
        final int handle = MemoryRegionEntry.handle(MemoryRegionEntry.generation(r.handle()) + 1, slot);
        r.clear();
        r.publish(handle, r.owner(), r.ptag(), r.attributes(), r.base(), r.length(), r.firstTranslation(), r.pages(),
            r.allocation());
        return handle;
    }

    /**
     * A descriptor at {@code p}'s DESCRIPTORS with {@code count} one-byte segments at the end of its
     * area, written out if the descriptor fits in the area, and for an RDMA write {@code remote} in
     * b's region 0; a send's length is the segments'.
     */
    private static ViplDescriptor manySegments(final SteppedViaProcess p, final int handle, final int op,
        final int count, final long remote)
    {
        final boolean rdma = ViplDescriptor.isRdma(op);
        final ViplDescriptor d = p.descriptor(DESCRIPTORS).control(op).segmentCount(count).length(count);
        if (rdma)
        {
            d.addressSegment(remote, MemoryRegionEntry.handle(1, 0));
        }
        if (DESCRIPTORS + ViplDescriptor.length(count, rdma) <= AREA)
        {
            for (int i = 0; i < count; i++)
            {
                d.dataSegment(i, p.address(AREA - 1), handle, 1);
            }
        }
        return d;
    }

    /** An RDMA read at a's DESCRIPTORS of 3000 bytes into a's DESTINATION, which is filled with UNTOUCHED. */
    private ViplDescriptor rdmaRead(final long remote, final int remoteHandle)
    {
        fill(a, DESTINATION, 8192, UNTOUCHED);
        return a.descriptor(DESCRIPTORS).control(ViplDescriptor.OP_RDMA_READ).segmentCount(1).length(3000)
            .addressSegment(remote, remoteHandle).dataSegment(0, a.address(DESTINATION), handleA, 3000);
    }

    /**
     * b's NIC refused the RDMA op: b's VI in Error with {@code events} async events of {@code error}
     * (the broken connection's, one per refusal), a's VI in Error too (OP_ERROR).
     */
    private void assertRefused(final int error, final int events)
    {
        assertEquals(ViTableEntry.STATE_ERROR, b.vi(RECEIVE_VI).state(), "the target's reliable VI breaks");
        assertEquals(events, b.asyncEvents(), "the target's async events");
        for (int n = 0; n < events; n++)
        {
            assertEquals(error, b.asyncError(n), "the target's async error " + n);
        }
        assertEquals(ViTableEntry.STATE_ERROR, a.vi(SEND_VI).state(), "OP_ERROR told the requester");
    }

    private void assertReadRefused(final ViplDescriptor read)
    {
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_READ |
            ViplDescriptor.STATUS_RDMA_PROT_ERROR, read.status(), "the read completes with the target's refusal");
        assertUntouched(a, DESTINATION, 8192);
        assertEquals(0, counter(1, NicCounters.DATA_PACKETS_SENT), "no response packet");
        assertRefused(ViaProcessStructuresLayout.ERROR_RDMAR_PROT, 1);
        assertEquals(ViaProcessStructuresLayout.ERROR_RDMAR_PROT, a.asyncError(0), "the requester's async error");
    }

    private int eventWord(final SteppedViaProcess p, final int position, final int field)
    {
        return cluster.images.get(p.node).hostMemory().getInt(
            (int)p.structures + ViaProcessStructuresLayout.asyncEventOffset(position) + field);
    }

    private byte[] hostBytes(final int node, final long from, final int length)
    {
        final byte[] bytes = new byte[length];
        cluster.images.get(node).hostMemory().getBytes((int)from, bytes);
        return bytes;
    }

    /**
     * Every byte of node {@code node}'s host memory from {@code from} is as in {@code before}, but those
     * in {@code ranges}: (address, length) pairs.
     */
    private void assertHostUnchangedExcept(final int node, final long from, final byte[] before, final long... ranges)
    {
        final byte[] now = hostBytes(node, from, before.length);
        for (int i = 0; i < before.length; i++)
        {
            if (now[i] != before[i] && !within(from + i, ranges))
            {
                fail("host byte " + (from + i) + " (" + from + " + " + i + ") changed from " + before[i] + " to " +
                    now[i] + ", outside the words the NIC may write");
            }
        }
    }

    private static boolean within(final long address, final long[] ranges)
    {
        for (int r = 0; r < ranges.length; r += 2)
        {
            if (address >= ranges[r] && address < ranges[r] + ranges[r + 1])
            {
                return true;
            }
        }
        return false;
    }
}
