package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;


import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.PermissionReplyFlyweight;
import org.qnix.abi.PermissionRequestFlyweight;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ProtectionTableLayout;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.RxFifo;
import org.qnix.abi.ShortFlow;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.WireMessageType;

/**
 * Send, Send_Short and Receive through real node images on a 2x2 torus, stepped by hand (thesis 3.5,
 * 3.5.1, 3.5.2): direct and staged delivery, alignment, truncation, protection, and the flow control
 * with its permission protocol (DESIGN.md 8, items 2-4, 10-12).
 */
class MessagePathTest extends SteppedClusterTest
{
    private static final int GROUP = 7;
    private static final int PAGE = 1024;

    /** How short messages travel in this class's clusters; {@code MessagePathPermissionFlowTest} runs them all the thesis' way. */
    ShortFlow shortFlow()
    {
        return ShortFlow.EAGER;
    }

    private SteppedProcess[] start(final ClusterParameters params, final int... nodes)
    {
        cluster = new SteppedCluster(base, params.toBuilder().shortFlow(shortFlow()).build());
        return cluster.registerGroup(GROUP, nodes);
    }

    private static void assertDelivered(final SteppedProcess to, final int toOffset, final int length, final int seed,
        final String what)
    {
        for (int i = 0; i < length; i++)
        {
            if (SteppedProcess.pattern(seed, i) != to.areaByte(toOffset + i))
            {
                throw new AssertionError(what + ": byte " + i + " of " + length + " differs");
            }
        }
    }

