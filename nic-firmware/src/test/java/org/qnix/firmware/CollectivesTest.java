package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.stream.Collectors;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.qnix.abi.BarrierFlyweight;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NewGroupFlyweight;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ShortFlow;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.SystemMessage;

/**
 * Join_Group, Barrier, Broadcast and Multicast through real node images on a 2x2 torus, stepped by
 * hand (thesis 3.5.1, 3.5.2; DESIGN.md 8, items 8, 9 and 12).
 */
class CollectivesTest extends SteppedClusterTest
{
    private static final int APP = 7;
    private static final int PAGE = 1024;

    /** Registers one process per entry of {@code nodes}, all in application group {@link #APP}. */
    /** How short messages travel in this class's clusters; {@code CollectivesPermissionFlowTest} runs them all the thesis' way. */
    ShortFlow shortFlow()
    {
        return ShortFlow.EAGER;
    }

    private SteppedProcess[] start(final ClusterParameters params, final int... nodes)
    {
        cluster = new SteppedCluster(base, params.toBuilder().shortFlow(shortFlow()).build());
        return cluster.registerGroup(APP, nodes);
    }

    private SteppedProcess[] start(final int... nodes)
    {
        return start(SteppedCluster.smallParameters(2, 2).build(), nodes);
    }

    private GroupOperations groupsOf(final int node)
    {
        return cluster.nics.get(node).groupOperations();
    }

