package org.qnix.lib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.HostClock;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicWakeLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessName;
import org.qnix.abi.VniLayout;
import org.qnix.host.DoorbellWait;
import org.qnix.host.MappingGuard;

/**
 * The process side of the Command Queue and the doorbells over heap buffers, with the test as the NIC:
 * the loops that wait (for room, for a context, for a doorbell) end with {@link QnixClosedException} once
 * the registration closes instead of running to their 30 s bound, and with {@link QnixNicDeadException}
 * once the NIC stops. The queue itself is libhost's {@code CommandQueueWriterTest}.
 */
@Timeout(60)
class VirtualNetworkInterfaceClosingTest
{
    private final ClusterParameters params = ClusterParameters.builder().build();
    private final VniLayout layout = new VniLayout(params);
    private final UnsafeBuffer vni = new UnsafeBuffer(new byte[layout.length()]);
    private final UnsafeBuffer hps = new UnsafeBuffer(new byte[
        HostProcessStructuresLayout.pages(params.contextsPerProcess(), params.pageSize()) * params.pageSize()]);
    private final UnsafeBuffer control = new UnsafeBuffer(new byte[ControlProgramLayout.LENGTH]);
    private final NicWakeUp wake = new NicWakeUp(new UnsafeBuffer(ByteBuffer.allocateDirect(NicWakeLayout.FILE_LENGTH)));
    private final MappingGuard guard = new MappingGuard();
    private final int entries = params.commandQueueEntries();
    private final VirtualNetworkInterface vnic;

    VirtualNetworkInterfaceClosingTest()
    {
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
        control.putLongVolatile(ControlProgramLayout.HEARTBEAT_TIME_OFFSET, HostClock.millis());
        vnic = new VirtualNetworkInterface(params, vni, hps, control, 0, wake, NicCoordinates.parse("1-0"),
            new ProcessName(7, 0), guard);
    }

    /** Fills the Command Queue: one entry always stays empty, so that a full queue is told from an empty one. */
    private void fill()
    {
        for (int i = 0; i < entries - 1; i++)
        {
            assertTrue(vnic.tryPost(ProcessCommand.SEND, 0, 0, 0));
        }
    }

    /**
     * A post that finds the queue full and the VNI closing ends {@link QnixClosedException}: the library's
     * name for the writer's CLOSED. That a post already waiting for room sees the close is libhost's
     * {@code CommandQueueWriterTest}, which shows the post parked in its wait first.
     */
    @Test
    void aPostOnAFullQueueEndsClosedOnceTheVniIsClosing()
    {
        fill();
        guard.beginClose();
        assertThrows(QnixClosedException.class, () -> vnic.post(ProcessCommand.SEND, 1, 0, 0));
    }

    @Test
    void aPostWaitingForRoomEndsWithTheDeadNicNamed()
    {
        fill();
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_STOPPED);
        final QnixNicDeadException dead =
            assertThrows(QnixNicDeadException.class, () -> vnic.post(ProcessCommand.SEND, 1, 0, 0));
        assertTrue(dead.getMessage().contains("node 1-0"), dead.getMessage());
    }

    @Test
    void aContextTakerWaitingForAFreeContextEndsClosed()
    {
        for (int c = 0; c < params.contextsPerProcess(); c++)
        {
            assertEquals(c, vnic.takeSendContext(), "the hint gives the contexts in order");
        }
        guard.beginClose();
        assertThrows(QnixClosedException.class, vnic::takeSendContext);
    }

    @Test
    void aDoorbellWaitEndsClosedOrWithTheDeadNicNamed()
    {
        final int context = vnic.takeReceiveContext();
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_STOPPED);
        final QnixNicDeadException dead = assertThrows(QnixNicDeadException.class,
            () -> vnic.await(context, false, TimeUnit.SECONDS.toNanos(30), DoorbellWait.BACKOFF));
        assertTrue(dead.getMessage().contains("node 1-0"), dead.getMessage());

        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
        guard.beginClose();
        assertThrows(QnixClosedException.class,
            () -> vnic.await(context, false, TimeUnit.SECONDS.toNanos(30), DoorbellWait.YIELD));
        assertEquals(Doorbell.USED, vnic.peek(context, false));
    }
}
