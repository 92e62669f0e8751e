package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.HostClock;
import org.qnix.abi.ViplDescriptor;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;

/**
 * VIA send/receive across two NICs (issue 14, "Must show"): messages of 0 B to 2 MiB, gathered from and
 * scattered into 1 to 64 segments starting at offsets 0, 1, 7 and 4095, at the three reliability
 * levels, with and without immediate data, both queues on CQs; every byte checked where it lands and
 * every other byte of the receiver's memories checked untouched. Every size x sender offset x sender
 * segment count; the receiver's offset and segment count, the level, the direction and immediate data
 * rotate. Then a window of messages completing in posting
 * order, and receives posted before the VI is connected.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplMatrixTest extends ViplClusterTest
{
    private static final int[] OFFSETS = {0, 1, 7, 4095};
    private static final int[] SEGMENTS = {1, 2, 3, 7, ViplDescriptor.MAX_SEGMENTS};
    private static final Reliability[] LEVELS = Reliability.values();

    /** Where one descriptor's segments are: memory, offset, length each. */
    private record Layout(int[] memory, int[] offset, int[] length)
    {
    }

    @Test
    void everySizeAlignmentAndSegmentCountArrivesWholeAtEveryLevel() throws Exception
    {
        final int max = 2 << 20;
        try (ViplEnd a = new ViplEnd(dir, "0-0", 2, max); ViplEnd b = new ViplEnd(dir, "1-0", 2, max))
        {
            assertEquals(max, a.nic.parameters().maxMessageBytes(), "the test's largest message is the cluster's");
            final int page = a.nic.parameters().pageSize();
            final int[] sizes = {0, 1, 7, page - 1, page, page + 1, 3 * page + 5, 64 * 1024 + 17, (1 << 20) - 3, max};
            final Vi[] va = new Vi[LEVELS.length];
            final Vi[] vb = new Vi[LEVELS.length];
            for (int l = 0; l < LEVELS.length; l++)
            {
                va[l] = a.vi(LEVELS[l], true);
                vb[l] = b.vi(LEVELS[l], true);
                ViplEnd.connect(a, va[l], b, vb[l], "matrix" + l);
            }
            int n = 0;
            int ran = 0;
            int largest = 0;
            for (int s = 0; s < sizes.length; s++)
            {
                for (int o = 0; o < OFFSETS.length; o++)
                {
                    for (int g = 0; g < SEGMENTS.length; g++, n++)
                    {
                        final int level = n % LEVELS.length;
                        final boolean backwards = n % 5 == 4;
                        final ViplEnd from = backwards ? b : a;
                        final ViplEnd to = backwards ? a : b;
                        final Vi fromVi = backwards ? vb[level] : va[level];
                        final Vi toVi = backwards ? va[level] : vb[level];
                        final Layout send = layout(sizes[s], SEGMENTS[g], OFFSETS[o], 0, max);
                        final Layout receive = layout(sizes[s], SEGMENTS[(g + s + o) % SEGMENTS.length],
                            OFFSETS[(o + s) % OFFSETS.length], 40, max);
                        if (null == send || null == receive)
                        {
                            // 2 MiB in one segment fits a 2 MiB memory only from offset 0.
                            continue;
                        }
                        exchange(from, fromVi, to, toVi, sizes[s], send, receive, n, n % 2 == 1);
                        ran++;
                        largest += sizes[s] == max ? 1 : 0;
                    }
                }
            }
            assertTrue(ran >= 180 && largest >= 12, ran + " combinations ran, " + largest + " of 2 MiB");
            for (int l = 0; l < LEVELS.length; l++)
            {
                va[l].disconnect();
                vb[l].disconnect();
            }
        }
    }

    /**
     * Sixteen receives posted, then sixteen sends back to back: on each side a descriptor is never seen
     * done before every one posted before it, the CQ names the queues in that order, and message i
     * lands in receive i with its immediate data.
     */
    @Test
    void aWindowOfMessagesCompletesInPostingOrderOnTheQueuesAndTheCq() throws Exception
    {
        final int window = 16;
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, 256 * 1024); ViplEnd b = new ViplEnd(dir, "1-0", 1, 256 * 1024))
        {
            final int page = a.nic.parameters().pageSize();
            for (final Reliability level : LEVELS)
            {
                final Vi va = a.vi(level, true);
                final Vi vb = b.vi(level, true);
                ViplEnd.connect(a, va, b, vb, "window" + level.ordinal());
                b.untouch();
                final Descriptor[] receives = new Descriptor[window];
                final Descriptor[] sends = new Descriptor[window];
                final int[] lengths = new int[window];
                final int[] at = new int[window];
                int place = 0;
                for (int i = 0; i < window; i++)
                {
                    lengths[i] = (i * 2731) % (3 * page) + i % 2;
                    at[i] = place;
                    place += lengths[i] + 3;
                    receives[i] = b.receive(i, at[i], lengths[i]);
                }
                b.postRecvTaken(vb, receives);
                for (int i = 0; i < window; i++)
                {
                    sends[i] = a.send(i, at[i], lengths[i], 1000L * level.ordinal() + i);
                    sends[i].fields().control(ViplDescriptor.OP_SEND | ViplDescriptor.CONTROL_IMMEDIATE).immediateData(i);
                    va.postSend(sends[i], a.descriptorRegion);
                }
                awaitInOrder(sends, "sends");
                awaitInOrder(receives, "receives");
                for (int i = 0; i < window; i++)
                {
                    assertSame(sends[i], va.sendDone());
                    assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, sends[i].status());
                    assertSame(receives[i], vb.recvDone());
                    assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
                        ViplDescriptor.STATUS_IMMEDIATE, receives[i].status(), "receive " + i);
                    assertEquals(lengths[i], receives[i].length());
                    assertEquals(i, receives[i].immediateData());
                    b.assertMessage(at[i], lengths[i], 1000L * level.ordinal() + i);
                    assertCompletion(a.cq, va, true);
                    assertCompletion(b.cq, vb, false);
                }
                assertNull(a.cq.done());
                assertNull(b.cq.done());
                va.disconnect();
                vb.disconnect();
                va.close();
                vb.close();
            }
        }
    }

    /** Receives posted while the VI is Idle wait there and take the first messages once it is connected. */
    @Test
    void receivesPostedBeforeConnectingTakeTheFirstMessages() throws Exception
    {
        try (ViplEnd a = new ViplEnd(dir, "0-0", 1, 64 * 1024); ViplEnd b = new ViplEnd(dir, "1-0", 1, 64 * 1024))
        {
            for (final Reliability level : new Reliability[] {Reliability.UNRELIABLE, Reliability.RELIABLE_RECEPTION})
            {
                final Vi va = a.vi(level, false);
                final Vi vb = b.vi(level, false);
                b.untouch();
                final Descriptor[] receives = new Descriptor[4];
                for (int i = 0; i < receives.length; i++)
                {
                    receives[i] = b.receive(i, i * 10_000, 5000 + i);
                }
                b.postRecvTaken(vb, receives);
                assertFalse(vb.query().receiveQueueEmpty());
                ViplEnd.connect(a, va, b, vb, "early" + level.ordinal());
                for (int i = 0; i < receives.length; i++)
                {
                    final Descriptor send = a.send(i, i * 10_000, 5000 + i, 77 + i);
                    va.postSend(send, a.descriptorRegion);
                    assertSame(send, va.sendWait(ViplEnd.TIMEOUT_MS));
                    assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, send.status());
                }
                for (int i = 0; i < receives.length; i++)
                {
                    assertSame(receives[i], vb.recvWait(ViplEnd.TIMEOUT_MS));
                    assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, receives[i].status());
                    assertEquals(5000 + i, receives[i].length());
                    b.assertMessage(i * 10_000, 5000 + i, 77 + i);
                }
                va.disconnect();
                vb.disconnect();
                va.close();
                vb.close();
            }
        }
    }

    /**
     * Waits for every descriptor to be done, checking at each look that the done ones are a prefix. The
     * look reads the statuses newest first: a descriptor seen done was done before every older one was
     * read, so in-order completion means every older one reads done.
     */
    private static void awaitInOrder(final Descriptor[] posted, final String what) throws InterruptedException
    {
        final long deadline = HostClock.millis() + ViplEnd.TIMEOUT_MS;
        final boolean[] done = new boolean[posted.length];
        while (true)
        {
            for (int i = posted.length - 1; i >= 0; i--)
            {
                done[i] = posted[i].isDone();
            }
            int prefix = 0;
            while (prefix < posted.length && done[prefix])
            {
                prefix++;
            }
            for (int i = prefix + 1; i < posted.length; i++)
            {
                assertFalse(done[i], what + ": " + i + " done before " + prefix);
            }
            if (prefix == posted.length)
            {
                return;
            }
            assertTrue(HostClock.millis() < deadline, what + ": only " + prefix + " done");
            Thread.sleep(1);
        }
    }

    private static void assertCompletion(final CompletionQueue cq, final Vi vi, final boolean sendQueue)
    {
        final CompletionQueue.Completion c = cq.await(ViplEnd.TIMEOUT_MS);
        assertSame(vi, c.vi());
        assertEquals(sendQueue, c.sendQueue());
    }

    /**
     * {@code length} bytes in {@code segments} nearly equal segments, the first at {@code offset} of
     * memory 0, each next 13 bytes after the previous, moving to the next memory (at {@code offset})
     * when one would not fit; {@code spare} more bytes in the last segment. Null if they do not fit.
     */
    private static Layout layout(final int length, final int segments, final int offset, final int spare,
        final int memoryBytes)
    {
        final Layout l = new Layout(new int[segments], new int[segments], new int[segments]);
        int memory = 0;
        int cursor = offset;
        for (int i = 0; i < segments; i++)
        {
            final int bytes = length / segments + (i < length % segments ? 1 : 0) + (i == segments - 1 ? spare : 0);
            if (cursor + bytes > memoryBytes)
            {
                memory++;
                cursor = offset;
                if (memory == 2 || cursor + bytes > memoryBytes)
                {
                    return null;
                }
            }
            l.memory[i] = memory;
            l.offset[i] = cursor;
            l.length[i] = bytes;
            cursor += bytes + 13;
        }
        return l;
    }

    private static void exchange(final ViplEnd from, final Vi fromVi, final ViplEnd to, final Vi toVi, final int length,
        final Layout send, final Layout receive, final long seed, final boolean immediate) throws InterruptedException
    {
        final String what = length + " B from " + send.length.length + " segments at " + send.offset[0] + " into " +
            receive.length.length + " at " + receive.offset[0] + ", " + fromVi.attributes().reliability() +
            (immediate ? ", immediate" : "");
        to.untouch();
        // The message's bytes in the sender's segments.
        int index = 0;
        for (int i = 0; i < send.length.length; i++)
        {
            final UnsafeBuffer b = from.buffer(send.memory[i]);
            for (int k = 0; k < send.length[i]; k++)
            {
                b.putByte(send.offset[i] + k, ViplEnd.pattern(seed, index++));
            }
        }
        final Descriptor recv = to.descriptor((int)(seed % 2));
        recv.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(receive.length.length);
        for (int i = 0; i < receive.length.length; i++)
        {
            recv.fields().dataSegment(i, to.data[receive.memory[i]].address(receive.offset[i]),
                to.regions[receive.memory[i]].handle(), receive.length[i]);
        }
        to.postRecvTaken(toVi, recv);
        final Descriptor sendDescriptor = from.descriptor(2 + (int)(seed % 2));
        sendDescriptor.fields().reset()
            .control(ViplDescriptor.OP_SEND | (immediate ? ViplDescriptor.CONTROL_IMMEDIATE : 0))
            .segmentCount(send.length.length).length(length).immediateData(immediate ? (int)seed * 7 + 1 : 0);
        for (int i = 0; i < send.length.length; i++)
        {
            sendDescriptor.fields().dataSegment(i, from.data[send.memory[i]].address(send.offset[i]),
                from.regions[send.memory[i]].handle(), send.length[i]);
        }
        fromVi.postSend(sendDescriptor, from.descriptorRegion);

        assertSame(sendDescriptor, fromVi.sendWait(ViplEnd.TIMEOUT_MS), what);
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, sendDescriptor.status(), what);
        assertSame(recv, toVi.recvWait(ViplEnd.TIMEOUT_MS), what);
        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
            (immediate ? ViplDescriptor.STATUS_IMMEDIATE : 0), recv.status(), what);
        assertEquals(length, recv.length(), what);
        if (immediate)
        {
            assertEquals((int)seed * 7 + 1, recv.immediateData(), what);
        }
        assertCompletion(from.cq, fromVi, true);
        assertCompletion(to.cq, toVi, false);
        // Every byte in order across the receive's segments; then those bytes put back, and the whole of
        // the receiver's memories must be untouched: nothing landed anywhere else.
        index = 0;
        for (int i = 0; i < receive.length.length && index < length; i++)
        {
            final UnsafeBuffer b = to.buffer(receive.memory[i]);
            for (int k = 0; k < receive.length[i] && index < length; k++, index++)
            {
                final byte expected = ViplEnd.pattern(seed, index);
                if (expected != b.getByte(receive.offset[i] + k))
                {
                    assertEquals(expected, b.getByte(receive.offset[i] + k), what + ": byte " + index);
                }
                b.putByte(receive.offset[i] + k, ViplEnd.UNTOUCHED);
            }
        }
        assertNull(to.firstTouched(), what + ": a byte landed outside the message's place");
    }
}
