package org.qnix.lib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.HostClock;
import org.qnix.host.DoorbellWait;
import org.qnix.host.MappingGuard;
import org.qnix.host.EmptyPolls;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueEntry;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicWakeLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessName;
import org.qnix.abi.VniContext;
import org.qnix.abi.VniLayout;

/**
 * The process side of the VNI protocol over plain memory, with this test playing the NIC through the
 * same qnix-abi flyweights the firmware uses: no cluster, no driver, no firmware. The buffers are
 * direct, so a futex sleep would have a real address (the waits here do not sleep).
 */
@Timeout(60)
class VirtualNetworkInterfaceTest
{
    private static final int CONTEXTS = 4;
    private static final int ENTRIES = 8;

    private final ClusterParameters params =
        ClusterParameters.builder().contexts(CONTEXTS).commandQueueEntries(ENTRIES).build();
    private final VniLayout layout = new VniLayout(params);
    private final UnsafeBuffer vni = new UnsafeBuffer(ByteBuffer.allocateDirect(layout.length()));
    private final UnsafeBuffer hps = new UnsafeBuffer(ByteBuffer.allocateDirect(
        HostProcessStructuresLayout.pages(CONTEXTS, params.pageSize()) * params.pageSize()));
    private final UnsafeBuffer control = new UnsafeBuffer(ByteBuffer.allocateDirect(ControlProgramLayout.LENGTH));
    private final NicWakeUp wake = new NicWakeUp(new UnsafeBuffer(ByteBuffer.allocateDirect(NicWakeLayout.FILE_LENGTH)));
    private final CommandQueueEntry nicEntry = new CommandQueueEntry();
    private VirtualNetworkInterface vnic;

    @BeforeEach
    void nicIsRunning()
    {
        control.putLongVolatile(ControlProgramLayout.HEARTBEAT_TIME_OFFSET, HostClock.millis());
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
        vnic = new VirtualNetworkInterface(params, vni, hps, control, 0, wake, new NicCoordinates(0, 0), new ProcessName(7, 0),
            new MappingGuard());
    }

    @Test
    void contextsAreTakenFromTheHintOnAndRefusedWhenAllHoldUnpolledCompletions()
    {
        hps.putInt(HostProcessStructuresLayout.NEXT_SEND_CONTEXT_OFFSET, 2);
        assertEquals(2, vnic.takeSendContext());
        assertEquals(3, vnic.takeSendContext());
        assertEquals(0, vnic.takeSendContext());
        assertEquals(1, vnic.takeSendContext());
        for (int c = 0; c < CONTEXTS; c++)
        {
            assertEquals(Doorbell.USED, hps.getInt(HostProcessStructuresLayout.sendDoorbellOffset(c)));
            ringSend(c, Doorbell.DONE);
        }
        final QnixNoContextException e = assertThrows(QnixNoContextException.class, vnic::takeSendContext);
        assertTrue(e.getMessage().contains("pollForSend"), e.getMessage());

        vnic.free(1, true);
        assertEquals(1, vnic.takeSendContext());
        assertEquals(0, vnic.takeReceiveContext(), "Receive Contexts have doorbells of their own");
    }

    @Test
    void aPostedCommandIsWhatTheNicReadsAndTheQueueWraps()
    {
        for (int i = 0; i < 3 * ENTRIES; i++)
        {
            vnic.post(ProcessCommand.SEND, i % CONTEXTS, 0, 0);
            final int position = i % ENTRIES;
            nicEntry.wrap(vni, layout.commandOffset(position));
            assertEquals(ProcessCommand.SEND, nicEntry.command());
            assertEquals(i % CONTEXTS, nicEntry.context());
            assertEquals((position + 1) % ENTRIES, hps.getIntVolatile(HostProcessStructuresLayout.CQ_TAIL_OFFSET));
            nicConsumes(position);
        }
    }

    @Test
    void aMulticastsNamesFollowItsEntryTwoByTwo()
    {
        final ProcessName[] receivers = {new ProcessName(5, 0), new ProcessName(5, 1), new ProcessName(6, 2)};
        vnic.postMulticast(ProcessCommand.MULTICAST, 1, receivers);
        nicEntry.wrap(vni, layout.commandOffset(0));
        assertEquals(ProcessCommand.MULTICAST, nicEntry.command());
        assertEquals(receivers.length, nicEntry.size());
        for (int i = 0; i < receivers.length; i++)
        {
            nicEntry.wrap(vni, layout.commandOffset(1 + i / CommandQueueLayout.NAMES_PER_ENTRY));
            assertEquals(receivers[i].ai(), nicEntry.nameAi(i % CommandQueueLayout.NAMES_PER_ENTRY));
            assertEquals(receivers[i].pi(), nicEntry.namePi(i % CommandQueueLayout.NAMES_PER_ENTRY));
        }
        assertEquals(1 + CommandQueueLayout.namesEntries(receivers.length),
            hps.getIntVolatile(HostProcessStructuresLayout.CQ_TAIL_OFFSET));
    }

