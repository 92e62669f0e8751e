package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;


import org.junit.jupiter.api.Test;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.ProcessCommand;

/**
 * An exception inside the duty cycle (here: a Doorbell Array address the driver got wrong, so ringing
 * the doorbell writes outside host memory) goes to the {@link DutyCycleErrorHandler}: the packet or
 * command is dropped and counted with its kind, the stack trace is logged once per kind, and the loop
 * goes on serving everything else.
 */
class DutyCycleErrorsTest extends SteppedClusterTest
{
    private static final int GROUP = 7;
    private static final String LOGGED = "error in the duty cycle";

    @Test
    void aCommandThatThrowsIsCountedWithItsKindLoggedOnceAndTheLoopGoesOn()
    {
        cluster = new SteppedCluster(base, 2, 2);
        final SteppedProcess[] p = cluster.registerGroup(GROUP, 0, 3);
        final ProcessSlot sender = cluster.nics.get(0).slot(p[0].index);
        final long sendDoorbells = sender.sendDoorbells;
        sender.sendDoorbells = cluster.images.get(0).hostMemory().capacity();

        // An unknown command completes Bad Command on its Send Doorbell: which lies outside host memory.
        final int unknown = 99;
        p[0].post(unknown, 0);
        p[0].post(unknown, 1);
        cluster.settle();

        final String cause = NicCounters.ERRORS_CAUSED_BY + "process command " + ProcessCommand.name(unknown);
        assertEquals(2, cluster.counter(0, NicCounters.DUTY_CYCLE_ERRORS));
        assertEquals(2, cluster.counter(0, cause));
        assertEquals(2, cluster.counter(0, NicCounters.COMMANDS), "both commands were taken");
        final String log = cluster.errorLog(0);
        assertEquals(1, occurrences(log, LOGGED), log);
        assertTrue(log.contains("IndexOutOfBoundsException"), log);
        assertTrue(log.contains("caused by process command " + ProcessCommand.name(unknown)), log);
        assertTrue(log.contains("at org.qnix.firmware.Doorbells.ring"), "the stack trace: " + log);

        // The loop went on: the same process's next commands are read and served.
        sender.sendDoorbells = sendDoorbells;
        p[1].receiveContext(0, GROUP, 0, 5, 0, 100);
        p[1].post(ProcessCommand.RECEIVE, 0);
        p[0].fill(0, 100, 3);
        p[0].sendContext(2, p[1].name, 5, 0, 100);
        p[0].post(ProcessCommand.SEND, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(2));
        assertEquals(Doorbell.DONE, p[1].receiveDoorbell(0));
        assertEquals(2, cluster.counter(0, NicCounters.DUTY_CYCLE_ERRORS));
        assertEquals(0, cluster.counter(3, NicCounters.DUTY_CYCLE_ERRORS));
    }

    /**
     * A throw in TX (here: the completion of a Send, TX step 7, rings a Send Doorbell outside host
     * memory) stays inside the NIC's own duty cycle: counted as caused by TX, and the cycle goes on to the
     * Command Queues, RX and the DMA epoch, as every cycle after it does.
     */
    @Test
    void aThrowInTransmitIsCountedAndTheRestOfTheCycleRuns()
    {
        cluster = new SteppedCluster(base, 2, 2);
        final SteppedProcess[] p = cluster.registerGroup(GROUP, 0, 3);
        final ProcessSlot sender = cluster.nics.get(0).slot(p[0].index);
        final long sendDoorbells = sender.sendDoorbells;
        sender.sendDoorbells = cluster.images.get(0).hostMemory().capacity();
        p[1].receiveContext(0, GROUP, 0, 5, 0, 100);
        p[1].post(ProcessCommand.RECEIVE, 0);
        p[0].fill(0, 100, 3);
        p[0].sendContext(0, p[1].name, 5, 0, 100);
        p[0].post(ProcessCommand.SEND, 0);

        final String cause = NicCounters.ERRORS_CAUSED_BY + "TX";
        long cyclesBefore = 0;
        for (int step = 0; step < 1_000 && cluster.counter(0, cause) <= 0; step++)
        {
            cyclesBefore = dutyCycles(0);
            cluster.step();
        }
        assertEquals(1, cluster.counter(0, cause), "the completion threw in TX, once");
        assertEquals(cyclesBefore + 1, dutyCycles(0), "the cycle that threw ended as every cycle does");
        cluster.settle();
        assertEquals(Doorbell.DONE, p[1].receiveDoorbell(0), "the packet had left before the completion threw");
        assertTrue(cluster.errorLog(0).contains("caused by TX"), cluster.errorLog(0));

        sender.sendDoorbells = sendDoorbells;
        p[1].receiveContext(1, GROUP, 0, 6, 0, 100);
        p[1].post(ProcessCommand.RECEIVE, 1);
        p[0].sendContext(1, p[1].name, 6, 0, 100);
        p[0].post(ProcessCommand.SEND, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(1), "the loop went on");
        assertEquals(Doorbell.DONE, p[1].receiveDoorbell(1));
        assertEquals(1, cluster.counter(0, NicCounters.DUTY_CYCLE_ERRORS));
    }

