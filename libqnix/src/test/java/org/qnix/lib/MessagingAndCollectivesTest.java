package org.qnix.lib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueEntry;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.HostClock;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicWakeLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessName;
import org.qnix.abi.VniContext;
import org.qnix.abi.VniLayout;
import org.qnix.host.DoorbellWait;
import org.qnix.host.MappingGuard;

/**
 * {@link Messaging} and {@link Collectives}, the roles behind {@link Qnix}'s message and group calls,
 * over a VNI in plain memory with this test playing the NIC through the qnix-abi flyweights: what a
 * posted context looks like to the NIC, how a doorbell becomes a result or the exception that names the
 * command, how a timed-out group await's context is freed later, and that a closed registration ends
 * every call. No cluster, driver or firmware (the driver is only used by {@code groupMembers}).
 */
@Timeout(60)
class MessagingAndCollectivesTest
{
    private static final int CONTEXTS = 4;
    private static final int ENTRIES = 8;
    private static final ProcessName SELF = new ProcessName(7, 0);
    private static final ProcessName PEER = new ProcessName(7, 1);

    private final ClusterParameters params =
        ClusterParameters.builder().contexts(CONTEXTS).commandQueueEntries(ENTRIES).build();
    private final VniLayout layout = new VniLayout(params);
    private final UnsafeBuffer vni = new UnsafeBuffer(ByteBuffer.allocateDirect(layout.length()));
    private final UnsafeBuffer hps = new UnsafeBuffer(ByteBuffer.allocateDirect(
        HostProcessStructuresLayout.pages(CONTEXTS, params.pageSize()) * params.pageSize()));
    private final UnsafeBuffer control = new UnsafeBuffer(ByteBuffer.allocateDirect(ControlProgramLayout.LENGTH));
    private final NicWakeUp wake = new NicWakeUp(new UnsafeBuffer(ByteBuffer.allocateDirect(NicWakeLayout.FILE_LENGTH)));
    private final CommandQueueEntry nicEntry = new CommandQueueEntry();
    private final VniContext nicContext = new VniContext();
    private final MappingGuard guard = new MappingGuard();
    private VirtualNetworkInterface vnic;
    private Messaging messaging;
    private Collectives collectives;

    @BeforeEach
    void nicIsRunning()
    {
        control.putLongVolatile(ControlProgramLayout.HEARTBEAT_TIME_OFFSET, HostClock.millis());
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
        vnic = new VirtualNetworkInterface(params, vni, hps, control, 0, wake, new NicCoordinates(0, 0), SELF, guard);
        messaging = new Messaging(null, params, SELF, guard, vnic);
        collectives = new Collectives(params, SELF, guard, null, vnic, messaging);
    }

    @Test
    void aContextIsPostedOnlyWhileHeld()
    {
        final UnsafeBuffer data = new UnsafeBuffer(new byte[16]);
        final IllegalStateException neverTaken =
            assertThrows(IllegalStateException.class, () -> messaging.post(ProcessCommand.SEND_SHORT, 2, 0, 0));
        assertTrue(neverTaken.getMessage().contains("not held"), neverTaken.getMessage());
        final int context = messaging.sendContextShort(PEER, 42, true, data, 0, 16);
        messaging.post(ProcessCommand.SEND_SHORT, context, 0, 0);
        ringSend(context, Doorbell.DONE);
        final IllegalStateException unread =
            assertThrows(IllegalStateException.class, () -> messaging.post(ProcessCommand.SEND_SHORT, context, 0, 0));
        assertTrue(unread.getMessage().contains("not yet waited for"), unread.getMessage());
        assertTrue(messaging.pollForSend(context));
        // Freed by its wait: posted again, the NIC would send the same message a second time.
        assertThrows(IllegalStateException.class, () -> messaging.post(ProcessCommand.SEND_SHORT, context, 0, 0));
        assertThrows(IllegalStateException.class, () -> messaging.tryPost(ProcessCommand.SEND_SHORT, context, 0, 0));
        assertThrows(IllegalStateException.class,
            () -> collectives.multicast(ProcessCommand.MULTICAST_SHORT, context, new ProcessName[] {PEER}, false));
        nicEntry.wrap(vni, layout.commandOffset(1));
        assertEquals(0, nicEntry.command(), "one command reached the queue");
    }