    private void injectBarrier(final int from, final int to, final SteppedProcess member, final int group,
        final int size, final int sequence)
    {
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[SystemMessage.BARRIER_LENGTH]);
        new BarrierFlyweight().wrap(payload, 0).group(group).groupSize(size).sequence(sequence)
            .memberAi(member.name.ai()).memberPi(member.name.pi()).memberNicPid(member.index + 1);
        cluster.injectSystemMessage(from, to, SystemMessage.BARRIER, payload, SystemMessage.BARRIER_LENGTH);
    }

    // ---------------------------------------------------------------------------------------------
    // Barrier
    // ---------------------------------------------------------------------------------------------

    @Test
    void barrierMessagesArrivingBeforeTheLocalCommandAreCountedByTheirSequenceNumber()
    {
        // p0 alone on node 0; p1 and p2 on node 3.
        final SteppedProcess[] p = start(0, 3, 3);
        final NicControlProgram nic0 = cluster.nics.get(0);
        final NicControlProgram nic3 = cluster.nics.get(3);

        // p1 enters barrier 0; only node 3 runs, so its Barrier message waits in node 0's FIFO.
        p[1].post(ProcessCommand.BARRIER, 0, APP, 3);
        nic3.doWork();
        assertNull(groupsOf(0).barrierRounds(APP), "node 0 has not read its FIFO yet");
        nic0.doWork();
        assertEquals(1, groupsOf(0).barrierRounds(APP).arrivals(0), "counted before any local Barrier command");

        // The same message again (a duplicate) counts once; the next barrier's message counts apart.
        injectBarrier(3, 0, p[1], APP, 3, 0);
        injectBarrier(3, 0, p[1], APP, 3, 1);
        p[2].post(ProcessCommand.BARRIER, 0, APP, 3);
        cluster.settle();
        final BarrierRounds rounds0 = groupsOf(0).barrierRounds(APP);
        assertEquals(2, rounds0.arrivals(0), "p1 once, p2 once");
        assertEquals(1, rounds0.arrivals(1), "p1's early arrival in barrier 1 is not counted for barrier 0");
        assertEquals(2, groupsOf(3).barrierRounds(APP).arrivals(0));
        assertEquals(Doorbell.FREE, p[1].sendDoorbell(0), "not everybody has entered");
        assertEquals(Doorbell.FREE, p[2].sendDoorbell(0));

        // The last member enters: every NIC completes barrier 0 by itself.
        p[0].post(ProcessCommand.BARRIER, 0, APP, 3);
        cluster.settle();
        for (final SteppedProcess process : p)
        {
            assertEquals(Doorbell.DONE, process.sendDoorbell(0), process.name + " leaves barrier 0");
        }
        assertEquals(0, rounds0.arrivals(0), "barrier 0 is forgotten");
        assertEquals(1, rounds0.arrivals(1));
        assertEquals(1, cluster.counter(0, NicCounters.BARRIERS_COMPLETED));
        assertEquals(2, cluster.counter(3, NicCounters.BARRIERS_COMPLETED));

        // Barrier 1, entered in the other order, on other contexts.
        for (final SteppedProcess process : p)
        {
            process.freeDoorbells();
        }
        p[0].post(ProcessCommand.BARRIER, 1, APP, 3);
        cluster.settle();
        assertEquals(2, rounds0.arrivals(1), "p0 joins p1's early arrival");
        assertEquals(Doorbell.FREE, p[0].sendDoorbell(1));
        p[2].post(ProcessCommand.BARRIER, 1, APP, 3);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(1), "the injected arrival of p1 counted for barrier 1 on node 0");
        assertEquals(Doorbell.FREE, p[2].sendDoorbell(1), "node 3 has not seen p1 enter barrier 1");
        p[1].post(ProcessCommand.BARRIER, 1, APP, 3);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[1].sendDoorbell(1));
        assertEquals(Doorbell.DONE, p[2].sendDoorbell(1));
        assertEquals(0, cluster.counter(0, NicCounters.PACKETS_DROPPED));
    }

    @Test
    void barrierMessagesFromNonMembersOrWithTheWrongSizeAreRefused()
    {
        final SteppedProcess[] p = start(0, 3);
        final SteppedProcess stranger = new SteppedProcess(cluster, 3, 5, new ProcessName(99, 0));
        injectBarrier(3, 0, stranger, APP, 2, 0);
        injectBarrier(1, 0, p[1], APP, 2, 0);
        injectBarrier(3, 0, p[1], APP, 5, 0);
        cluster.settle();
        assertEquals(3, cluster.counter(0, NicCounters.SYSTEM_MESSAGES_REJECTED));
        assertEquals(0, groupsOf(0).barrierRounds(APP) == null ? 0 : groupsOf(0).barrierRounds(APP).arrivals(0));

        // Wrong size or a group the process is not in: BadCommand at once.
        p[0].post(ProcessCommand.BARRIER, 0, APP, 3);
        p[0].post(ProcessCommand.BARRIER, 1, 12345, 2);
        cluster.settle();
        assertEquals(Doorbell.BAD_COMMAND, p[0].sendDoorbell(0));
        assertEquals(Doorbell.BAD_COMMAND, p[0].sendDoorbell(1));
    }

    @Test
    void aMemberLeavingDuringABarrierEndsItWithPeerGoneAndTheNicsForgetIt()
    {
        final SteppedProcess[] p = start(0, 3, 3);
        p[0].post(ProcessCommand.BARRIER, 0, APP, 3);
        p[1].post(ProcessCommand.BARRIER, 0, APP, 3);
        cluster.settle();
        assertEquals(Doorbell.FREE, p[0].sendDoorbell(0));

        p[2].delete();
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, p[0].sendDoorbell(0));
        assertEquals(Doorbell.PEER_GONE, p[1].sendDoorbell(0));
        for (final NicControlProgram nic : cluster.nics)
        {
            final GroupTable.Group group = nic.groupTable().lookup(APP);
            assertEquals(2, group.members.size(), "on " + nic.node());
            assertTrue(group.broken);
            assertEquals(-1, group.indexOf(p[2].name));
            assertNull(nic.nameTable().lookup(p[2].name.ai(), p[2].name.pi()));
            assertNull(nic.groupOperations().barrierRounds(APP), "its counts are forgotten on " + nic.node());
        }

        // The group stays broken: a new barrier ends at once.
        p[0].freeDoorbells();
        p[0].post(ProcessCommand.BARRIER, 0, APP, 3);
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, p[0].sendDoorbell(0));
    }

    // ---------------------------------------------------------------------------------------------
    // Join_Group
    // ---------------------------------------------------------------------------------------------

    @Test
    void joinGroupCompletesWhenEveryNicKnowsTheWholeGroup()
    {
        final SteppedProcess[] p = start(0, 3, 1);
        final int group = 100;
        p[0].post(ProcessCommand.JOIN_GROUP, 0, group, 2);
        cluster.settle();
        assertEquals(Doorbell.FREE, p[0].sendDoorbell(0), "one of two members");
        for (final NicControlProgram nic : cluster.nics)
        {
            assertEquals(1, nic.groupTable().lookup(group).members.size(), "New_Group reached " + nic.node());
        }

        p[2].post(ProcessCommand.JOIN_GROUP, 0, group, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertEquals(Doorbell.DONE, p[2].sendDoorbell(0));
        assertEquals(2, cluster.counter(0, NicCounters.GROUP_JOINS_COMPLETED) +
            cluster.counter(1, NicCounters.GROUP_JOINS_COMPLETED));
        for (final NicControlProgram nic : cluster.nics)
        {
            assertTrue(nic.groupTable().lookup(group).isComplete(), "complete on " + nic.node());
        }

        // A member joining again is done at once; a third process, or another size, is refused.
        p[0].post(ProcessCommand.JOIN_GROUP, 1, group, 2);
        p[1].post(ProcessCommand.JOIN_GROUP, 0, group, 2);
        p[1].post(ProcessCommand.JOIN_GROUP, 1, group + 1, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(1));
        assertEquals(Doorbell.BAD_COMMAND, p[1].sendDoorbell(0), "the group is complete without it");
        assertEquals(Doorbell.BAD_COMMAND, p[1].sendDoorbell(1), "size 0");
        assertEquals(2, cluster.nics.get(3).groupTable().lookup(group).members.size());

        // The new group works for a barrier, and p0 is in two groups at once.
        p[0].freeDoorbells();
        p[2].freeDoorbells();
        p[0].post(ProcessCommand.BARRIER, 0, group, 2);
        p[0].post(ProcessCommand.BARRIER, 1, APP, 3);
        p[2].post(ProcessCommand.BARRIER, 0, group, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertEquals(Doorbell.DONE, p[2].sendDoorbell(0));
        assertEquals(Doorbell.FREE, p[0].sendDoorbell(1), "the application group still waits for p1 and p2");
    }

    /**
     * Issue 17, item 4: an application's group (named by its AI) is its own. A process of another
     * application cannot join it once the application is registered, and one that joined it before the
     * application's processes registered is put out of it on every NIC (its join ends PeerGone) while
     * they register. A process joins at most {@link ClusterParameters#MAX_JOINED_GROUPS_PER_PROCESS}
     * groups besides its application's, so it cannot fill the Group Table.
     */
    @Test
    void anApplicationsGroupIsItsOwnAndAProcessJoinsALimitedNumberOfGroups()
    {
        start(SteppedCluster.smallParameters(2, 2).groupTableEntries(16).build(), 0, 3);
        final SteppedProcess squatter = register(1, 2, new ProcessName(50, 0), 1);
        squatter.post(ProcessCommand.JOIN_GROUP, 0, APP, 3);
        cluster.settle();
        assertEquals(Doorbell.BAD_COMMAND, squatter.sendDoorbell(0), "the group of a registered application");

        // Before application 60 registers, the squatter joins its group, with the size it will have.
        squatter.post(ProcessCommand.JOIN_GROUP, 1, 60, 2);
        cluster.settle();
        assertEquals(Doorbell.FREE, squatter.sendDoorbell(1), "waiting for a second member");
        final SteppedProcess first = new SteppedProcess(cluster, 2, 3, new ProcessName(60, 0));
        final SteppedProcess second = new SteppedProcess(cluster, 0, 4, new ProcessName(60, 1));
        first.lockArea(1);
        second.lockArea(1);
        first.register(60, 2);
        second.register(60, 2);
        cluster.settle();
        assertEquals(ProcessTableLayout.STATE_REGISTERED, cluster.processState(2, 3));
        assertEquals(ProcessTableLayout.STATE_REGISTERED, cluster.processState(0, 4));
        assertEquals(Doorbell.PEER_GONE, squatter.sendDoorbell(1), "put out of application 60's group");
        for (final NicControlProgram nic : cluster.nics)
        {
            assertEquals(Set.of(first.name, second.name),
                nic.groupTable().lookup(60).members.stream().map(GroupTable.Member::name).collect(Collectors.toSet()),
                nic.node().toString());
        }
        squatter.freeDoorbells();
        squatter.post(ProcessCommand.JOIN_GROUP, 0, 60, 2);
        cluster.settle();
        assertEquals(Doorbell.BAD_COMMAND, squatter.sendDoorbell(0), "and cannot join it again");

        // Groups joined at run time: up to the limit, then NoResources; the table keeps its room.
        final int limit = ClusterParameters.MAX_JOINED_GROUPS_PER_PROCESS;
        for (int g = 0; g <= limit; g++)
        {
            squatter.freeDoorbells();
            squatter.post(ProcessCommand.JOIN_GROUP, 0, 200 + g, 1);
            cluster.settle();
            assertEquals(g < limit ? Doorbell.DONE : Doorbell.NO_RESOURCES, squatter.sendDoorbell(0), "group " + (200 + g));
        }
        assertEquals(3 + limit, cluster.nics.get(3).groupTable().size(), "groups 7, 50, 60 and the joined ones");
    }

    private SteppedProcess register(final int node, final int index, final ProcessName name, final int size)
    {
        final SteppedProcess process = new SteppedProcess(cluster, node, index, name);
        process.lockArea(1);
        process.register(name.ai(), size);
        cluster.settle();
        assertEquals(ProcessTableLayout.STATE_REGISTERED, cluster.processState(node, index), name.toString());
        return process;
    }

    @Test
    void aNicThatKnowsTheWholeGroupAcknowledgesARepeatedNewGroupAgain()
    {
        // A retried Join_Group (after a timed-out awaitJoinGroup) needs every NIC's acknowledgement
        // afresh, also from NICs that acknowledged the first one.
        final SteppedProcess[] p = start(0, 3, 1);
        final int group = 300;
        p[0].post(ProcessCommand.JOIN_GROUP, 0, group, 2);
        p[2].post(ProcessCommand.JOIN_GROUP, 0, group, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        final long sent = cluster.counter(3, NicCounters.SYSTEM_MESSAGES_SENT);

        final UnsafeBuffer payload = new UnsafeBuffer(new byte[SystemMessage.NEW_GROUP_LENGTH]);
        new NewGroupFlyweight().wrap(payload, 0).group(group).groupSize(2).memberAi(p[0].name.ai())
            .memberPi(p[0].name.pi()).memberNicPid(p[0].index + 1)
            .memberIncarnation(cluster.nics.get(0).slot(p[0].index).incarnation);
        cluster.injectSystemMessage(0, 3, SystemMessage.NEW_GROUP, payload, SystemMessage.NEW_GROUP_LENGTH);
        cluster.nics.get(3).doWork();
        assertEquals(sent + 1, cluster.counter(3, NicCounters.SYSTEM_MESSAGES_SENT), "New_Group_Ack again");
        assertEquals(2, cluster.nics.get(3).groupTable().lookup(group).members.size(), "nothing else changes");
        cluster.settle();
        assertEquals(0, cluster.counter(0, NicCounters.SYSTEM_MESSAGES_REJECTED));
    }

    @Test
    void aJoinWaitingForAMemberThatLeavesEndsWithPeerGone()
    {
        final SteppedProcess[] p = start(0, 3, 1);
        p[0].post(ProcessCommand.JOIN_GROUP, 0, 200, 3);
        p[1].post(ProcessCommand.JOIN_GROUP, 0, 200, 3);
        cluster.settle();
        p[1].delete();
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, p[0].sendDoorbell(0));
        p[2].post(ProcessCommand.JOIN_GROUP, 0, 200, 3);
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, p[2].sendDoorbell(0), "a broken group takes nobody");
    }

    // ---------------------------------------------------------------------------------------------
    // Broadcast and Multicast
    // ---------------------------------------------------------------------------------------------

    private static void assertDelivered(final SteppedProcess to, final int offset, final int length, final int seed)
    {
        for (int i = 0; i < length; i++)
        {
            if (SteppedProcess.pattern(seed, i) != to.areaByte(offset + i))
            {
                throw new AssertionError(to.name + ": byte " + i + " of " + length + " differs");
            }
        }
    }

    @Test
    void aBroadcastReadsTheBufferOnceAndCountsDownItsCopyAsEachDestinationCompletes()
    {
        // The root p0 and p1 on node 0, p2 on node 3, p3 on node 1.
        final SteppedProcess[] p = start(0, 0, 3, 1);
        final int length = 2 * PAGE + 300;
        final NicControlProgram rootNic = cluster.nics.get(0);
        p[0].fill(100, length, 5);
        p[1].receiveContext(0, APP, 0, 9, 0, length);
        p[1].post(ProcessCommand.RECEIVE, 0);
        p[2].receiveContext(0, APP, 0, 9, 0, length);
        p[2].post(ProcessCommand.RECEIVE, 0);
        cluster.settle();

        p[0].sendContext(0, p[0].name, 9, 100, length);
        p[0].post(ProcessCommand.BROADCAST, 0, APP, 0);
        cluster.nics.get(0).doWork();
        final CastOperation cast = rootNic.slot(0).casts[0];
        assertTrue(cast.active);
        assertEquals(3, cast.destinations, "every member but the root");
        assertEquals(3, cast.remaining, "the counter of the local copy");
        assertEquals(1, cluster.counter(0, NicCounters.CAST_COPIES));
        assertEquals(length, cluster.counter(0, NicCounters.HOST_BYTES_READ), "one DMA read of the buffer");
        assertEquals(3L * PAGE, rootNic.stagingBytesInUse(), "the copy in managed memory");

        // p3 has posted no receive: its message is staged on node 1, the other two are delivered.
        cluster.settle();
        assertEquals(Doorbell.DONE, p[1].receiveDoorbell(0));
        assertEquals(Doorbell.DONE, p[2].receiveDoorbell(0));
        assertDelivered(p[1], 0, length, 5);
        assertDelivered(p[2], 0, length, 5);
        assertEquals(0, cast.remaining, "staged counts as sent");
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertFalse(cast.active);
        assertEquals(0, rootNic.stagingBytesInUse(), "the copy is freed with the last destination");
        p[3].receiveContext(0, APP, 0, 9, 0, length);
        p[3].post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[3].receiveDoorbell(0));
        assertDelivered(p[3], 0, length, 5);
        final long[] completion = p[3].receiveCompletion(0);
        assertEquals(APP, completion[0]);
        assertEquals(0, completion[1], "the root is the source");
        assertEquals(9, completion[2]);
        assertEquals(length, completion[3]);

        assertEquals(length, cluster.counter(0, NicCounters.HOST_BYTES_READ), "still one read for three destinations");
        assertEquals(3L * length, cluster.counter(0, NicCounters.DATA_BYTES_SENT));
        assertEquals(1, cluster.counter(0, NicCounters.CASTS_COMPLETED));
    }

    @Test
    void broadcastShortAndMulticastsReachExactlyTheirDestinations()
    {
        final SteppedProcess[] p = start(0, 0, 3, 1);
        final byte[] data = new byte[40];
        for (int i = 0; i < data.length; i++)
        {
            data[i] = (byte)(i * 3 + 1);
        }
        for (int r = 1; r < 4; r++)
        {
            p[r].receiveContext(0, APP, 0, 1, 0, 64);
            p[r].post(ProcessCommand.RECEIVE, 0);
        }
        p[0].shortContext(0, p[0].name, 1, data);
        p[0].post(ProcessCommand.BROADCAST_SHORT, 0, APP, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        for (int r = 1; r < 4; r++)
        {
            assertEquals(Doorbell.DONE, p[r].receiveDoorbell(0));
            for (int i = 0; i < data.length; i++)
            {
                assertEquals(data[i], p[r].areaByte(i));
            }
        }
        assertEquals(0, cluster.counter(0, NicCounters.CAST_COPIES), "the short data is in the Context Region");
        assertEquals(0, cluster.counter(0, NicCounters.HOST_BYTES_READ));

        // Multicast to p3 and p1 only: their names follow the command in the Command Queue.
        for (final SteppedProcess process : p)
        {
            process.freeDoorbells();
        }
        final int length = PAGE + 7;
        p[0].fill(0, length, 8);
        for (int r = 1; r < 4; r++)
        {
            p[r].receiveContext(1, APP, 0, 2, 4 * PAGE, length);
            p[r].post(ProcessCommand.RECEIVE, 1);
        }
        p[0].sendContext(1, p[0].name, 2, 0, length);
        p[0].postMulticast(ProcessCommand.MULTICAST, 1, p[3].name, p[1].name);
        // A Send posted after it proves the name entries were consumed, not read as commands.
        p[0].sendContext(2, p[2].name, 2, 0, length);
        p[0].post(ProcessCommand.SEND, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(1));
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(2));
        for (int r = 1; r < 4; r++)
        {
            assertEquals(Doorbell.DONE, p[r].receiveDoorbell(1));
            assertDelivered(p[r], 4 * PAGE, length, 8);
        }
        assertEquals(1, cluster.counter(0, NicCounters.CAST_COPIES));
        assertEquals(2L * length, cluster.counter(0, NicCounters.HOST_BYTES_READ), "the multicast once, the send once");
        assertEquals(0, cluster.counter(0, NicCounters.COMMANDS_REJECTED));

        // Multicast_Short naming nobody registered: Peer Gone, nothing sent.
        final long sent = cluster.counter(0, NicCounters.DATA_PACKETS_SENT);
        p[0].shortContext(3, p[0].name, 3, data);
        p[0].postMulticast(ProcessCommand.MULTICAST_SHORT, 3, p[1].name, new ProcessName(55, 5));
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, p[0].sendDoorbell(3));
        assertEquals(sent, cluster.counter(0, NicCounters.DATA_PACKETS_SENT));
    }

    @Test
    void withoutRoomForTheCopyEachDestinationReadsTheSendersPagesInsteadOfWaiting()
    {
        final SteppedProcess[] p = start(SteppedCluster.tightStagingParameters().build(), 0, 3, 0);
        assertEquals(3 * PAGE, new NicSdramLayout(cluster.params).managedMemoryLength());
        // p2's unexpected message fills node 0's managed memory.
        p[1].fill(0, 3 * PAGE, 1);
        p[1].sendContext(0, p[2].name, 1, 0, 3 * PAGE);
        p[1].post(ProcessCommand.SEND, 0);
        cluster.settle();
        assertEquals(3L * PAGE, cluster.nics.get(0).stagingBytesInUse());

        // Waiting for the memory would wait for ever: p2's part of the broadcast needs it too.
        p[0].fill(0, PAGE, 2);
        p[0].sendContext(0, p[0].name, 2, 0, PAGE);
        p[0].post(ProcessCommand.BROADCAST, 0, APP, 0);
        cluster.settle();
        final CastOperation cast = cluster.nics.get(0).slot(0).casts[0];
        assertTrue(cast.fromHost);
        assertFalse(cast.waitingToStart);

        p[2].receiveContext(0, APP, 1, 1, 0, 3 * PAGE);
        p[2].post(ProcessCommand.RECEIVE, 0);
        p[1].receiveContext(0, APP, 0, 2, 0, PAGE);
        p[1].post(ProcessCommand.RECEIVE, 0);
        p[2].receiveContext(1, APP, 0, 2, 4 * PAGE, PAGE);
        p[2].post(ProcessCommand.RECEIVE, 1);
        cluster.clock.advance(PermissionRequests.PERMISSION_RETRY_MS);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertEquals(Doorbell.DONE, p[1].receiveDoorbell(0));
        assertEquals(Doorbell.DONE, p[2].receiveDoorbell(1));
        assertDelivered(p[1], 0, PAGE, 2);
        assertDelivered(p[2], 4 * PAGE, PAGE, 2);
        assertEquals(0, cluster.counter(0, NicCounters.CAST_COPIES));
        assertEquals(2L * PAGE, cluster.counter(0, NicCounters.HOST_BYTES_READ), "one read per destination");
        assertEquals(0, cluster.nics.get(0).stagingBytesInUse());
    }

    @Test
    void aProcessMayHaveFourBarriersPostedOnAGroupAndNoMore()
    {
        final SteppedProcess[] p = start(0, 3);
        for (int c = 0; c < 4; c++)
        {
            p[0].post(ProcessCommand.BARRIER, c, APP, 2);
        }
        cluster.settle();
        for (int c = 0; c < 4; c++)
        {
            assertEquals(Doorbell.FREE, p[0].sendDoorbell(c), "barrier " + c + " waits for p1");
        }
        p[0].post(ProcessCommand.BARRIER, 4 % cluster.params.contextsPerProcess(), APP, 2);
        cluster.settle();
        assertEquals(4, cluster.params.contextsPerProcess(), "the fifth needs a context: reuse one that is busy");
        assertEquals(1, cluster.counter(0, NicCounters.COMMANDS_REJECTED), "context 0 is still busy");

        // With more contexts, the fifth is refused NoResources and sends nothing.
        cluster.close();
        final SteppedProcess[] q = start(SteppedCluster.smallParameters(2, 2).contexts(8).commandQueueEntries(16).build(),
            0, 3);
        for (int c = 0; c < 5; c++)
        {
            q[0].post(ProcessCommand.BARRIER, c, APP, 2);
        }
        cluster.settle();
        assertEquals(Doorbell.NO_RESOURCES, q[0].sendDoorbell(4));
        assertEquals(4, groupsOf(3).barrierRounds(APP).roundsInProgress(), "node 3 counted four barriers of q0");
        for (int c = 0; c < 4; c++)
        {
            q[1].post(ProcessCommand.BARRIER, c, APP, 2);
        }
        cluster.settle();
        for (int c = 0; c < 4; c++)
        {
            assertEquals(Doorbell.DONE, q[0].sendDoorbell(c));
            assertEquals(Doorbell.DONE, q[1].sendDoorbell(c));
        }
    }

    @Test
    void aDestinationLeavingDuringABroadcastEndsItWithPeerGoneAfterTheOthers()
    {
        final SteppedProcess[] p = start(0, 3, 1);
        p[0].fill(0, 100, 3);
        p[1].receiveContext(0, APP, 0, 4, 0, 100);
        p[1].post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        // p2 never receives and its NIC has no room issue, so make it leave before the data goes out.
        p[0].sendContext(0, p[0].name, 4, 0, 100);
        p[0].post(ProcessCommand.BROADCAST, 0, APP, 0);
        p[2].delete();
        cluster.settle();
        assertEquals(Doorbell.DONE, p[1].receiveDoorbell(0));
        assertDelivered(p[1], 0, 100, 3);
        assertEquals(Doorbell.PEER_GONE, p[0].sendDoorbell(0));
        assertEquals(0, cluster.nics.get(0).stagingBytesInUse());
        assertNotNull(cluster.nics.get(0).groupTable().lookup(APP));
    }
}
