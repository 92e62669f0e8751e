package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NewGroupFlyweight;
import org.qnix.abi.NewProcessFlyweight;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.SystemMessage;

/**
 * A Process Table entry handed to another process while a NIC elsewhere has not read the
 * Delete_Process of the one before (SystemMessage, "Receiver incarnation"): what that NIC sends to the
 * old process, from its stale Name Table, must not reach the new one, and an acknowledgement another
 * NIC sent for the old process must not count for the new one. Stepped by hand on a 2x2 torus: node 3
 * deletes X, from entry 1, and registers Y there; node 0, which has not run since, sends to X.
 */
class ReusedProcessEntryTest extends SteppedClusterTest
{
    private static final int GROUP = 7;
    private static final int TAG = 5;
    /** Room for every message here, within the 3-page largest message of the small parameters. */
    private static final int RECEIVE_LENGTH = 2048;

    private SteppedProcess sender;
    private SteppedProcess x;

    /** @return Y, registered in X's entry on node 3 before node 0 has read X's Delete_Process. */
    private SteppedProcess reuseEntryOfX()
    {
        cluster = new SteppedCluster(base, SteppedCluster.smallParameters(2, 2).build());
        final SteppedProcess[] p = cluster.registerGroup(GROUP, 0, 3);
        sender = p[0];
        x = p[1];
        final int deletion = x.delete();
        for (int i = 0; i < 3; i++)
        {
            cluster.nics.get(3).doWork();
        }
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(3, deletion), "node 3 took X's Delete_Process");
        final SteppedProcess y = new SteppedProcess(cluster, 3, x.index, new ProcessName(8, 0));
        y.lockArea(1);
        y.register(8, 1);
        cluster.nics.get(3).doWork();
        assertEquals(2, cluster.nics.get(3).slot(x.index).incarnation, "Y is the entry's second process");
        return y;
    }

    /** Y posts a receive of anything from anyone: nothing meant for X may complete it. */
    private static void assertNothingFor(final SteppedProcess y, final SteppedCluster cluster)
    {
        y.receiveContext(0, ContextLayout.ANY, ContextLayout.ANY, ContextLayout.ANY, 0, RECEIVE_LENGTH);
        y.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertFalse(Doorbell.isComplete(y.receiveDoorbell(0)), "Y's receive completed: " +
            Doorbell.name(y.receiveDoorbell(0)));
        assertEquals(0, y.receiveCompletion(0)[3]);
        assertEquals(0, cluster.counter(3, NicCounters.EAGER_SHORTS_STAGED));
        assertEquals(0, cluster.counter(3, NicCounters.STAGING_BYTES_IN_USE));
    }

    @Test
    void anEagerShortForTheOldProcessIsNotDeliveredToTheNewOne()
    {
        final SteppedProcess y = reuseEntryOfX();
        sender.shortContext(0, x.name, TAG, new byte[] {1, 2, 3, 4, 5});
        sender.post(ProcessCommand.SEND_SHORT, 0);
        cluster.nics.get(0).doWork();   // transmits before it receives: X is still in its Name Table
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, sender.sendDoorbell(0));
        assertNothingFor(y, cluster);
    }

    @Test
    void aPermissionRequestForTheOldProcessIsNotGrantedToTheNewOne()
    {
        final SteppedProcess y = reuseEntryOfX();
        sender.fill(0, 2000, 3);
        sender.sendContext(0, x.name, TAG, 0, 2000);
        sender.post(ProcessCommand.SEND, 0);
        cluster.nics.get(0).doWork();
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, sender.sendDoorbell(0));
        assertEquals(0, cluster.nics.get(3).activeTransfers(), "no transfer was granted into Y's entry");
        assertNothingFor(y, cluster);
    }

    @Test
    void aMulticastToTheOldProcessIsNotDeliveredToTheNewOne()
    {
        final SteppedProcess y = reuseEntryOfX();
        sender.shortContext(0, x.name, TAG, new byte[] {9, 8, 7});
        sender.postMulticast(ProcessCommand.MULTICAST_SHORT, 0, x.name);
        cluster.nics.get(0).doWork();
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, sender.sendDoorbell(0));
        assertNothingFor(y, cluster);
    }

    /**
     * New_Group_Acks for X (incarnation 1) arriving late, from every NIC, while Y waits for its Join_Group
     * of a group whose other member never comes: they do not complete Y's join; acknowledgements for Y
     * (incarnation 2) do.
     */
    @Test
    void aLateNewGroupAckForTheOldProcessDoesNotCompleteTheNewOnesJoin()
    {
        final SteppedProcess y = reuseEntryOfX();
        cluster.settle();
        final int group = 9;
        y.post(ProcessCommand.JOIN_GROUP, 0, group, 2);
        cluster.nics.get(3).doWork();

        injectGroupAcks(group, 1);
        cluster.settle();
        assertFalse(Doorbell.isComplete(y.sendDoorbell(0)), "Y's join completed: " + Doorbell.name(y.sendDoorbell(0)));

        injectGroupAcks(group, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, y.sendDoorbell(0));
    }

    /**
     * New_Process_Acks and New_Group_Acks for X arriving late at node 3 while Y, in X's entry, registers
     * (with the name and group X had had, as a program run again would): Y's registration waits for the
     * acknowledgements of its own New_Process and New_Group.
     */
    @Test
    void lateAcknowledgementsForTheOldProcessDoNotCompleteTheNewOnesRegistration()
    {
        final SteppedProcess y = reuseEntryOfX();
        final NewProcessFlyweight processAck = new NewProcessFlyweight();
        for (int node = 0; node < 3; node++)
        {
            final UnsafeBuffer payload = new UnsafeBuffer(new byte[SystemMessage.NEW_PROCESS_ACK_LENGTH]);
            processAck.wrap(payload, 0).ai(y.name.ai()).pi(y.name.pi()).nicPid(x.index + 1).ackIncarnation(1);
            cluster.injectSystemMessage(node, 3, SystemMessage.NEW_PROCESS_ACK, payload,
                SystemMessage.NEW_PROCESS_ACK_LENGTH);
        }
        injectGroupAcks(8, 1);
        for (int i = 0; i < 3; i++)
        {
            cluster.nics.get(3).doWork();
        }
        assertEquals(ProcessTableLayout.STATE_REGISTERING, cluster.processState(3, x.index));

        cluster.settle();
        assertEquals(ProcessTableLayout.STATE_REGISTERED, cluster.processState(3, x.index));
    }

    /** A New_Group_Ack of {@code group} for entry 1 of node 3 ({@code incarnation}) from every NIC, node 3 too. */
    private void injectGroupAcks(final int group, final int incarnation)
    {
        for (int node = 0; node < 4; node++)
        {
            final UnsafeBuffer payload = new UnsafeBuffer(new byte[SystemMessage.NEW_GROUP_ACK_LENGTH]);
            new NewGroupFlyweight().wrap(payload, 0).group(group).ackNicPid(x.index + 1).ackIncarnation(incarnation);
            cluster.injectSystemMessage(node, 3, SystemMessage.NEW_GROUP_ACK, payload,
                SystemMessage.NEW_GROUP_ACK_LENGTH);
        }
    }

    @Test
    void theNewProcessGetsWhatIsSentToItOnceTheSenderKnowsIt()
    {
        final SteppedProcess y = reuseEntryOfX();
        cluster.settle();
        sender.shortContext(0, y.name, TAG, new byte[] {4, 2});
        sender.post(ProcessCommand.SEND_SHORT, 0);
        y.receiveContext(0, ContextLayout.ANY, ContextLayout.ANY, ContextLayout.ANY, 0, RECEIVE_LENGTH);
        y.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, sender.sendDoorbell(0));
        assertEquals(Doorbell.DONE, y.receiveDoorbell(0));
        assertEquals(2, y.receiveCompletion(0)[3]);
        assertEquals(4, y.areaByte(0));
    }
}
