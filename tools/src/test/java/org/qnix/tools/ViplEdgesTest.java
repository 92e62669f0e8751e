package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.ViplResult;
import org.qnix.firmware.NicCounters;
import org.qnix.host.DoorbellWait;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.ViState;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplAddress;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * The edges of issue 14, each against a real cluster, the receiver's memory checked untouched wherever
 * nothing may move: descriptor errors (unregistered, illegal op, too many segments, too long, segment
 * outside its region, foreign ptag or handle, deregistered) complete with FORMAT / PROTECTION / LENGTH;
 * an Unreliable VI stays connected, a reliable one goes to Error with its peer; Error flushes what was
 * posted before and after, and only {@code disconnect()} leaves it; a receive shorter than the message;
 * RDMA writes without enable, into another ptag's region or past a region's end; a CQ overflowing;
 * a bad receive behind a good one on an Unreliable VI completing after it; a VI destroyed while Idle
 * and made again in its entry for the same process keeping nothing of the old one's receives.
 * (A peer killed and a NIC stopped: {@link ViplKillTest}.)
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplEdgesTest extends ViplClusterTest
{
    private static final int MEMORY = 64 * 1024;
    private static final int MAX_TRANSFER = 16 * 1024;
    private static final int OK_SEND = ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND;
    private static final int OK_RECEIVE = ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE;

    /** A bad send descriptor: how it is made wrong, and the error bit it must complete with. */
    private record Bad(String name, Consumer<Descriptor> make, int error)
    {
    }

    /** What the sender's NIC holds for the bad descriptors: another ptag, foreign and stale handles. */
    private static final class Wrongs implements AutoCloseable
    {
        final ViplNic other;
        final ViplMemory unregistered;
        final MemoryRegion small;
        final MemoryRegion foreignPtag;
        final ViplMemory foreignMemory;
        final MemoryRegion othersRegion;
        final int deregistered;

        Wrongs(final ViplEnd a)
        {
            final int page = a.nic.parameters().pageSize();
            unregistered = a.nic.allocate(page);
            small = a.nic.registerMem(a.data[0], 0, page, new MemoryAttributes(a.ptag, false, false));
            final ProtectionTag ptag2 = a.nic.createPtag();
            foreignMemory = a.nic.allocate(4 * page);
            foreignPtag = a.nic.registerMem(foreignMemory, 0, 4 * page, new MemoryAttributes(ptag2, false, false));
            final MemoryRegion gone = a.nic.registerMem(a.data[0], 0, page, new MemoryAttributes(a.ptag, false, false));
            deregistered = gone.handle();
            gone.close();
            // Another VIA process on the same NIC: its handle is not this process's to name.
            other = Vipl.openNic(a.node.toString(), dir.name());
            final ViplMemory memory = other.allocate(page);
            othersRegion = other.registerMem(memory, 0, page, new MemoryAttributes(other.createPtag(), false, false));
        }

        public void close()
        {
            other.close();
        }
    }

    private static List<Bad> badSends(final ViplEnd a, final Wrongs w)
    {
        final long data = a.data[0].address(1000);
        final int handle = a.regions[0].handle();
        return List.of(
            new Bad("a segment in unregistered memory", d -> d.fields().reset().control(ViplDescriptor.OP_SEND)
                .segmentCount(1).length(100).dataSegment(0, w.unregistered.address(0), handle, 100),
                ViplDescriptor.STATUS_PROTECTION_ERROR),
            new Bad("an undefined control bit", d -> d.fields().reset().control(ViplDescriptor.OP_SEND | 0x10)
                .segmentCount(1).length(100).dataSegment(0, data, handle, 100), ViplDescriptor.STATUS_FORMAT_ERROR),
            new Bad("65 segments", d ->
            {
                d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(ViplDescriptor.MAX_SEGMENTS + 1)
                    .length(ViplDescriptor.MAX_SEGMENTS + 1);
                for (int i = 0; i <= ViplDescriptor.MAX_SEGMENTS; i++)
                {
                    d.fields().dataSegment(i, data + i, handle, 1);
                }
            }, ViplDescriptor.STATUS_FORMAT_ERROR),
            new Bad("longer than the VI's largest transfer", d -> d.fields().reset().control(ViplDescriptor.OP_SEND)
                .segmentCount(1).length(MAX_TRANSFER + 1).dataSegment(0, data, handle, MAX_TRANSFER + 1),
                ViplDescriptor.STATUS_LENGTH_ERROR),
            new Bad("a length that is not the segments' sum", d -> d.fields().reset().control(ViplDescriptor.OP_SEND)
                .segmentCount(1).length(100).dataSegment(0, data, handle, 99), ViplDescriptor.STATUS_FORMAT_ERROR),
            new Bad("a segment past its region's end", d -> d.fields().reset().control(ViplDescriptor.OP_SEND)
                .segmentCount(1).length(200).dataSegment(0, w.small.address() + w.small.length() - 100,
                    w.small.handle(), 200), ViplDescriptor.STATUS_PROTECTION_ERROR),
            new Bad("a region of another ptag", d -> d.fields().reset().control(ViplDescriptor.OP_SEND)
                .segmentCount(1).length(100).dataSegment(0, w.foreignPtag.address(), w.foreignPtag.handle(), 100),
                ViplDescriptor.STATUS_PROTECTION_ERROR),
            new Bad("another process's handle", d -> d.fields().reset().control(ViplDescriptor.OP_SEND)
                .segmentCount(1).length(100).dataSegment(0, w.othersRegion.address(), w.othersRegion.handle(), 100),
                ViplDescriptor.STATUS_PROTECTION_ERROR),
            new Bad("a deregistered region", d -> d.fields().reset().control(ViplDescriptor.OP_SEND)
                .segmentCount(1).length(100).dataSegment(0, data, w.deregistered, 100),
                ViplDescriptor.STATUS_PROTECTION_ERROR));
    }

    @Test
    void descriptorErrorsOnAnUnreliableViMoveNothingAndLeaveItConnected() throws Exception
    {
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, MEMORY); ViplEnd b = new ViplEnd(dir, "1-0", 1, MEMORY);
            Wrongs w = new Wrongs(a))
        {
            final Vi va = a.vi(Reliability.UNRELIABLE, MAX_TRANSFER, false, false);
            final Vi vb = b.vi(Reliability.UNRELIABLE, MAX_TRANSFER, false, false);
            ViplEnd.connect(a, va, b, vb, "edges-u");
            // The library refuses a misaligned descriptor before the NIC could see it.
            assertEquals(ViplResult.INVALID_PARAMETER,
                assertThrows(ViplException.class, () -> a.descriptors.descriptor(8)).result());
            long seed = 1;
            for (final Bad bad : badSends(a, w))
            {
                b.untouch();
                final Descriptor recv = b.receive(0, 0, MEMORY);
                b.postRecvTaken(vb, recv);
                final Descriptor send = a.descriptor(1);
                bad.make.accept(send);
                va.postSend(send, a.descriptorRegion);
                assertSame(send, va.sendWait(ViplEnd.TIMEOUT_MS), bad.name);
                assertEquals(OK_SEND | bad.error, send.status(), bad.name);
                assertNull(vb.recvDone(), bad.name + ": the receive got nothing");
                assertNull(b.firstTouched(), bad.name + ": a byte moved");
                assertEquals(ViState.CONNECTED, va.query().state(), bad.name);
                // The connection goes on: the next message takes the receive.
                sendAndReceive(a, va, b, vb, recv, 1000 + seed++);
            }
            // A send posted on a region of another ptag: the descriptor itself may not be read.
            final Descriptor foreign = w.foreignMemory.descriptor(0);
            foreign.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0).length(0);
            va.postSend(foreign, w.foreignPtag);
            assertSame(foreign, va.sendWait(ViplEnd.TIMEOUT_MS));
            assertEquals(OK_SEND | ViplDescriptor.STATUS_PROTECTION_ERROR, foreign.status());

            // Bad receives complete at once, and the next good one takes the next message.
            b.untouch();
            final Descriptor outside = b.descriptor(2);
            outside.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, b.data[0].address(MEMORY - 10), b.regions[0].handle(), 20);
            vb.postRecv(outside, b.descriptorRegion);
            assertSame(outside, vb.recvWait(ViplEnd.TIMEOUT_MS));
            assertEquals(OK_RECEIVE | ViplDescriptor.STATUS_PROTECTION_ERROR, outside.status());
            // A receive with an RDMA op completes FORMAT at once: what awaitPostsTaken relies on.
            awaitPostsTaken(b, vb);
            assertNull(b.firstTouched());
            final Descriptor good = b.receive(0, 0, MEMORY);
            b.postRecvTaken(vb, good);
            sendAndReceive(a, va, b, vb, good, 99);
            va.disconnect();
            vb.disconnect();
        }
    }

    /**
     * VIA completes a queue in posting order: on an Unreliable VI, which stays connected, a bad receive
     * posted behind a good one waits (the NIC has taken both posts) and completes after the message
     * the good one takes, writing nothing of its own.
     */
    @Test
    void aBadReceiveBehindAGoodOneOnAnUnreliableViCompletesAfterIt() throws Exception
    {
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, MEMORY); ViplEnd b = new ViplEnd(dir, "1-0", 1, MEMORY))
        {
            final Vi va = a.vi(Reliability.UNRELIABLE, MAX_TRANSFER, false, false);
            final Vi vb = b.vi(Reliability.UNRELIABLE, MAX_TRANSFER, false, false);
            ViplEnd.connect(a, va, b, vb, "edges-order");
            final Vi probe = b.vi(Reliability.UNRELIABLE, MAX_TRANSFER, false, false);
            b.untouch();
            final Descriptor good = b.receive(0, 0, 1000);
            final Descriptor outside = b.descriptor(1);
            outside.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, b.data[0].address(MEMORY - 10), b.regions[0].handle(), 20);
            vb.postRecv(good, b.descriptorRegion);
            vb.postRecv(outside, b.descriptorRegion);
            awaitPostsTaken(b, probe);
            assertEquals(0, outside.status(), "the bad receive waits for the good one before it");

            final Descriptor send = a.send(7, 2000, 100, 4242);
            va.postSend(send, a.descriptorRegion);
            assertSame(send, va.sendWait(ViplEnd.TIMEOUT_MS));
            assertSame(good, vb.recvWait(ViplEnd.TIMEOUT_MS));
            assertEquals(OK_RECEIVE, good.status());
            assertSame(outside, vb.recvWait(ViplEnd.TIMEOUT_MS));
            assertEquals(OK_RECEIVE | ViplDescriptor.STATUS_PROTECTION_ERROR, outside.status());
            b.assertMessage(0, 100, 4242);
            b.buffer(0).setMemory(0, 100, ViplEnd.UNTOUCHED);
            assertNull(b.firstTouched(), "only the good receive's bytes were written");
            assertEquals(ViState.CONNECTED, vb.query().state());
            va.disconnect();
            vb.disconnect();
            probe.close();
        }
    }

    /**
     * A VI destroyed while Idle with a receive posted, and made again in the same VI table entry for
     * the same process, starts with empty queues: the old receive never completes into the new VI.
     */
    @Test
    void aViMadeAgainInTheSameEntryForTheSameProcessKeepsNothingPostedToTheOldOne() throws Exception
    {
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, MEMORY); ViplEnd b = new ViplEnd(dir, "1-0", 1, MEMORY))
        {
            b.untouch();
            final Vi old = b.vi(Reliability.UNRELIABLE, MAX_TRANSFER, false, false);
            final Vi probe = b.vi(Reliability.UNRELIABLE, MAX_TRANSFER, false, false);
            final Descriptor oldReceive = b.receive(0, 0, 1000);
            old.postRecv(oldReceive, b.descriptorRegion);
            // A post names only the VI's index: it must reach the NIC before the VI is destroyed.
            awaitPostsTaken(b, probe);
            final int entry = old.index();
            old.close();
            final Vi vb = b.vi(Reliability.UNRELIABLE, MAX_TRANSFER, false, false);
            assertEquals(entry, vb.index(), "the same VI table entry");
            final Descriptor fresh = b.receive(1, 4000, 1000);
            b.postRecvTaken(vb, fresh);
            final Vi va = a.vi(Reliability.UNRELIABLE, MAX_TRANSFER, false, false);
            ViplEnd.connect(a, va, b, vb, "edges-generation");

            final Descriptor send = a.send(7, 2000, 100, 77);
            va.postSend(send, a.descriptorRegion);
            assertSame(send, va.sendWait(ViplEnd.TIMEOUT_MS));
            assertSame(fresh, vb.recvWait(ViplEnd.TIMEOUT_MS));
            assertEquals(OK_RECEIVE, fresh.status());
            assertEquals(100, fresh.length());
            assertEquals(0, oldReceive.status(), "the old VI's receive is not completed");
            b.buffer(0).setMemory(4000, 100, ViplEnd.UNTOUCHED);
            assertNull(b.firstTouched(), "nothing landed where the old receive points");
            va.disconnect();
            vb.disconnect();
            assertEquals(0, oldReceive.status(), "nor by the disconnect's flush");
            probe.close();
        }
    }

    /**
     * Returns once the NIC of {@code end} has carried out every post its process made before: a
     * receive with an op the receive queue may not carry completes FORMAT at once on {@code probe},
     * and the NIC takes a process's Command Queue in order.
     */
    private static void awaitPostsTaken(final ViplEnd end, final Vi probe)
    {
        final Descriptor bad = end.descriptor(3);
        bad.fields().reset().control(ViplDescriptor.OP_RDMA_WRITE).segmentCount(1)
            .dataSegment(0, end.data[0].address(0), end.regions[0].handle(), 20);
        probe.postRecv(bad, end.descriptorRegion);
        assertSame(bad, probe.recvWait(ViplEnd.TIMEOUT_MS));
        assertEquals(OK_RECEIVE | ViplDescriptor.STATUS_FORMAT_ERROR, bad.status());
    }

    /**
     * At both reliable levels a bad send, and a bad receive, complete with their error and break the
     * connection on both sides; everything posted before the break and after it completes
     * DESC_FLUSHED; the VIs stay in Error until disconnected, then connect again and carry data.
     */
    @Test
    void descriptorErrorsBreakAReliableConnectionWhoseErrorStateFlushesEverythingUntilDisconnect() throws Exception
    {
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, MEMORY); ViplEnd b = new ViplEnd(dir, "1-0", 1, MEMORY);
            Wrongs w = new Wrongs(a))
        {
            final List<Bad> bads = badSends(a, w);
            int round = 0;
            for (final Reliability level : new Reliability[] {Reliability.RELIABLE_DELIVERY,
                Reliability.RELIABLE_RECEPTION})
            {
                final Vi va = a.vi(level, MAX_TRANSFER, false, false);
                final Vi vb = b.vi(level, MAX_TRANSFER, false, false);
                // A PROTECTION, a FORMAT and a LENGTH error, then a bad receive.
                for (final int which : new int[] {5, 2, 3, -1})
                {
                    final String what = level + ": " + (which < 0 ? "a bad receive" : bads.get(which).name);
                    ViplEnd.connect(a, va, b, vb, "edges-r" + round++);
                    b.untouch();
                    final Descriptor[] before = {b.receive(0, 0, 1000), b.receive(1, 1000, 1000), b.receive(2, 2000, 1000)};
                    b.postRecvTaken(vb, before);
                    if (which >= 0)
                    {
                        final Descriptor send = a.descriptor(4);
                        bads.get(which).make.accept(send);
                        va.postSend(send, a.descriptorRegion);
                        assertSame(send, va.sendWait(ViplEnd.TIMEOUT_MS), what);
                        assertEquals(OK_SEND | bads.get(which).error, send.status(), what);
                    }
                    else
                    {
                        final Descriptor bad = b.descriptor(3);
                        bad.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                            .dataSegment(0, b.data[0].address(MEMORY - 10), b.regions[0].handle(), 20);
                        vb.postRecv(bad, b.descriptorRegion);
                    }
                    awaitState(va, ViState.ERROR, what);
                    awaitState(vb, ViState.ERROR, what);
                    for (int i = 0; i < before.length; i++)
                    {
                        assertSame(before[i], vb.recvWait(ViplEnd.TIMEOUT_MS), what);
                        assertEquals(OK_RECEIVE | ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, before[i].status(),
                            what + ": receive " + i + " posted before the error");
                    }
                    if (which < 0)
                    {
                        final Descriptor bad = vb.recvWait(ViplEnd.TIMEOUT_MS);
                        assertEquals(OK_RECEIVE | ViplDescriptor.STATUS_PROTECTION_ERROR, bad.status(), what);
                    }
                    assertNull(b.firstTouched(), what + ": a byte moved");

                    // Posted in Error: flushed, on both queues of both sides; still Error after.
                    final Descriptor lateSend = a.send(5, 0, 100, 5);
                    va.postSend(lateSend, a.descriptorRegion);
                    assertSame(lateSend, va.sendWait(ViplEnd.TIMEOUT_MS), what);
                    assertEquals(OK_SEND | ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, lateSend.status(), what);
                    final Descriptor lateReceive = b.receive(5, 0, 1000);
                    vb.postRecv(lateReceive, b.descriptorRegion);
                    assertSame(lateReceive, vb.recvWait(ViplEnd.TIMEOUT_MS), what);
                    assertEquals(OK_RECEIVE | ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, lateReceive.status(), what);
                    final Descriptor lateOnA = a.receive(6, 0, 1000);
                    va.postRecv(lateOnA, a.descriptorRegion);
                    assertSame(lateOnA, va.recvWait(ViplEnd.TIMEOUT_MS), what);
                    assertEquals(OK_RECEIVE | ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, lateOnA.status(), what);
                    assertEquals(ViState.ERROR, va.query().state(), what);
                    assertEquals(ViState.ERROR, vb.query().state(), what);
                    assertNull(b.firstTouched(), what + ": a byte moved");

                    va.disconnect();
                    vb.disconnect();
                    assertEquals(ViState.IDLE, va.query().state(), what);
                    assertEquals(ViState.IDLE, vb.query().state(), what);
                }
                // Connected once more, the VIs carry data again.
                ViplEnd.connect(a, va, b, vb, "edges-r" + round++);
                final Descriptor recv = b.receive(0, 0, MEMORY);
                b.postRecvTaken(vb, recv);
                sendAndReceive(a, va, b, vb, recv, 4242);
                va.disconnect();
                vb.disconnect();
                va.close();
                vb.close();
            }
        }
    }

    /**
     * A negative timeout is refused INVALID_PARAMETER by every wait and connection call: its deadline
     * would wrap, and the wait would last for ever (a connection call's driver watchdog armed for 1 ms
     * closed the connection under it, which de-registered the process). Nothing changes.
     */
    @Test
    void negativeTimeoutsAreRefused() throws Exception
    {
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, MEMORY))
        {
            final Vi vi = a.vi(Reliability.UNRELIABLE, true);
            final ViplAddress self = new ViplAddress(a.node, new byte[] {1});
            final List<Executable> calls = List.of(
                () -> vi.sendWait(-1),
                () -> vi.recvWait(Long.MIN_VALUE, DoorbellWait.BACKOFF),
                () -> a.cq.await(-1),
                () -> a.cq.poll(-5, DoorbellWait.SLEEP),
                () -> a.nic.connectWait(new byte[] {1}, -20_000),
                () -> a.nic.connectRequest(vi, self, Long.MIN_VALUE),
                () -> a.nic.connectPeerRequest(vi, new byte[] {2}, self, -1));
            for (final Executable call : calls)
            {
                final ViplException refused = assertThrows(ViplException.class, call);
                assertEquals(ViplResult.INVALID_PARAMETER, refused.result(), refused.getMessage());
                assertTrue(refused.getMessage().contains("negative"), refused.getMessage());
            }
            assertEquals(ViState.IDLE, vi.query().state());
            assertNull(a.cq.poll(0, DoorbellWait.SLEEP));
        }
    }

    /**
     * A receive shorter than the message completes LENGTH and gets no byte; Unreliable goes on, Reliable
     * Delivery (the send done once sent) and Reliable Reception (the send flushed, never acknowledged)
     * break.
     */
    @Test
    void aReceiveShorterThanTheMessageCompletesLengthAndGetsNothing() throws Exception
    {
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, MEMORY); ViplEnd b = new ViplEnd(dir, "1-0", 1, MEMORY))
        {
            int round = 0;
            for (final Reliability level : Reliability.values())
            {
                final Vi va = a.vi(level, false);
                final Vi vb = b.vi(level, false);
                ViplEnd.connect(a, va, b, vb, "short" + round++);
                b.untouch();
                final Descriptor recv = b.receive(0, 0, 100);
                b.postRecvTaken(vb, recv);
                final Descriptor send = a.send(0, 0, 3 * 4096 + 1, 31);
                va.postSend(send, a.descriptorRegion);
                assertSame(recv, vb.recvWait(ViplEnd.TIMEOUT_MS), level.toString());
                assertEquals(OK_RECEIVE | ViplDescriptor.STATUS_LENGTH_ERROR, recv.status(), level.toString());
                assertSame(send, va.sendWait(ViplEnd.TIMEOUT_MS), level.toString());
                assertNull(b.firstTouched(), level + ": a byte moved");
                if (Reliability.UNRELIABLE == level)
                {
                    assertEquals(OK_SEND, send.status());
                    assertEquals(ViState.CONNECTED, vb.query().state());
                    final Descriptor next = b.receive(1, 0, MEMORY);
                    b.postRecvTaken(vb, next);
                    sendAndReceive(a, va, b, vb, next, 32);
                }
                else
                {
                    assertEquals(Reliability.RELIABLE_DELIVERY == level ? OK_SEND :
                        OK_SEND | ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, send.status(), level.toString());
                    awaitState(va, ViState.ERROR, level.toString());
                    awaitState(vb, ViState.ERROR, level.toString());
                }
                va.disconnect();
                vb.disconnect();
                va.close();
                vb.close();
            }
        }
    }

    /**
     * RDMA writes the target refuses (its region without write enable, its VI without, a region of
     * another ptag, past the region's end) write nothing. Unreliable: the writer completes normally and
     * the target reports it (the receive an immediate datum consumes, else an asynchronous error); the
     * connection stays. Reliable Delivery: the write completes once sent, both VIs go to Error.
     * Reliable Reception: the write is never acknowledged (flushed), both VIs go to Error.
     */
    @Test
    void refusedRdmaWritesWriteNothingAndAreReportedAsTheLevelRequires() throws Exception
    {
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, MEMORY); ViplEnd b = new ViplEnd(dir, "1-0", 1, MEMORY))
        {
            final MemoryRegion readOnly = b.nic.registerMem(b.data[0], 0, MEMORY, new MemoryAttributes(b.ptag, false, false));
            final MemoryRegion otherPtag =
                b.nic.registerMem(b.data[0], 0, MEMORY, new MemoryAttributes(b.nic.createPtag(), true, false));
            final Object[][] levels = {{Reliability.UNRELIABLE, true}, {Reliability.UNRELIABLE, false},
                {Reliability.RELIABLE_DELIVERY, false}, {Reliability.RELIABLE_RECEPTION, true}};
            int round = 0;
            for (final Object[] l : levels)
            {
                final Reliability level = (Reliability)l[0];
                final boolean immediate = (Boolean)l[1];
                for (final String target : new String[] {"region without write enable", "VI without write enable",
                    "region of another ptag", "past the region's end"})
                {
                    final String what = level + (immediate ? " with immediate data" : "") + ", " + target;
                    final Vi va = a.vi(level, false);
                    final Vi vb = b.vi(level, b.nic.parameters().maxMessageBytes(), !target.startsWith("VI"), false);
                    ViplEnd.connect(a, va, b, vb, "rdma" + round++);
                    b.untouch();
                    final Descriptor recv = b.receive(0, 0, 100);
                    b.postRecvTaken(vb, recv);
                    final MemoryRegion region = target.startsWith("region without") ? readOnly :
                        target.startsWith("region of") ? otherPtag : b.regions[0];
                    final int length = 2 * 4096 + 3;
                    final long address = target.startsWith("past") ? region.address() + MEMORY - 4096 :
                        region.address() + 100;
                    final long eventsBefore = asyncEvents(b);
                    final Descriptor write = a.send(0, 0, length, 55);
                    write.fields().reset().control(ViplDescriptor.OP_RDMA_WRITE |
                        (immediate ? ViplDescriptor.CONTROL_IMMEDIATE : 0)).segmentCount(1).length(length)
                        .immediateData(immediate ? 9 : 0)
                        .addressSegment(address, region.handle())
                        .dataSegment(0, a.data[0].address(0), a.regions[0].handle(), length);
                    va.postSend(write, a.descriptorRegion);
                    assertSame(write, va.sendWait(ViplEnd.TIMEOUT_MS), what);
                    if (Reliability.RELIABLE_RECEPTION == level)
                    {
                        assertTrue(0 != (write.status() & ViplDescriptor.STATUS_DESC_FLUSHED_ERROR),
                            what + ": status " + Integer.toHexString(write.status()));
                    }
                    else
                    {
                        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RDMA_WRITE, write.status(), what);
                    }
                    if (immediate)
                    {
                        assertSame(recv, vb.recvWait(ViplEnd.TIMEOUT_MS), what);
                        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_REMOTE_RDMA_WRITE |
                            ViplDescriptor.STATUS_RDMA_PROT_ERROR | ViplDescriptor.STATUS_IMMEDIATE, recv.status(), what);
                    }
                    if (Reliability.UNRELIABLE == level)
                    {
                        if (!immediate)
                        {
                            TestClusters.await(what + ": the target's asynchronous error",
                                () -> asyncEvents(b) > eventsBefore);
                        }
                        assertEquals(ViState.CONNECTED, va.query().state(), what);
                        assertEquals(ViState.CONNECTED, vb.query().state(), what);
                    }
                    else
                    {
                        awaitState(va, ViState.ERROR, what);
                        awaitState(vb, ViState.ERROR, what);
                        if (!immediate)
                        {
                            assertSame(recv, vb.recvWait(ViplEnd.TIMEOUT_MS), what);
                            assertEquals(OK_RECEIVE | ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, recv.status(), what);
                        }
                    }
                    assertNull(b.firstTouched(), what + ": a byte was written");
                    va.disconnect();
                    vb.disconnect();
                    va.close();
                    vb.close();
                }
            }
            readOnly.close();
            otherPtag.close();
        }
    }

    /** A CQ that fills up: the NIC raises an asynchronous error; the descriptors themselves complete. */
    @Test
    void anOverflowingCqRaisesAnAsynchronousError() throws Exception
    {
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, MEMORY); ViplEnd b = new ViplEnd(dir, "1-0", 1, MEMORY))
        {
            final CompletionQueue small = b.nic.createCq(2);
            final Vi va = a.vi(Reliability.RELIABLE_DELIVERY, false);
            final Vi vb = b.nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY,
                b.nic.parameters().maxMessageBytes(), b.ptag, false, false), null, small);
            ViplEnd.connect(a, va, b, vb, "overflow");
            final Descriptor[] receives = {b.receive(0, 0, 100), b.receive(1, 100, 100), b.receive(2, 200, 100)};
            b.postRecvTaken(vb, receives);
            for (int i = 0; i < receives.length; i++)
            {
                final Descriptor send = a.send(i, 0, 100, 60 + i);
                va.postSend(send, a.descriptorRegion);
                assertSame(send, va.sendWait(ViplEnd.TIMEOUT_MS));
                assertSame(receives[i], vb.recvWait(ViplEnd.TIMEOUT_MS));
                assertEquals(OK_RECEIVE, receives[i].status());
            }
            TestClusters.await("the CQ's overflow reported", () -> b.hasAsyncEvent(vb,
                ViaProcessStructuresLayout.RESOURCE_CQ, ViaProcessStructuresLayout.ERROR_CATASTROPHIC));
            assertSame(vb, small.done().vi());
            assertSame(vb, small.done().vi());
            assertNull(small.done(), "the third completion found the CQ full");
            va.disconnect();
            vb.disconnect();
            vb.close();
            small.close();
        }
    }

    private static long asyncEvents(final ViplEnd end)
    {
        return TestClusters.counters(dir, end.node).get(NicCounters.VIA_ASYNC_EVENTS);
    }

    private static void awaitState(final Vi vi, final ViState state, final String what) throws InterruptedException
    {
        TestClusters.await(what + ": VI " + vi.index() + " " + state, () -> state == vi.query().state());
    }

    /** A message of 100 B from a into {@code recv} (at offset 0 of b's memory), posted and taken on b before. */
    private static void sendAndReceive(final ViplEnd a, final Vi va, final ViplEnd b, final Vi vb, final Descriptor recv,
        final long seed)
    {
        final Descriptor send = a.send(7, 2000, 100, seed);
        va.postSend(send, a.descriptorRegion);
        assertSame(send, va.sendWait(ViplEnd.TIMEOUT_MS));
        assertEquals(OK_SEND, send.status());
        assertSame(recv, vb.recvWait(ViplEnd.TIMEOUT_MS));
        assertEquals(OK_RECEIVE, recv.status());
        assertEquals(100, recv.length());
        b.assertMessage(0, 100, seed);
    }
}