    @Test
    void aWaitEndsWithTheDoorbellTheNicRingsAndTheCompletionItWroteBefore() throws Exception
    {
        final int context = vnic.takeReceiveContext();
        vnic.writeContext(vnic.receiveContextOffset(context), ContextLayout.ANY, ContextLayout.ANY, 7, true, 1, 100,
            ContextLayout.NO_BUFFER_POOL);
        final CompletableFuture<Integer> waiter = CompletableFuture.supplyAsync(
            () -> vnic.await(context, false, TimeUnit.SECONDS.toNanos(30), DoorbellWait.BACKOFF));
        new VniContext().wrap(vni, layout.receiveContextOffset(context)).complete(3, 4, 7, 42);
        // The NIC's release of the doorbell publishes the completion fields (DESIGN.md 8, item 3).
        hps.putIntRelease(HostProcessStructuresLayout.receiveDoorbellOffset(CONTEXTS, context), Doorbell.TRUNCATED);
        assertEquals(Doorbell.TRUNCATED, waiter.get(30, TimeUnit.SECONDS));
        final ReceiveStatus status = new ReceiveStatus();
        vnic.readCompletion(context, status);
        assertEquals(3, status.sourceAi);
        assertEquals(4, status.sourcePi);
        assertEquals(7, status.tag);
        assertEquals(42, status.length);
        assertEquals(100, vnic.receiveCapacity(context));
    }

    @Test
    void aWaitOnASilentOrStoppedNicEndsWithTheNicDeadException()
    {
        final int context = vnic.takeSendContext();
        assertThrows(QnixTimeoutException.class,
            () -> vnic.await(context, true, TimeUnit.MILLISECONDS.toNanos(20), DoorbellWait.YIELD));
        control.putLongVolatile(ControlProgramLayout.HEARTBEAT_TIME_OFFSET,
            HostClock.millis() - 2 * ControlProgramLayout.HEARTBEAT_TIMEOUT_MS);
        assertThrows(QnixNicDeadException.class,
            () -> vnic.await(context, true, TimeUnit.SECONDS.toNanos(30), DoorbellWait.BACKOFF));
        control.putLongVolatile(ControlProgramLayout.HEARTBEAT_TIME_OFFSET, HostClock.millis());
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_STOPPED);
        assertThrows(QnixNicDeadException.class,
            () -> vnic.await(context, true, TimeUnit.SECONDS.toNanos(30), DoorbellWait.YIELD));
    }

    @Test
    void aLoopOfPollsOnAStoppedNicEndsWithTheNicDeadException()
    {
        final int context = vnic.takeSendContext();
        for (int poll = 0; poll < 3 * EmptyPolls.PER_LOOK; poll++)
        {
            assertEquals(Doorbell.USED, vnic.poll(context, true), "a running NIC: not done yet");
        }
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_STOPPED);

        final QnixNicDeadException dead = assertThrows(QnixNicDeadException.class, () ->
        {
            for (int poll = 0; poll < 2 * EmptyPolls.PER_LOOK; poll++)
            {
                vnic.poll(context, true);
            }
        });
        assertTrue(dead.getMessage().contains("node 0-0"), dead.getMessage());
        // A completion is still read, whatever became of the NIC after it rang.
        ringSend(context, Doorbell.DONE);
        assertEquals(Doorbell.DONE, vnic.poll(context, true));
        // A look at a doorbell that is not the process's poll (a context taken again) does not count.
        final int other = vnic.takeSendContext();
        for (int look = 0; look < 2 * EmptyPolls.PER_LOOK; look++)
        {
            assertEquals(Doorbell.USED, vnic.peek(other, true));
        }
    }

    private void ringSend(final int context, final int value)
    {
        hps.putIntRelease(HostProcessStructuresLayout.sendDoorbellOffset(context), value);
    }

    /** What the NIC does after taking an entry: empty it, and publish its Command Queue Head. */
    private void nicConsumes(final int position)
    {
        nicEntry.wrap(vni, layout.commandOffset(position)).consume();
        hps.putIntRelease(HostProcessStructuresLayout.CQ_HEAD_OFFSET, (position + 1) % ENTRIES);
    }
}
