package org.qnix.vipl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicWakeLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ViplResult;
import org.qnix.abi.VniLayout;
import org.qnix.host.MappingGuard;
import org.qnix.host.NicHeartbeat;

/**
 * The VIA process's Command Queue over heap buffers, with the test as the NIC (as libqnix's
 * {@code VirtualNetworkInterfaceClosingTest}): a post waiting for room in a full queue ends with
 * {@code INVALID_STATE} once the NIC's guard closes, rather than holding the close's wait for quiescence
 * until its 30 s bound; room made by the NIC lets it through.
 */
@Timeout(120)
class ViaCommandQueueClosingTest
{
    private final ClusterParameters params = ClusterParameters.builder().build();
    private final VniLayout layout = new VniLayout(params);
    private final UnsafeBuffer vni = new UnsafeBuffer(new byte[layout.length()]);
    private final UnsafeBuffer hps = new UnsafeBuffer(new byte[
        HostProcessStructuresLayout.pages(params.contextsPerProcess(), params.pageSize()) * params.pageSize()]);
    private final UnsafeBuffer control = new UnsafeBuffer(new byte[ControlProgramLayout.LENGTH]);
    private final NicWakeUp wake =
        new NicWakeUp(new UnsafeBuffer(ByteBuffer.allocateDirect(NicWakeLayout.FILE_LENGTH)));
    private final MappingGuard guard = new MappingGuard();
    private final int entries = params.commandQueueEntries();
    private final ViaCommandQueue commands;

    ViaCommandQueueClosingTest()
    {
        // A NIC that runs (a fresh heartbeat) but takes no command.
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
        control.putLongVolatile(ControlProgramLayout.HEARTBEAT_TIME_OFFSET, System.currentTimeMillis());
        commands = new ViaCommandQueue(params, vni, hps, wake,
            new NicHeartbeat(control, 0, NicCoordinates.parse("1-0")), guard);
    }

    private void fill()
    {
        // One entry always stays empty, so that a full queue is told from an empty one.
        for (int i = 0; i < entries - 1; i++)
        {
            commands.post(ProcessCommand.VIA_POST_RECV, 3, 1, 64 * i);
        }
        assertEquals(entries - 1, hps.getIntVolatile(HostProcessStructuresLayout.CQ_TAIL_OFFSET));
    }

    @Test
    void aPostWaitingForRoomEndsInvalidStateWhenAnotherThreadCloses() throws Exception
    {
        fill();
        final CompletableFuture<Void> poster =
            CompletableFuture.runAsync(() -> commands.post(ProcessCommand.VIA_POST_SEND, 4, 1, 0));
        Thread.sleep(50);
        assertTrue(!poster.isDone(), "the post waits for room");
        guard.beginClose();
        final ExecutionException ended = assertThrows(ExecutionException.class, () -> poster.get(60, TimeUnit.SECONDS));
        final Throwable cause = ended.getCause();
        assertTrue(cause instanceof ViplException, String.valueOf(cause));
        assertEquals(ViplResult.INVALID_STATE, ((ViplException)cause).result(), cause.getMessage());
        assertEquals(0, vni.getIntVolatile(layout.commandOffset(entries - 1) + CommandQueueLayout.COMMAND_OFFSET),
            "the ended post wrote no command");
        assertEquals(entries - 1, hps.getIntVolatile(HostProcessStructuresLayout.CQ_TAIL_OFFSET));
    }

    @Test
    void aPostWaitingForRoomGoesOnOnceTheNicTakesAnEntry() throws Exception
    {
        fill();
        final CompletableFuture<Void> poster =
            CompletableFuture.runAsync(() -> commands.post(ProcessCommand.VIA_POST_SEND, 4, 1, 0));
        Thread.sleep(50);
        // The NIC took the first entry and publishes its head.
        hps.putIntRelease(HostProcessStructuresLayout.CQ_HEAD_OFFSET, 1);
        poster.get(60, TimeUnit.SECONDS);
        final int entry = layout.commandOffset(entries - 1);
        assertEquals(ProcessCommand.VIA_POST_SEND, vni.getIntVolatile(entry + CommandQueueLayout.COMMAND_OFFSET));
        assertEquals(4, vni.getInt(entry + CommandQueueLayout.CONTEXT_OFFSET));
        assertEquals(0, hps.getIntVolatile(HostProcessStructuresLayout.CQ_TAIL_OFFSET), "the tail wraps");
    }
}