    @Test
    void aShortContextWhoseDataCannotBeCopiedGoesBack()
    {
        final UnsafeBuffer data = new UnsafeBuffer(new byte[16]);
        for (int i = 0; i < 2 * CONTEXTS; i++)
        {
            assertThrows(IllegalArgumentException.class, () -> messaging.sendContextShort(PEER, 1, true, data, 8, 16));
            assertThrows(IllegalArgumentException.class, () -> messaging.sendContextShort(PEER, 1, true, null, 0, 4));
        }
        final int context = messaging.sendContextShort(PEER, 1, true, data, 0, 16);
        assertTrue(context >= 0 && context < CONTEXTS, "a context is still free: " + context);
    }

    @Test
    void aShortSendIsAContextAndACommandTheNicReadsAndItsErrorNamesTheCommand()
    {
        final UnsafeBuffer data = new UnsafeBuffer(new byte[16]);
        final int context = messaging.sendContextShort(PEER, 42, true, data, 0, 16);
        messaging.post(ProcessCommand.SEND_SHORT, context, 0, 0);

        nicContext.wrap(vni, layout.sendContextOffset(context));
        assertEquals(PEER.ai(), nicContext.peerAi());
        assertEquals(PEER.pi(), nicContext.peerPi());
        assertEquals(42, nicContext.tag());
        assertEquals(16, nicContext.length());
        nicEntry.wrap(vni, layout.commandOffset(0));
        assertEquals(ProcessCommand.SEND_SHORT, nicEntry.command());
        assertEquals(context, nicEntry.context());

        assertFalse(messaging.pollForSend(context), "in flight until the NIC rings");
        ringSend(context, Doorbell.BAD_CONTEXT);
        final QnixCompletionException e =
            assertThrows(QnixCompletionException.class, () -> messaging.pollForSend(context));
        assertEquals(Doorbell.BAD_CONTEXT, e.status());
        assertTrue(e.getMessage().contains("Send_Short on context " + context), e.getMessage());
        assertEquals(Doorbell.FREE, hps.getIntVolatile(HostProcessStructuresLayout.sendDoorbellOffset(context)),
            "an error completion frees the context too");
    }

    @Test
    void aReceiveCompletionFillsTheStatusAndATruncatedOneSaysHowMuchWasSent()
    {
        final ReceiveStatus status = new ReceiveStatus();
        final int first = postedReceive(100);
        assertFalse(messaging.pollForReceive(first, status));
        nicCompletesReceive(first, 40, Doorbell.DONE);
        messaging.awaitReceive(first, status, DoorbellWait.BACKOFF, 30, TimeUnit.SECONDS);
        assertEquals(PEER, status.source());
        assertEquals(5, status.tag());
        assertEquals(40, status.length());
        assertEquals(Doorbell.FREE, hps.getIntVolatile(HostProcessStructuresLayout.receiveDoorbellOffset(CONTEXTS, first)));

        final int second = postedReceive(100);
        nicCompletesReceive(second, 300, Doorbell.TRUNCATED);
        final QnixTruncatedException e =
            assertThrows(QnixTruncatedException.class, () -> messaging.pollForReceive(second, status));
        assertTrue(e.getMessage().contains("300"), e.getMessage());
        assertEquals(300, status.length());
        assertEquals(Doorbell.TRUNCATED, status.status);
    }