    /**
     * A send whose every TX step throws (here: its destination made a node the cluster does not have,
     * after its permission came) holds up only its own process: the next step starts with the process
     * after it, whose send completes, and a throw is not work, so the cluster still goes idle.
     */
    @Test
    void aSendThatThrowsAtEveryStepHoldsUpOnlyItsOwnProcess()
    {
        cluster = new SteppedCluster(base, 2, 2);
        final SteppedProcess[] p = cluster.registerGroup(GROUP, 0, 0, 3);
        final int length = 3 * cluster.params.pageSize();
        p[2].receiveContext(0, GROUP, 0, 5, 0, length);
        p[2].post(ProcessCommand.RECEIVE, 0);
        p[2].receiveContext(1, GROUP, 1, 6, length, 100);
        p[2].post(ProcessCommand.RECEIVE, 1);
        p[0].fill(0, length, 3);
        p[0].sendContext(0, p[2].name, 5, 0, length);
        p[0].post(ProcessCommand.SEND, 0);
        final SendOperation broken = cluster.nics.get(0).slot(p[0].index).sends[0];
        for (int step = 0; step < 1_000 && !broken.permitted; step++)
        {
            cluster.step();
        }
        assertTrue(broken.permitted, "the receiver granted the send");
        assertEquals(0, broken.nextPacket, "no packet sent yet");
        broken.destinationNode = 99;

        p[1].fill(0, 100, 4);
        p[1].sendContext(0, p[2].name, 6, 0, 100);
        p[1].post(ProcessCommand.SEND, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[1].sendDoorbell(0), "the other process's send went");
        assertEquals(Doorbell.DONE, p[2].receiveDoorbell(1));
        assertTrue(cluster.counter(0, NicCounters.ERRORS_CAUSED_BY + "TX") >= 1, "the broken send threw in TX");
        assertEquals(0, broken.nextPacket, "the broken send is still where it was, no packet sent");
        assertTrue(broken.permitted);
    }

    private long dutyCycles(final int node)
    {
        final NodeImage image = cluster.images.get(node);
        return image.sdram().getLongVolatile(
            (int)image.sdramLayout().controlProgramOffset() + ControlProgramLayout.DUTY_CYCLES_OFFSET);
    }

    @Test
    void aDataPacketThatThrowsIsCountedAsADataPacketNotAsARejectedSystemMessage()
    {
        cluster = new SteppedCluster(base, 2, 2);
        final SteppedProcess[] p = cluster.registerGroup(GROUP, 0, 3);
        final ProcessSlot receiver = cluster.nics.get(3).slot(p[1].index);
        final long receiveDoorbells = receiver.receiveDoorbells;
        receiver.receiveDoorbells = cluster.images.get(3).hostMemory().capacity();

        // The last data packet completes the receive, whose doorbell lies outside host memory.
        for (int context = 0; context < 2; context++)
        {
            p[1].receiveContext(context, GROUP, 0, 5 + context, 0, 100);
            p[1].post(ProcessCommand.RECEIVE, context);
            p[0].fill(0, 100, 3);
            p[0].sendContext(context, p[1].name, 5 + context, 0, 100);
            p[0].post(ProcessCommand.SEND, context);
            cluster.settle();
            assertEquals(Doorbell.DONE, p[0].sendDoorbell(context), "the sender's side is unaffected");
        }

        assertEquals(2, cluster.counter(3, NicCounters.DUTY_CYCLE_ERRORS));
        assertEquals(2, cluster.counter(3, NicCounters.ERRORS_CAUSED_BY + "data packet"));
        assertEquals(0, cluster.counter(3, NicCounters.SYSTEM_MESSAGES_REJECTED));
        assertEquals(1, occurrences(cluster.errorLog(3), LOGGED), "one stack trace for one kind");
        assertEquals(0, cluster.nics.get(3).activeTransfers(), "the transfers were released before the doorbell");

        // The loop went on: with the doorbells where they belong, the next receive completes.
        receiver.receiveDoorbells = receiveDoorbells;
        p[1].receiveContext(2, GROUP, 0, 9, 0, 100);
        p[1].post(ProcessCommand.RECEIVE, 2);
        p[0].sendContext(2, p[1].name, 9, 0, 100);
        p[0].post(ProcessCommand.SEND, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[1].receiveDoorbell(2));
        assertEquals(2, cluster.counter(3, NicCounters.DUTY_CYCLE_ERRORS));
    }

    private static int occurrences(final String text, final String what)
    {
        int count = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1))
        {
            count++;
        }
        return count;
    }
}