    @Test
    void directPathDeliversEveryByteAtEveryAlignment()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        int seed = 1;
        for (final int length : new int[] {0, 1, PAGE - 1, PAGE, PAGE + 1, 2 * PAGE + 5, 3 * PAGE})
        {
            for (final int senderOffset : new int[] {0, 1, PAGE - 3})
            {
                for (final int receiverOffset : new int[] {0, 1, PAGE - 3})
                {
                    seed++;
                    final int to = 8 * PAGE + receiverOffset;
                    sender.fill(senderOffset, length, seed);
                    receiver.fill(to - 1, length + 2, 99);
                    receiver.receiveContext(0, GROUP, 0, 5, to, length);
                    receiver.post(ProcessCommand.RECEIVE, 0);
                    cluster.settle();
                    sender.sendContext(0, receiver.name, 5, senderOffset, length);
                    sender.post(ProcessCommand.SEND, 0);
                    cluster.settle();
                    final String what = "length " + length + " from offset " + senderOffset + " to " + receiverOffset;
                    assertEquals(Doorbell.DONE, sender.sendDoorbell(0), what);
                    assertEquals(Doorbell.DONE, receiver.receiveDoorbell(0), what);
                    assertDelivered(receiver, to, length, seed, what);
                    assertEquals(SteppedProcess.pattern(99, 0), receiver.areaByte(to - 1), what + ": byte before");
                    assertEquals(SteppedProcess.pattern(99, length + 1), receiver.areaByte(to + length),
                        what + ": byte after");
                    final long[] completion = receiver.receiveCompletion(0);
                    assertEquals(GROUP, completion[0]);
                    assertEquals(0, completion[1]);
                    assertEquals(5, completion[2]);
                    assertEquals(length, completion[3]);
                    sender.freeDoorbells();
                    receiver.freeDoorbells();
                }
            }
        }
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
        assertEquals(0, counter(3, NicCounters.MESSAGES_STAGED));
    }

    /**
     * A duty cycle takes up to {@link NicControlProgram#TX_STEPS_PER_CYCLE} TX steps: a granted 20-page
     * Send leaves as 16 packets in one cycle and 4 in the next, and arrives whole.
     */
    @Test
    void aDutyCycleSendsUpToItsTxStepsOfPacketsAndTheMessageArrivesWhole()
    {
        sendMorePagesThanOneCycleTakes(false);
    }

    /** With one TX step a cycle ({@link SteppedCluster#onePacketPerCycle()}), one packet a cycle. */
    @Test
    void withOneTxStepACycleEachCycleSendsOnePacket()
    {
        sendMorePagesThanOneCycleTakes(true);
    }

    private void sendMorePagesThanOneCycleTakes(final boolean onePerCycle)
    {
        final int pages = NicControlProgram.TX_STEPS_PER_CYCLE + 4;
        final SteppedProcess[] p = start(
            SteppedCluster.smallParameters(2, 2).descriptorsPerRegion(pages + 1).build(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        if (onePerCycle)
        {
            cluster.onePacketPerCycle();
        }
        receiver.receiveContext(0, GROUP, 0, 1, 0, pages * PAGE);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        sender.fill(0, pages * PAGE, 41);
        sender.sendContext(0, receiver.name, 1, 0, pages * PAGE);
        sender.post(ProcessCommand.SEND, 0);
        for (int steps = 0; counter(0, NicCounters.DATA_PACKETS_SENT) < 1; steps++)
        {
            assertTrue(steps < 100, "the first packet was never sent");
            cluster.step();
        }
        assertEquals(onePerCycle ? 1 : NicControlProgram.TX_STEPS_PER_CYCLE, counter(0, NicCounters.DATA_PACKETS_SENT),
            "packets of the first cycle with permission");
        cluster.step();
        assertEquals(onePerCycle ? 2 : pages, counter(0, NicCounters.DATA_PACKETS_SENT), "after the next cycle");
        cluster.settle();
        assertEquals(Doorbell.DONE, sender.sendDoorbell(0));
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(0));
        assertDelivered(receiver, 0, pages * PAGE, 41, "the receive buffer");
        assertEquals(pages, counter(0, NicCounters.DATA_PACKETS_SENT));
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
    }

    /**
     * The first level of TX's double-level round robin (thesis 3.5, step 7): with one packet a cycle,
     * the sends of three processes of one NIC leave a packet each in turn, in Process Table order; once
     * the middle one is deleted, the other two alternate. The walk covers only the entries with a
     * process ({@link ActiveProcesses}).
     */
    @Test
    void theSendsOfSeveralProcessesTakeTurnsPacketByPacketInProcessTableOrder()
    {
        final int pages = 4;
        final SteppedProcess[] p = start(
            SteppedCluster.smallParameters(2, 2).descriptorsPerRegion(pages + 1).build(), 0, 0, 0, 3, 3, 3);
        cluster.onePacketPerCycle();
        for (int s = 0; s < 3; s++)
        {
            p[3 + s].receiveContext(0, GROUP, s, 1, 0, pages * PAGE);
            p[3 + s].post(ProcessCommand.RECEIVE, 0);
        }
        cluster.settle();
        for (int s = 0; s < 3; s++)
        {
            p[s].fill(0, pages * PAGE, 50 + s);
            p[s].sendContext(0, p[3 + s].name, 1, 0, pages * PAGE);
            p[s].post(ProcessCommand.SEND, 0);
        }
        final StringBuilder order = new StringBuilder();
        final int[] delivered = new int[3];
        for (int steps = 0; order.length() < 9; steps++)
        {
            assertTrue(steps < 100, "nine packets never left; so far " + order);
            final long before = counter(0, NicCounters.DATA_PACKETS_SENT);
            cluster.step();
            assertTrue(counter(0, NicCounters.DATA_PACKETS_SENT) - before <= 1, "one packet a cycle");
            for (int s = 0; s < 3; s++)
            {
                if (delivered[s] < pages && pageDelivered(p[3 + s], delivered[s], 50 + s))
                {
                    delivered[s]++;
                    order.append(s);
                }
            }
        }
        assertEquals("012012012", order.toString(), "senders of the first nine packets");

        p[1].delete();
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertEquals(Doorbell.DONE, p[2].sendDoorbell(0));
        assertDelivered(p[3], 0, pages * PAGE, 50, "the first receiver");
        assertDelivered(p[5], 0, pages * PAGE, 52, "the third receiver");
        assertEquals(2 * pages + 3, counter(0, NicCounters.DATA_PACKETS_SENT),
            "the deleted process's last page never left");
    }

    private static boolean pageDelivered(final SteppedProcess receiver, final int page, final int seed)
    {
        for (int i = page * PAGE; i < (page + 1) * PAGE; i++)
        {
            if (SteppedProcess.pattern(seed, i) != receiver.areaByte(i))
            {
                return false;
            }
        }
        return true;
    }

    @Test
    void dataArrivingBeforeItsReceiveIsStagedThenDelivered()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 1, 2);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        sender.fill(3, 2 * PAGE + 100, 42);
        sender.sendContext(1, receiver.name, 9, 3, 2 * PAGE + 100);
        sender.post(ProcessCommand.SEND, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, sender.sendDoorbell(1), "the sender completes once its data left");
        assertEquals(1, counter(2, NicCounters.MESSAGES_STAGED));
        assertEquals(3L * PAGE, cluster.nics.get(2).stagingBytesInUse());

        // Any_Proc and Any_Tag: the completion reports the real source and tag.
        receiver.receiveContext(2, ContextLayout.ANY, ContextLayout.ANY, ContextLayout.ANY, PAGE + 7, 2 * PAGE + 100);
        receiver.post(ProcessCommand.RECEIVE, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(2));
        assertDelivered(receiver, PAGE + 7, 2 * PAGE + 100, 42, "staged");
        final long[] completion = receiver.receiveCompletion(2);
        assertEquals(GROUP, completion[0]);
        assertEquals(0, completion[1]);
        assertEquals(9, completion[2]);
        assertEquals(2 * PAGE + 100, completion[3]);
        assertEquals(0, cluster.nics.get(2).stagingBytesInUse());
        assertEquals(0, cluster.nics.get(2).activeTransfers());
    }

    @Test
    void sendShortCarriesTheContextRegionData()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 0);
        final byte[] data = new byte[64];
        for (int i = 0; i < data.length; i++)
        {
            data[i] = SteppedProcess.pattern(5, i);
        }
        p[1].receiveContext(0, GROUP, 0, 3, 11, 64);
        p[1].post(ProcessCommand.RECEIVE, 0);
        p[0].shortContext(0, p[1].name, 3, data);
        p[0].post(ProcessCommand.SEND_SHORT, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertEquals(Doorbell.DONE, p[1].receiveDoorbell(0));
        assertDelivered(p[1], 11, 64, 5, "Send_Short on one node");

        // Longer than the short threshold: a bad context.
        p[0].shortContext(1, p[1].name, 3, new byte[65]);
        p[0].post(ProcessCommand.SEND_SHORT, 1);
        cluster.settle();
        assertEquals(Doorbell.BAD_CONTEXT, p[0].sendDoorbell(1));
    }

    @Test
    void aMessageLongerThanTheReceiveBufferIsTruncatedWithItsPrefixDelivered()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 1);
        p[0].fill(0, 3 * PAGE, 8);
        p[1].fill(0, 4 * PAGE, 99);
        p[1].receiveContext(0, GROUP, 0, 1, 1, 1000);
        p[1].post(ProcessCommand.RECEIVE, 0);
        p[0].sendContext(0, p[1].name, 1, 0, 3 * PAGE);
        p[0].post(ProcessCommand.SEND, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertEquals(Doorbell.TRUNCATED, p[1].receiveDoorbell(0));
        assertDelivered(p[1], 1, 1000, 8, "prefix");
        assertEquals(SteppedProcess.pattern(99, 1001), p[1].areaByte(1001), "nothing beyond the buffer");
        assertEquals(3 * PAGE, p[1].receiveCompletion(0)[3], "the completion reports the message length");
    }

    @Test
    void aPageOutsideTheProcessLockedMemoryCompletesWithProtectionAndMovesNoByte()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 1, 0);
        p[1].receiveContext(0, GROUP, 0, 1, 0, 2 * PAGE);
        p[1].post(ProcessCommand.RECEIVE, 0);
        cluster.settle();

        // A page of process 2, on the same node and locked by it.
        p[0].sendContext(0, p[1].name, 1, 0, 2 * PAGE);
        p[0].corruptSendDescriptor(0, 1, p[2].areaAddress(0));
        p[0].post(ProcessCommand.SEND, 0);
        cluster.settle();
        // A page of its own that it has not locked.
        p[0].lockArea(0);
        p[0].sendContext(1, p[1].name, 1, 0, 10);
        p[0].post(ProcessCommand.SEND, 1);
        cluster.settle();
        // An address outside host memory.
        p[0].lockArea(1);
        p[0].sendContext(2, p[1].name, 1, 0, 10);
        p[0].corruptSendDescriptor(2, 0, 1L << 40);
        p[0].post(ProcessCommand.SEND, 2);
        cluster.settle();

        assertEquals(Doorbell.PROTECTION, p[0].sendDoorbell(0));
        assertEquals(Doorbell.PROTECTION, p[0].sendDoorbell(1));
        assertEquals(Doorbell.PROTECTION, p[0].sendDoorbell(2));
        assertEquals(0, counter(0, NicCounters.DATA_PACKETS_SENT));
        assertEquals(0, counter(0, NicCounters.PERMISSION_REQUESTS_SENT));
        assertEquals(Doorbell.FREE, p[1].receiveDoorbell(0), "the receive is still waiting");

        // The receiver unlocks the pages of its posted receive before the data comes: nothing is
        // written, the receive completes Protection.
        p[1].fill(0, 2 * PAGE, 77);
        p[1].lockArea(0);
        p[0].fill(0, 2 * PAGE, 3);
        p[0].sendContext(3, p[1].name, 1, 0, 2 * PAGE);
        p[0].post(ProcessCommand.SEND, 3);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(3));
        assertEquals(Doorbell.PROTECTION, p[1].receiveDoorbell(0));
        assertDelivered(p[1], 0, 2 * PAGE, 77, "the unlocked receive buffer");

        // A receive into memory it has not locked is refused the same way.
        p[1].receiveContext(1, GROUP, 0, 1, 0, 10);
        p[1].post(ProcessCommand.RECEIVE, 1);
        cluster.settle();
        assertEquals(Doorbell.PROTECTION, p[1].receiveDoorbell(1));
    }

    /**
     * Requests deferred for want of staging room: with one receiver, whose quota is then all of staging,
     * the quota is what says no.
     */
    private long deferredForRoom(final int node)
    {
        return counter(node, NicCounters.REQUESTS_DEFERRED_STAGING_FULL) +
            counter(node, NicCounters.REQUESTS_DEFERRED_RECEIVER_QUOTA);
    }

    /** Staging space of exactly one maximum message: the smallest SDRAM a cluster may have. */
    private static ClusterParameters tightStaging()
    {
        return SteppedCluster.tightStagingParameters().build();
    }

    @Test
    void withStagingExhaustedARequestGetsNoReplyTheSenderKeepsAskingAndTheTransferCompletesOnceSpaceFrees()
    {
        final SteppedProcess[] p = start(tightStaging(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        final NicControlProgram receivingNic = cluster.nics.get(3);
        assertEquals(3 * PAGE, new NicSdramLayout(cluster.params).managedMemoryLength());

        sender.fill(0, 3 * PAGE, 1);
        sender.sendContext(0, receiver.name, 1, 0, 3 * PAGE);
        sender.post(ProcessCommand.SEND, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, sender.sendDoorbell(0));
        assertEquals(3L * PAGE, receivingNic.stagingBytesInUse(), "staging is full");

        sender.fill(4 * PAGE, 10, 2);
        sender.sendContext(1, receiver.name, 2, 4 * PAGE, 10);
        sender.post(ProcessCommand.SEND, 1);
        cluster.settle();
        assertEquals(1, deferredForRoom(3), "no room: no reply");
        assertEquals(Doorbell.FREE, sender.sendDoorbell(1));
        assertFalse(cluster.nics.get(0).slot(0).sends[1].permitted);

        for (int retry = 2; retry <= 4; retry++)
        {
            cluster.clock.advance(PermissionRequests.PERMISSION_RETRY_MS);
            cluster.settle();
            assertEquals(retry, deferredForRoom(3), "the sender keeps asking");
        }
        assertEquals(Doorbell.FREE, sender.sendDoorbell(1));

        // The first message is received: its staging space frees, and the request the receiving NIC
        // kept is granted at once (DeferredRequests), without waiting for the sender's next retry.
        receiver.receiveContext(0, GROUP, 0, 1, 0, 3 * PAGE);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(0));
        assertDelivered(receiver, 0, 3 * PAGE, 1, "first message");
        assertEquals(Doorbell.DONE, sender.sendDoorbell(1));
        assertEquals(PAGE, receivingNic.stagingBytesInUse(), "the second message, staged");
        assertEquals(4, deferredForRoom(3), "a kept request answered again is not counted again");
        receiver.receiveContext(1, GROUP, 0, 2, 5 * PAGE, 10);
        receiver.post(ProcessCommand.RECEIVE, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(1));
        assertDelivered(receiver, 5 * PAGE, 10, 2, "second message");
        assertEquals(0, receivingNic.stagingBytesInUse());
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
    }

    /**
     * A 3-page message with tag 1 that fills the receiving NIC's tight staging, then a 10-byte one with
     * tag 2 that finds no room; neither receive is posted.
     */
    private void fillStagingThenSendAnother(final SteppedProcess sender, final SteppedProcess receiver)
    {
        sender.fill(0, 3 * PAGE, 1);
        sender.sendContext(0, receiver.name, 1, 0, 3 * PAGE);
        sender.post(ProcessCommand.SEND, 0);
        sender.fill(4 * PAGE, 10, 2);
        sender.sendContext(1, receiver.name, 2, 4 * PAGE, 10);
        sender.post(ProcessCommand.SEND, 1);
        cluster.settle();
    }

    /**
     * A Send blocked for long on a receiver that receives nothing asks again less and less often (after
     * an eighth of its wait, at most {@link PermissionRequests#PERMISSION_RETRY_MAX_MS} apart), so its NICs can go
     * idle; the receiving NIC still answers the request it kept as soon as room frees, not at the
     * sender's next, distant retry.
     */
    @Test
    void aSendBlockedForLongAsksLessOftenAndIsStillGrantedTheMomentRoomFrees()
    {
        final SteppedProcess[] p = start(tightStaging(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];

        fillStagingThenSendAnother(sender, receiver);
        assertEquals(Doorbell.FREE, sender.sendDoorbell(1), "the second waits for staging room");
        final long asked = counter(0, NicCounters.PERMISSION_REQUESTS_SENT);

        final int seconds = 10;
        for (int ms = 0; ms < seconds * 1000; ms++)
        {
            cluster.clock.advance(1);
            cluster.settle();
        }
        final long retries = counter(0, NicCounters.PERMISSION_REQUESTS_SENT) - asked;
        assertEquals(retries, counter(0, NicCounters.PERMISSION_RETRIES), "each counted as a retry");
        // Every millisecond would be 10,000. An eighth of the wait, at most a second apart: 15 at 1 ms, then
        // about 8 ln(10,000 / 16) ~ 51 more up to 10 s (the cap comes at 8 s): 72.
        assertTrue(retries >= 50 && retries <= 100, retries + " retries in " + seconds + " s");
        assertEquals(Doorbell.FREE, sender.sendDoorbell(1));

        receiver.receiveContext(0, GROUP, 0, 1, 0, 3 * PAGE);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, sender.sendDoorbell(1), "granted when room freed, with no clock advance");
        receiver.receiveContext(1, GROUP, 0, 2, 5 * PAGE, 10);
        receiver.post(ProcessCommand.RECEIVE, 1);
        cluster.settle();
        assertDelivered(receiver, 0, 3 * PAGE, 1, "first message");
        assertDelivered(receiver, 5 * PAGE, 10, 2, "second message");
    }

    /**
     * A request kept for want of room is granted the moment its receiver posts a receive it matches,
     * even when that receive takes no staged message (staging stays full of another tag's message).
     */
    @Test
    void aKeptRequestIsGrantedWhenItsReceivePostsWithoutWaitingForTheRetry()
    {
        final SteppedProcess[] p = start(tightStaging(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        final NicControlProgram receivingNic = cluster.nics.get(3);

        fillStagingThenSendAnother(sender, receiver);
        assertEquals(1, deferredForRoom(3), "no room: kept, no reply");

        receiver.receiveContext(1, GROUP, 0, 2, 5 * PAGE, 10);
        receiver.post(ProcessCommand.RECEIVE, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(1), "granted into the receive just posted");
        assertDelivered(receiver, 5 * PAGE, 10, 2, "second message");
        assertEquals(Doorbell.DONE, sender.sendDoorbell(1));
        assertEquals(3L * PAGE, receivingNic.stagingBytesInUse(), "the first message is still staged");
    }

    /**
     * Two Sends of one sender and tag both wait for staging room, so both must be received in the order
     * they were sent (docs/IMPLEMENTATION.md, "Ordering"). Their retries fall out of step (the older has
     * waited longer, so asks less often); a retry must not move the older one's kept request behind the
     * younger's, or the receive posted next would take the younger first.
     */
    @Test
    void twoWaitingSendsOfOneTagAreGrantedInOrderWhateverTheirRetries()
    {
        final SteppedProcess[] p = start(tightStaging(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        final int youngerAfterMs = 10;

        fillStagingThenSendAnother(sender, receiver);
        for (int ms = 0; ms < youngerAfterMs; ms++)
        {
            cluster.clock.advance(1);
            cluster.settle();
        }
        sender.fill(5 * PAGE, 10, 3);
        sender.sendContext(2, receiver.name, 2, 5 * PAGE, 10);
        sender.post(ProcessCommand.SEND, 2);
        cluster.settle();
        assertEquals(Doorbell.FREE, sender.sendDoorbell(1), "the older waits for room");
        assertEquals(Doorbell.FREE, sender.sendDoorbell(2), "the younger too");

        // The first millisecond at which the older asks again and the younger does not, by the senders' rule.
        long olderLast = 0;
        long youngerLast = youngerAfterMs;
        int olderInterval = PermissionRequests.PERMISSION_RETRY_MS;
        int youngerInterval = PermissionRequests.PERMISSION_RETRY_MS;
        long t = youngerAfterMs;
        boolean olderAlone = false;
        while (!olderAlone)
        {
            t++;
            final boolean olderDue = t - olderLast >= olderInterval;
            final boolean youngerDue = t - youngerLast >= youngerInterval;
            if (olderDue)
            {
                olderInterval = PermissionRequests.retryInterval(t);
                olderLast = t;
            }
            if (youngerDue)
            {
                youngerInterval = PermissionRequests.retryInterval(t - youngerAfterMs);
                youngerLast = t;
            }
            olderAlone = olderDue && !youngerDue;
        }
        final long retriesBefore = counter(0, NicCounters.PERMISSION_RETRIES);
        for (long ms = youngerAfterMs; ms < t; ms++)
        {
            cluster.clock.advance(1);
            cluster.settle();
        }
        assertTrue(counter(0, NicCounters.PERMISSION_RETRIES) > retriesBefore, "they asked again");

        receiver.receiveContext(0, GROUP, 0, 2, 0, 64);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(0));
        assertDelivered(receiver, 0, 10, 2, "the first receive of tag 2 takes the older message");
        receiver.receiveContext(1, GROUP, 0, 2, PAGE, 64);
        receiver.post(ProcessCommand.RECEIVE, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(1));
        assertDelivered(receiver, PAGE, 10, 3, "the second the younger");
    }

    /**
     * Staging memory full of one process's message keeps another process's request waiting; when the
     * first process takes its message the room is the NIC's, so the other's kept request is granted at
     * once, not at its sender's retry.
     */
    @Test
    void stagingFreedByOneReceiverGrantsAnotherReceiversKeptRequestAtOnce()
    {
        final SteppedProcess[] p = start(tightStaging(), 0, 3, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess first = p[1];
        final SteppedProcess second = p[2];

        sender.fill(0, 3 * PAGE, 1);
        sender.sendContext(0, first.name, 1, 0, 3 * PAGE);
        sender.post(ProcessCommand.SEND, 0);
        cluster.settle();
        assertEquals(3L * PAGE, cluster.nics.get(3).stagingBytesInUse(), "staging memory is full");
        sender.fill(4 * PAGE, 10, 2);
        sender.sendContext(1, second.name, 2, 4 * PAGE, 10);
        sender.post(ProcessCommand.SEND, 1);
        cluster.settle();
        assertEquals(1, counter(3, NicCounters.REQUESTS_DEFERRED_STAGING_FULL), "no room for the second's");
        assertEquals(Doorbell.FREE, sender.sendDoorbell(1));

        first.receiveContext(0, GROUP, 0, 1, 0, 3 * PAGE);
        first.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, first.receiveDoorbell(0));
        assertEquals(Doorbell.DONE, sender.sendDoorbell(1), "staged for the second with no clock advance");
        second.receiveContext(0, GROUP, 0, 2, 0, 64);
        second.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, second.receiveDoorbell(0));
        assertDelivered(second, 0, 10, 2, "the second's message");
    }

    /**
     * Issue 17, item 1: a Send waits for permission while the process frees its buffer and the driver
     * gives the pages to another process on the node. When permission comes, the NIC checks the page at
     * the DMA read and ends the send Protection: not one byte of the new owner's data leaves the node.
     */
    @Test
    void aSendWhosePagesGoToAnotherProcessWhileItWaitsForPermissionEndsProtectionAndSendsNothing()
    {
        final SteppedProcess[] p = start(tightStaging(), 0, 3, 0);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        final SteppedProcess newOwner = p[2];
        final NicControlProgram receivingNic = cluster.nics.get(3);

        sender.fill(0, 3 * PAGE, 1);
        sender.sendContext(0, receiver.name, 1, 0, 3 * PAGE);
        sender.post(ProcessCommand.SEND, 0);
        sender.fill(4 * PAGE, 3 * PAGE, 2);
        sender.sendContext(1, receiver.name, 2, 4 * PAGE, 3 * PAGE);
        sender.post(ProcessCommand.SEND, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, sender.sendDoorbell(0), "the first message is staged");
        assertEquals(Doorbell.FREE, sender.sendDoorbell(1), "the second waits for staging room");
        final long packetsBefore = counter(0, NicCounters.DATA_PACKETS_SENT);

        // The sender frees its buffer; the driver gives the three pages to the new owner, who fills them.
        for (int page = 4; page < 7; page++)
        {
            cluster.images.get(0).sdram().putIntRelease(
                (int)cluster.images.get(0).sdramLayout().protectionEntryOffset(sender.areaAddress(page * PAGE)),
                ProtectionTableLayout.entry(ProcessTableLayout.nicPid(newOwner.index), 1));
        }
        for (int i = 0; i < 3 * PAGE; i++)
        {
            cluster.images.get(0).hostMemory().putByte((int)sender.areaAddress(4 * PAGE + i), (byte)0x5A);
        }

        // Staging frees up: the second request is granted, and its first DMA read is refused.
        receiver.receiveContext(0, GROUP, 0, 1, 0, 3 * PAGE);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        cluster.clock.advance(PermissionRequests.PERMISSION_RETRY_MS);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(0));
        assertEquals(Doorbell.PROTECTION, sender.sendDoorbell(1));
        assertEquals(packetsBefore, counter(0, NicCounters.DATA_PACKETS_SENT), "no packet of the new owner's pages");
        assertEquals(1, counter(0, NicCounters.SENDS_ABORTED));
        assertEquals(1, counter(3, NicCounters.TRANSFERS_ABORTED), "the staged transfer was dropped");
        assertEquals(0, receivingNic.stagingBytesInUse());
        assertEquals(0, receivingNic.activeTransfers());

        // Nothing of it arrives later either.
        receiver.fill(8 * PAGE, 3 * PAGE, 9);
        receiver.receiveContext(1, GROUP, 0, 2, 8 * PAGE, 3 * PAGE);
        receiver.post(ProcessCommand.RECEIVE, 1);
        cluster.settle();
        assertEquals(Doorbell.FREE, receiver.receiveDoorbell(1), "the receive is still waiting");
        assertDelivered(receiver, 8 * PAGE, 3 * PAGE, 9, "the receive buffer");
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
    }

    /**
     * A page of a granted Send is unlocked between two of its packets: the packets before it arrive, the
     * send ends Protection, and the receive ends SendAborted with that prefix and nothing else.
     */
    @Test
    void aSendWhosePageIsUnlockedPartWayEndsProtectionAndItsReceiveSendAbortedWithThePrefix()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        cluster.onePacketPerCycle();
        receiver.fill(0, 3 * PAGE, 77);
        receiver.receiveContext(0, GROUP, 0, 1, 0, 3 * PAGE);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();

        sender.fill(0, 3 * PAGE, 5);
        sender.sendContext(0, receiver.name, 1, 0, 3 * PAGE);
        sender.post(ProcessCommand.SEND, 0);
        for (int steps = 0; counter(0, NicCounters.DATA_PACKETS_SENT) < 1; steps++)
        {
            assertTrue(steps < 100, "the first packet was never sent");
            cluster.step();
        }
        sender.lockArea(0);
        cluster.settle();

        assertEquals(Doorbell.PROTECTION, sender.sendDoorbell(0));
        assertEquals(Doorbell.SEND_ABORTED, receiver.receiveDoorbell(0));
        assertEquals(1, counter(0, NicCounters.DATA_PACKETS_SENT));
        assertDelivered(receiver, 0, PAGE, 5, "the first packet");
        for (int i = PAGE; i < 3 * PAGE; i++)
        {
            assertEquals(SteppedProcess.pattern(77, i), receiver.areaByte(i), "byte " + i + " after the prefix");
        }
        assertEquals(0, cluster.nics.get(3).activeTransfers());
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
    }

    /**
     * Issue 17, item 3: a process that never posts its receives is sent Send_Shorts until its staging
     * quota is full. Further messages to it wait (their requests are deferred and asked again), while
     * another process on the same node keeps receiving, staged and direct; once the flooded process
     * posts a receive, the waiting messages move again. Nothing is lost.
     */
    @Test
    void aProcessThatNeverReceivesHoldsNoMoreThanItsStagingQuotaAndTheNodeKeepsReceiving()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 3, 1, 3);
        final SteppedProcess flooder = p[0];
        final SteppedProcess victim = p[1];
        final SteppedProcess bystander = p[2];
        final SteppedProcess neighbour = p[3];
        final int quota = ClusterParameters.STAGED_MESSAGES_PER_PROCESS;
        final int contexts = cluster.params.contextsPerProcess();
        final NicControlProgram node3 = cluster.nics.get(3);

        for (int m = 0; m < quota + contexts; m++)
        {
            final int context = m % contexts;
            if (m >= contexts)
            {
                if (m < quota + contexts)
                {
                    assertEquals(m - contexts < quota ? Doorbell.DONE : Doorbell.FREE, flooder.sendDoorbell(context));
                }
                flooder.freeDoorbell(context);
            }
            flooder.shortContext(context, victim.name, m, new byte[] {(byte)m});
            flooder.post(ProcessCommand.SEND_SHORT, context);
            cluster.settle();
        }
        assertEquals(quota, node3.slot(victim.index).stagedCount(), "the victim's quota of staged messages");
        assertTrue(counter(3, NicCounters.REQUESTS_DEFERRED_RECEIVER_QUOTA) >= contexts, "the rest are deferred");
        for (int c = 0; c < contexts; c++)
        {
            assertEquals(Doorbell.FREE, flooder.sendDoorbell(c), "context " + c + " waits");
        }

        // Another process of the node still gets messages, staged and then direct.
        bystander.fill(0, 2 * PAGE, 11);
        bystander.sendContext(0, neighbour.name, 5, 0, 2 * PAGE);
        bystander.post(ProcessCommand.SEND, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, bystander.sendDoorbell(0), "staged for the neighbour");
        neighbour.receiveContext(0, GROUP, 2, 5, 0, 2 * PAGE);
        neighbour.post(ProcessCommand.RECEIVE, 0);
        neighbour.receiveContext(1, GROUP, 2, 6, 4 * PAGE, 10);
        neighbour.post(ProcessCommand.RECEIVE, 1);
        cluster.settle();
        bystander.fill(8 * PAGE, 10, 12);
        bystander.sendContext(1, neighbour.name, 6, 8 * PAGE, 10);
        bystander.post(ProcessCommand.SEND, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, neighbour.receiveDoorbell(0));
        assertEquals(Doorbell.DONE, neighbour.receiveDoorbell(1));
        assertDelivered(neighbour, 0, 2 * PAGE, 11, "staged message to the neighbour");

        // The victim receives the oldest message; a deferred one takes its place when asked again.
        victim.receiveContext(0, GROUP, 0, 0, 0, 8);
        victim.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, victim.receiveDoorbell(0));
        assertEquals(0L, victim.receiveCompletion(0)[2], "tag of the first message");
        cluster.clock.advance(PermissionRequests.PERMISSION_RETRY_MS);
        cluster.settle();
        assertEquals(quota, node3.slot(victim.index).stagedCount());
        int done = 0;
        for (int c = 0; c < contexts; c++)
        {
            done += Doorbell.DONE == flooder.sendDoorbell(c) ? 1 : 0;
        }
        assertEquals(1, done, "one deferred message was staged in the place that freed");
        assertEquals(0, counter(3, NicCounters.REQUESTS_DEFERRED_TRANSFER_TABLE));
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
    }

    @Test
    void duplicateRequestsAndRepliesChangeNothing()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 3);
        final NicControlProgram receivingNic = cluster.nics.get(3);
        final long operation = 12345L << SendScheduler.OPERATION_SLOT_BITS;

        // The same request twice: one transfer, one staging allocation, the reply sent again.
        injectRequest(0, 3, p[1], p[0], operation, 99, 100);
        injectRequest(0, 3, p[1], p[0], operation, 99, 100);
        cluster.settle();
        assertEquals(1, receivingNic.activeTransfers());
        assertEquals(PAGE, receivingNic.stagingBytesInUse());
        assertEquals(1, counter(3, NicCounters.MESSAGES_STAGED));
        assertEquals(1, counter(3, NicCounters.PERMISSION_DUPLICATES));
        // Both replies reached node 0, where no such operation exists: both discarded.
        assertEquals(2, counter(0, NicCounters.PERMISSION_DUPLICATES));

        // A real transfer, then its request and its reply again after it completed.
        p[1].receiveContext(0, GROUP, 0, 4, 0, 50);
        p[1].post(ProcessCommand.RECEIVE, 0);
        p[0].fill(0, 50, 3);
        p[0].sendContext(0, p[1].name, 4, 0, 50);
        p[0].post(ProcessCommand.SEND, 0);
        cluster.step();
        final long real = cluster.nics.get(0).slot(0).sends[0].operationId;
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertEquals(Doorbell.DONE, p[1].receiveDoorbell(0));
        final long grantedBefore = counter(3, NicCounters.MESSAGES_STAGED);
        injectRequest(0, 3, p[1], p[0], real, 4, 50);
        injectReply(3, 0, p[1], p[0], real, 0);
        cluster.settle();
        assertEquals(grantedBefore, counter(3, NicCounters.MESSAGES_STAGED));
        assertEquals(1, receivingNic.activeTransfers(), "only the injected staged one");
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
    }

    @Test
    void aDeletedPeerEndsTheOperationsWaitingOnIt()
    {
        final SteppedProcess[] p = start(tightStaging(), 0, 3);
        p[0].sendContext(0, p[1].name, 1, 0, 3 * PAGE);
        p[0].post(ProcessCommand.SEND, 0);
        p[0].sendContext(1, p[1].name, 1, 0, 5);
        p[0].post(ProcessCommand.SEND, 1);
        p[0].receiveContext(0, GROUP, 1, ContextLayout.ANY, 0, 5);
        p[0].post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertEquals(Doorbell.FREE, p[0].sendDoorbell(1), "waiting for staging space");

        p[1].delete();
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, p[0].sendDoorbell(1));
        assertEquals(Doorbell.PEER_GONE, p[0].receiveDoorbell(0));
        assertEquals(0, cluster.nics.get(3).stagingBytesInUse(), "its staged message is freed");
        assertEquals(0, cluster.nics.get(3).activeTransfers());

        // Nobody of that name any more: a new send or receive naming it ends at once.
        p[0].freeDoorbells();
        p[0].sendContext(2, p[1].name, 1, 0, 5);
        p[0].post(ProcessCommand.SEND, 2);
        p[0].receiveContext(1, GROUP, 1, 1, 0, 5);
        p[0].post(ProcessCommand.RECEIVE, 1);
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, p[0].sendDoorbell(2));
        assertEquals(Doorbell.PEER_GONE, p[0].receiveDoorbell(1));
    }

    @Test
    void corruptDataPacketsAreCountedAndDropped()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 3);
        final UnsafeBuffer packet = new UnsafeBuffer(new byte[PacketHeader.LENGTH + 8]);
        new PacketHeader().wrap(packet, 0).destination(NicCoordinates.ofIndex(3, 2).packed()).receiverPid(2)
            .source(NicCoordinates.ofIndex(0, 2).packed()).senderPid(1).contextTag(77).packetLength(8).counter(0);
        new RxFifo(cluster.images.get(3).rxRing()).write(WireMessageType.DATA_PACKET, packet, 0,
            packet.capacity());
        cluster.settle();
        assertEquals(1, counter(3, NicCounters.PACKETS_DROPPED));
        assertTrue(p[1].receiveCompletion(0)[3] == 0);
    }

    private void injectRequest(final int from, final int to, final SteppedProcess receiver, final SteppedProcess sender,
        final long operation, final int tag, final int length)
    {
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[SystemMessage.PERMISSION_REQUEST_LENGTH]);
        new PermissionRequestFlyweight().wrap(payload, 0)
            .receiverPid(receiver.index + 1)
            .senderPid(sender.index + 1)
            .tag(tag)
            .messageLength(length)
            .firstPacketLength(length)
            .packets(1)
            .operationId(operation)
            .senderAi(sender.name.ai())
            .senderPi(sender.name.pi())
            .receiverIncarnation(cluster.nics.get(to).slot(receiver.index).incarnation);
        cluster.injectSystemMessage(from, to, SystemMessage.PERMISSION_REQUEST, payload, payload.capacity());
    }

    private void injectReply(final int from, final int to, final SteppedProcess receiver, final SteppedProcess sender,
        final long operation, final int handle)
    {
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[SystemMessage.PERMISSION_REPLY_LENGTH]);
        new PermissionReplyFlyweight().wrap(payload, 0)
            .receiverPid(receiver.index + 1)
            .senderPid(sender.index + 1)
            .operationId(operation)
            .status(Doorbell.DONE)
            .handle(handle);
        cluster.injectSystemMessage(from, to, SystemMessage.PERMISSION_REPLY, payload, payload.capacity());
    }
}