    /**
     * A negative timeout is refused before anything is posted or waited for: its deadline would wrap,
     * and the wait would never end, nor see the NIC stop. The context stays usable.
     */
    @Test
    void aNegativeTimeoutIsRefusedAndTheContextStaysUsable()
    {
        final ReceiveStatus status = new ReceiveStatus();
        final int receive = postedReceive(100);
        assertThrows(IllegalArgumentException.class,
            () -> messaging.awaitReceive(receive, status, DoorbellWait.BACKOFF, Long.MIN_VALUE, TimeUnit.NANOSECONDS));
        assertThrows(IllegalArgumentException.class,
            () -> collectives.awaitBarrier(7, 2, -1, TimeUnit.MILLISECONDS));
        nicCompletesReceive(receive, 40, Doorbell.DONE);
        messaging.awaitReceive(receive, status, DoorbellWait.BACKOFF, 0, TimeUnit.SECONDS);
        assertEquals(40, status.length());
    }

    @Test
    void aTimedOutBarriersContextIsFreedByTheNextTakeOnceTheNicCompletesIt()
    {
        assertThrows(QnixTimeoutException.class,
            () -> collectives.awaitBarrier(7, 2, 20, TimeUnit.MILLISECONDS));
        nicEntry.wrap(vni, layout.commandOffset(0));
        assertEquals(ProcessCommand.BARRIER, nicEntry.command());
        final int abandoned = nicEntry.context();
        assertEquals(2, nicEntry.size());

        // Every other context taken and in flight: only the abandoned one can be next, once the NIC
        // completes it; without the reaping, a take would wait for a Free context in vain.
        for (int c = 1; c < CONTEXTS; c++)
        {
            collectives.groupContext();
        }
        ringSend(abandoned, Doorbell.DONE);
        assertEquals(abandoned, collectives.groupContext(), "reaped on the next take, nobody polls it");
    }

    @Test
    void aBarrierWithoutAUnitIsRefusedBeforeItIsPosted()
    {
        final NullPointerException ex = assertThrows(NullPointerException.class,
            () -> collectives.awaitBarrier(7, 2, 20, null));
        assertEquals("unit", ex.getMessage());
        nicEntry.wrap(vni, layout.commandOffset(0));
        assertEquals(0, nicEntry.command(), "nothing posted");
        for (int c = 0; c < CONTEXTS; c++)
        {
            collectives.groupContext();   // every context is still Free: none was taken and left in flight
        }
    }

    @Test
    void aClosedRegistrationEndsEveryCallWithTheClosedException()
    {
        final int context = collectives.groupContext();
        assertTrue(guard.beginClose());
        assertThrows(QnixClosedException.class, () -> messaging.pollForSend(context));
        assertThrows(QnixClosedException.class, () -> messaging.post(ProcessCommand.SEND, context, 0, 0));
        assertThrows(QnixClosedException.class, () -> messaging.tryPost(ProcessCommand.RECEIVE, context, 0, 0));
        assertThrows(QnixClosedException.class, collectives::groupContext);
        assertThrows(QnixClosedException.class,
            () -> collectives.multicast(ProcessCommand.MULTICAST, context, new ProcessName[] {PEER}, true));
        assertThrows(QnixClosedException.class, () -> collectives.groupMembers(7));
        assertEquals(0, guard.callsInside(), "every call left the guard it entered");
    }

    /** A Receive Context as recvContext leaves it, without a buffer: this test never moves bytes. */
    private int postedReceive(final int capacity)
    {
        final int context = vnic.takeReceiveContext();
        vnic.writeContext(vnic.receiveContextOffset(context), Qnix.ANY_PROC.ai(), Qnix.ANY_PROC.pi(), Qnix.ANY_TAG,
            true, 1, capacity, -1);
        messaging.post(ProcessCommand.RECEIVE, context, 0, 0);
        return context;
    }

    /** What the NIC does at a receive's end: the completion fields, then the doorbell with release. */
    private void nicCompletesReceive(final int context, final long length, final int value)
    {
        nicContext.wrap(vni, layout.receiveContextOffset(context)).complete(PEER.ai(), PEER.pi(), 5, length);
        hps.putIntRelease(HostProcessStructuresLayout.receiveDoorbellOffset(CONTEXTS, context), value);
    }

    private void ringSend(final int context, final int value)
    {
        hps.putIntRelease(HostProcessStructuresLayout.sendDoorbellOffset(context), value);
    }
}
