package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.ViplResult;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViState;
import org.qnix.vipl.ViplException;

/**
 * A VIA peer killed with -9 in the middle of a stream (issue 14): every message the receiver got
 * before is whole and in order, the rest of its posted receives complete DESC_FLUSHED, its VI is in
 * Error with a CONN_LOST asynchronous event, and only a disconnect takes it back to Idle. And a NIC
 * whose firmware stops ends a wait on it with a NIC-dead exception.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplKillTest extends ViplClusterTest
{
    private static final int WINDOW = 2;

    /** The length of the stream's message {@code k}: from 4 bytes to 300 KiB, most of them several pages. */
    static int length(final int k)
    {
        return 4 + (int)((k * 0x9E3779B1L & 0x7FFF_FFFFL) % (300 * 1024));
    }

    @Test
    void aPeerKilledMidStreamLeavesWholeMessagesThenFlushesAndConnLost() throws Exception
    {
        for (final Reliability level : new Reliability[] {Reliability.RELIABLE_DELIVERY, Reliability.RELIABLE_RECEPTION})
        {
            streamAndKill(level, "kill" + level.ordinal());
        }
    }

    private static void streamAndKill(final Reliability level, final String key) throws Exception
    {
        try (ViplEnd server = new ViplEnd(dir, "1-0", WINDOW, 2 << 20))
        {
            final Vi vi = server.vi(level, false);
            final Descriptor[] receives = new Descriptor[WINDOW];
            for (int i = 0; i < WINDOW; i++)
            {
                receives[i] = server.descriptor(i);
                receives[i].fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                    .dataSegment(0, server.data[i].address(0), server.regions[i].handle(), server.data[i].length());
            }
            server.postRecvTaken(vi, receives);
            final Process worker = ChildCommand.start(ViplStreamWorker.class, dir.name(), "0-0", "1-0", key, level.name());
            final ChildCommand.Lines said = ChildCommand.collect(worker, null);
            try
            {
                server.nic.connectWait(key.getBytes(StandardCharsets.US_ASCII), ViplEnd.TIMEOUT_MS).accept(vi);
                final Descriptor credit = server.descriptor(WINDOW);
                int k = 0;
                int flushed = 0;
                int outstanding = WINDOW;
                boolean killed = false;
                while (!killed || outstanding > 0)
                {
                    final Descriptor got = vi.recvWait(ViplEnd.TIMEOUT_MS);
                    outstanding--;
                    final int slot = got == receives[0] ? 0 : 1;
                    if (0 != (got.status() & ViplDescriptor.STATUS_DESC_FLUSHED_ERROR))
                    {
                        assertTrue(killed, "a receive flushed before the kill: " + said);
                        assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
                            ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, got.status());
                        flushed++;
                        continue;
                    }
                    assertEquals(0, flushed, "a message completed after a flushed receive");
                    assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, got.status(),
                        "message " + k + ": " + said);
                    assertEquals(length(k), got.length(), "message " + k);
                    final UnsafeBuffer b = server.buffer(slot);
                    assertEquals(k, b.getInt(0), "the messages in order, each once");
                    for (int i = 4; i < length(k); i++)
                    {
                        if (ViplEnd.pattern(k, i) != b.getByte(i))
                        {
                            assertEquals(ViplEnd.pattern(k, i), b.getByte(i), "byte " + i + " of message " + k);
                        }
                    }
                    k++;
                    if (killed)
                    {
                        continue;
                    }
                    // The receive again, then the credit, on one Command Queue: the receive is the NIC's first.
                    vi.postRecv(got, server.descriptorRegion);
                    outstanding++;
                    credit.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(0).length(0);
                    vi.postSend(credit, server.descriptorRegion);
                    assertSame(credit, vi.sendWait(ViplEnd.TIMEOUT_MS));
                    assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, credit.status(),
                        "credit " + k + ": " + said);
                    if (30 == k)
                    {
                        // The worker is sending message 30 (up to 300 KiB): it dies in the middle of the stream.
                        assertTrue(worker.toHandle().destroyForcibly(), "kill -9");
                        worker.waitFor();
                        killed = true;
                    }
                }
                assertTrue(flushed >= WINDOW - 1, flushed + " receives flushed");
                assertTrue(k >= 30, k + " messages");
                assertNull(vi.recvDone());
                TestClusters.await("the VI in Error", () -> ViState.ERROR == vi.query().state());
                // The NIC flushes the VI's work, then appends the event: a reader between the two waits for it.
                TestClusters.await("a CONN_LOST asynchronous event for VI " + vi.index(), () -> server.hasAsyncEvent(vi,
                    ViaProcessStructuresLayout.RESOURCE_VI, ViaProcessStructuresLayout.ERROR_CONN_LOST));
                // Error until disconnected: a receive posted now is flushed at once.
                vi.postRecv(receives[0], server.descriptorRegion);
                assertSame(receives[0], vi.recvWait(ViplEnd.TIMEOUT_MS));
                assertEquals(ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE |
                    ViplDescriptor.STATUS_DESC_FLUSHED_ERROR, receives[0].status());
                assertEquals(ViState.ERROR, vi.query().state());
                vi.disconnect();
                assertEquals(ViState.IDLE, vi.query().state());
                vi.close();
            }
            finally
            {
                worker.destroyForcibly();
                worker.waitFor();
                said.join(10_000);
            }
        }
    }

    /** The firmware of the NIC killed: a wait on it ends with the NIC-dead exception, and close returns. */
    @Test
    void aWaitOnANicWhoseFirmwareStoppedEndsNicDead() throws Exception
    {
        final ClusterDirectory own = TestClusters.up(TestClusters.uniqueName("vk"), 2, 1, "processes");
        try
        {
            final ViplEnd end = new ViplEnd(own, "0-0", 1, 4096);
            final Vi vi = end.vi(Reliability.RELIABLE_DELIVERY, false);
            vi.postRecv(end.receive(0, 0, 100), end.descriptorRegion);
            final long firmware = ClusterStatus.read(own).nodes().stream()
                .filter(n -> n.node().equals(new NicCoordinates(0, 0))).findFirst().orElseThrow().firmwarePid();
            final ProcessHandle handle = ProcessHandle.of(firmware).orElseThrow();
            handle.destroyForcibly();
            handle.onExit().get(60, TimeUnit.SECONDS);
            final ViplException dead = assertThrows(ViplException.class, () -> vi.recvWait(120_000));
            assertEquals(ViplResult.ERROR_RESOURCE, dead.result(), dead.getMessage());
            assertTrue(dead.getMessage().contains("0-0"), dead.getMessage());
            end.close();
        }
        finally
        {
            TestClusters.down(own);
        }
    }
}
