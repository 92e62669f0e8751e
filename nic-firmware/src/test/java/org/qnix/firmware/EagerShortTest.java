package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;


import org.junit.jupiter.api.Test;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ShortFlow;

/**
 * Eager short messages (thesis 3.7, "Different Short Message Flow Control"), stepped by hand on a 2x2
 * torus: Send_Short and the short casts travel with their data as Eager_Short; the receiving NIC
 * delivers into a posted receive or stages, and only otherwise sends the sender down the permission
 * protocol, without losing, duplicating or reordering messages with the same tag between two processes.
 */
class EagerShortTest extends SteppedClusterTest
{
    private static final int GROUP = 7;
    private static final int PAGE = 1024;

    private SteppedProcess[] start(final ClusterParameters params, final int... nodes)
    {
        assertEquals(ShortFlow.EAGER, params.shortFlow(), "eager is the default");
        cluster = new SteppedCluster(base, params);
        return cluster.registerGroup(GROUP, nodes);
    }

    /** Staging space of exactly one maximum message (3 pages): the smallest SDRAM a cluster may have. */
    private static ClusterParameters tightStaging()
    {
        return SteppedCluster.tightStagingParameters().build();
    }

    private static byte[] message(final int seed, final int length)
    {
        final byte[] data = new byte[length];
        for (int i = 0; i < length; i++)
        {
            data[i] = SteppedProcess.pattern(seed, i);
        }
        return data;
    }

    private static void assertReceived(final SteppedProcess to, final int offset, final byte[] data, final String what)
    {
        for (int i = 0; i < data.length; i++)
        {
            if (data[i] != to.areaByte(offset + i))
            {
                throw new AssertionError(what + ": byte " + i + " of " + data.length + " differs");
            }
        }
    }

    @Test
    void aShortMessageGoesWithItsDataIntoAPostedReceiveAndTheSendCompletesOnTheReceiversReply()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        receiver.receiveContext(0, GROUP, 0, 5, 100, 64);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();

        final byte[] data = message(3, 64);
        sender.shortContext(1, receiver.name, 5, data);
        sender.post(ProcessCommand.SEND_SHORT, 1);
        int steps = 0;
        while (Doorbell.DONE != receiver.receiveDoorbell(0))
        {
            cluster.step();
            assertTrue(++steps < 10, "delivered");
        }
        assertNotEquals(Doorbell.DONE, sender.sendDoorbell(1),
            "the Send Doorbell waits for the receiving NIC's Eager_Short_Reply: the data must stay until then");
        cluster.settle();
        assertEquals(Doorbell.DONE, sender.sendDoorbell(1));
        assertReceived(receiver, 100, data, "eager");
        final long[] completion = receiver.receiveCompletion(0);
        assertEquals(GROUP, completion[0]);
        assertEquals(0, completion[1]);
        assertEquals(5, completion[2]);
        assertEquals(64, completion[3]);

        assertEquals(0, counter(0, NicCounters.PERMISSION_REQUESTS_SENT), "no Permission_Request on the wire");
        assertEquals(0, counter(3, NicCounters.PERMISSION_REQUESTS_RECEIVED));
        assertEquals(0, counter(0, NicCounters.DATA_PACKETS_SENT), "the data went in the Eager_Short");
        assertEquals(1, counter(0, NicCounters.EAGER_SHORTS_SENT));
        assertEquals(1, counter(3, NicCounters.EAGER_SHORTS_DELIVERED));
        assertEquals(0, counter(3, NicCounters.EAGER_SHORTS_STAGED));
        assertEquals(0, counter(3, NicCounters.EAGER_SHORTS_FELL_BACK));
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
        assertEquals(0, cluster.nics.get(3).activeTransfers());

        // An empty message, and a short one into a smaller buffer: Truncated with its prefix.
        sender.freeDoorbells();
        receiver.freeDoorbells();
        receiver.receiveContext(1, GROUP, 0, 6, 0, 10);
        receiver.post(ProcessCommand.RECEIVE, 1);
        receiver.receiveContext(2, GROUP, 0, 6, 0, 10);
        receiver.post(ProcessCommand.RECEIVE, 2);
        cluster.settle();
        sender.shortContext(0, receiver.name, 6, new byte[0]);
        sender.post(ProcessCommand.SEND_SHORT, 0);
        sender.shortContext(2, receiver.name, 6, message(4, 30));
        sender.post(ProcessCommand.SEND_SHORT, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, sender.sendDoorbell(0));
        assertEquals(Doorbell.DONE, sender.sendDoorbell(2));
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(1));
        assertEquals(0, receiver.receiveCompletion(1)[3]);
        assertEquals(Doorbell.TRUNCATED, receiver.receiveDoorbell(2));
        assertEquals(30, receiver.receiveCompletion(2)[3]);
        assertEquals(0, counter(0, NicCounters.PERMISSION_REQUESTS_SENT));
    }

    @Test
    void withoutAPostedReceiveTheShortMessageIsStagedThenDelivered()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 1, 2);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        final byte[] data = message(9, 50);
        sender.shortContext(3, receiver.name, 11, data);
        sender.post(ProcessCommand.SEND_SHORT, 3);
        cluster.settle();
        assertEquals(Doorbell.DONE, sender.sendDoorbell(3), "staged: the receiving NIC holds it");
        assertEquals(1, counter(2, NicCounters.EAGER_SHORTS_STAGED));
        assertEquals(1, counter(2, NicCounters.MESSAGES_STAGED));
        assertEquals(PAGE, cluster.nics.get(2).stagingBytesInUse());
        assertEquals(0, counter(1, NicCounters.PERMISSION_REQUESTS_SENT));

        // Any_Proc and Any_Tag: the completion names the real sender and tag.
        receiver.receiveContext(0, ContextLayout.ANY, ContextLayout.ANY, ContextLayout.ANY, 7, 64);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(0));
        assertReceived(receiver, 7, data, "staged");
        final long[] completion = receiver.receiveCompletion(0);
        assertEquals(GROUP, completion[0]);
        assertEquals(0, completion[1]);
        assertEquals(11, completion[2]);
        assertEquals(50, completion[3]);
        assertEquals(0, cluster.nics.get(2).stagingBytesInUse());
        assertEquals(0, cluster.nics.get(2).activeTransfers());
    }

    @Test
    void withStagingFullItFallsBackAndALaterMessageWithTheSameTagDoesNotOvertakeIt()
    {
        final SteppedProcess[] p = start(tightStaging(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        final NicControlProgram receivingNic = cluster.nics.get(3);

        // A message with another tag fills the receiving NIC's staging.
        sender.fill(0, 3 * PAGE, 1);
        sender.sendContext(0, receiver.name, 9, 0, 3 * PAGE);
        sender.post(ProcessCommand.SEND, 0);
        cluster.settle();
        assertEquals(3L * PAGE, receivingNic.stagingBytesInUse());

        // The first short message can be neither delivered nor staged: the sender asks for permission.
        final byte[] first = message(21, 40);
        sender.shortContext(1, receiver.name, 5, first);
        sender.post(ProcessCommand.SEND_SHORT, 1);
        cluster.settle();
        assertEquals(1, counter(3, NicCounters.EAGER_SHORTS_FELL_BACK));
        assertEquals(2, counter(0, NicCounters.PERMISSION_REQUESTS_SENT), "the long one's and the fallback's");
        assertEquals(Doorbell.FREE, sender.sendDoorbell(1), "it waits, its data in the Context Region");
        assertEquals(1, receivingNic.pendingEagerFallbacks());

        // Before any receive for tag 5, the second one arrives. It must not overtake the first: it falls
        // back too, and its request waits for the first's.
        final byte[] second = message(22, 60);
        sender.shortContext(2, receiver.name, 5, second);
        sender.post(ProcessCommand.SEND_SHORT, 2);
        cluster.settle();
        assertEquals(2, counter(3, NicCounters.EAGER_SHORTS_FELL_BACK));
        assertEquals(1, counter(3, NicCounters.REQUESTS_DEFERRED_EAGER_ORDER), "its request waits for the first");

        // A third with another tag is not held up by them.
        final byte[] other = message(23, 8);
        receiver.receiveContext(1, GROUP, 0, 6, 200, 64);
        receiver.post(ProcessCommand.RECEIVE, 1);
        sender.shortContext(3, receiver.name, 6, other);
        sender.post(ProcessCommand.SEND_SHORT, 3);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(1));
        assertEquals(Doorbell.DONE, sender.sendDoorbell(3));
        assertReceived(receiver, 200, other, "another tag");
        assertEquals(1, counter(3, NicCounters.EAGER_SHORTS_DELIVERED));
        assertEquals(Doorbell.FREE, sender.sendDoorbell(1));
        assertEquals(Doorbell.FREE, sender.sendDoorbell(2));

        // A receive for tag 5: the first's kept request is granted into it at once, with no clock advance
        // (no retry); the second then waits for room or a receive, and gets the next one as it is posted.
        receiver.receiveContext(0, GROUP, 0, 5, 0, 64);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(0));
        assertReceived(receiver, 0, first, "the first into the first receive");
        assertEquals(Doorbell.DONE, sender.sendDoorbell(1));
        assertEquals(Doorbell.FREE, sender.sendDoorbell(2));
        receiver.receiveContext(2, GROUP, 0, 5, 100, 64);
        receiver.post(ProcessCommand.RECEIVE, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(2));
        assertReceived(receiver, 100, second, "the second into the second receive");
        assertEquals(Doorbell.DONE, sender.sendDoorbell(2));
        assertEquals(0, receivingNic.pendingEagerFallbacks(), "drained");

        // The staged long message is still there, once.
        receiver.receiveContext(3, GROUP, 0, 9, 4 * PAGE, 3 * PAGE);
        receiver.post(ProcessCommand.RECEIVE, 3);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(3));
        assertEquals(0, receivingNic.activeTransfers());
        assertEquals(0, receivingNic.stagingBytesInUse());
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
    }

    @Test
    void pastTheStagingQuotaEveryMessageFallsBackAndArrivesExactlyOnceInOrder()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        final int quota = ClusterParameters.STAGED_MESSAGES_PER_PROCESS;
        final int contexts = cluster.params.contextsPerProcess();
        final int messages = quota + contexts;

        // The receiver posts nothing: the first quota messages are staged, the rest fall back.
        for (int m = 0; m < messages; m++)
        {
            final int context = m % contexts;
            if (m >= contexts)
            {
                assertEquals(Doorbell.DONE, sender.sendDoorbell(context), "message " + (m - contexts));
                sender.freeDoorbell(context);
            }
            sender.shortContext(context, receiver.name, 5, message(m, 1 + m % 64));
            sender.post(ProcessCommand.SEND_SHORT, context);
            cluster.settle();
        }
        assertEquals(quota, counter(3, NicCounters.EAGER_SHORTS_STAGED));
        assertEquals(contexts, counter(3, NicCounters.EAGER_SHORTS_FELL_BACK));
        assertEquals(contexts, cluster.nics.get(3).pendingEagerFallbacks());

        // Any_Tag receives, one at a time, take every message once, in the order it was sent.
        for (int m = 0; m < messages; m++)
        {
            final int context = m % contexts;
            receiver.receiveContext(context, GROUP, 0, ContextLayout.ANY, 0, 64);
            receiver.post(ProcessCommand.RECEIVE, context);
            cluster.settle();
            cluster.clock.advance(PermissionRequests.PERMISSION_RETRY_MS);
            cluster.settle();
            assertEquals(Doorbell.DONE, receiver.receiveDoorbell(context), "receive " + m);
            assertEquals(1 + m % 64, receiver.receiveCompletion(context)[3], "receive " + m + " got message " + m);
            assertReceived(receiver, 0, message(m, 1 + m % 64), "message " + m);
            receiver.freeDoorbells();
        }
        for (int c = 0; c < contexts; c++)
        {
            assertEquals(Doorbell.DONE, sender.sendDoorbell(c));
        }
        assertEquals(0, cluster.nics.get(3).pendingEagerFallbacks());
        assertEquals(0, cluster.nics.get(3).activeTransfers());
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
        assertEquals(messages, counter(3, NicCounters.RECEIVES_COMPLETED));
    }

    @Test
    void aReceiverThatIsGoneEndsTheSendWithPeerGone()
    {
        final SteppedProcess[] p = start(tightStaging(), 0, 3, 1);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];

        // Deleted while the Eager_Short is on its way: the receiving NIC answers Peer Gone.
        receiver.delete();
        sender.shortContext(0, receiver.name, 5, message(1, 10));
        sender.post(ProcessCommand.SEND_SHORT, 0);
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, sender.sendDoorbell(0));
        assertEquals(1, counter(0, NicCounters.EAGER_SHORTS_SENT), "it left before the deletion was known");

        // After the deletion is known everywhere: Peer Gone at once, nothing sent.
        sender.shortContext(1, receiver.name, 5, message(1, 10));
        sender.post(ProcessCommand.SEND_SHORT, 1);
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, sender.sendDoorbell(1));
        assertEquals(1, counter(0, NicCounters.EAGER_SHORTS_SENT));

        // One that fell back and waits for permission when its receiver goes: Peer Gone too.
        final SteppedProcess other = p[2];
        other.fill(0, 3 * PAGE, 2);
        final SteppedProcess busy = p[0];
        other.sendContext(0, busy.name, 9, 0, 3 * PAGE);
        other.post(ProcessCommand.SEND, 0);
        cluster.settle();
        assertEquals(3L * PAGE, cluster.nics.get(0).stagingBytesInUse(), "node 0's staging is full");
        other.shortContext(1, busy.name, 5, message(3, 20));
        other.post(ProcessCommand.SEND_SHORT, 1);
        cluster.settle();
        assertEquals(1, cluster.nics.get(0).pendingEagerFallbacks());
        assertEquals(Doorbell.FREE, other.sendDoorbell(1));
        busy.delete();
        cluster.settle();
        assertEquals(Doorbell.PEER_GONE, other.sendDoorbell(1));
        assertEquals(0, cluster.nics.get(0).pendingEagerFallbacks());
        assertEquals(0, cluster.nics.get(0).stagingBytesInUse(), "the deleted process's staging is freed");
    }

    @Test
    void aSenderGoneMidWayLeavesWhatItHadSentDeliverableAndNothingWaiting()
    {
        final SteppedProcess[] p = start(tightStaging(), 0, 3, 1);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        final SteppedProcess filler = p[2];

        // The Eager_Short is staged, and its sender is deleted before the reply reaches its NIC.
        final byte[] data = message(5, 33);
        sender.shortContext(0, receiver.name, 5, data);
        sender.post(ProcessCommand.SEND_SHORT, 0);
        cluster.step();
        assertEquals(1, counter(3, NicCounters.EAGER_SHORTS_STAGED));
        sender.delete();
        cluster.settle();
        assertEquals(1, counter(0, NicCounters.PERMISSION_DUPLICATES), "the late reply is dropped");
        receiver.receiveContext(0, GROUP, 0, 5, 0, 64);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(0), "a message it finished sending stays deliverable");
        assertReceived(receiver, 0, data, "from a deleted sender");

        // One that fell back: when its sender goes, the receiving NIC forgets it.
        filler.fill(0, 3 * PAGE, 2);
        filler.sendContext(0, receiver.name, 9, 0, 3 * PAGE);
        filler.post(ProcessCommand.SEND, 0);
        cluster.settle();
        filler.shortContext(1, receiver.name, 5, message(6, 12));
        filler.post(ProcessCommand.SEND_SHORT, 1);
        cluster.settle();
        assertEquals(1, cluster.nics.get(3).pendingEagerFallbacks());
        filler.delete();
        cluster.settle();
        assertEquals(0, cluster.nics.get(3).pendingEagerFallbacks());
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
    }

    @Test
    void shortAndLongMessagesBetweenTheSamePairAreMatchedInTheOrderTheyWereSent()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 3);
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        final int[] lengths = {2 * PAGE + 3, 40, PAGE, 17};
        for (final boolean posted : new boolean[] {true, false})
        {
            if (posted)
            {
                postReceives(receiver, lengths);
                cluster.settle();
            }
            for (int m = 0; m < lengths.length; m++)
            {
                if (lengths[m] <= cluster.params.shortThreshold())
                {
                    sender.shortContext(m, receiver.name, 5, message(40 + m, lengths[m]));
                    sender.post(ProcessCommand.SEND_SHORT, m);
                }
                else
                {
                    sender.fill(m * 4 * PAGE, lengths[m], 40 + m);
                    sender.sendContext(m, receiver.name, 5, m * 4 * PAGE, lengths[m]);
                    sender.post(ProcessCommand.SEND, m);
                }
            }
            cluster.settle();
            if (!posted)
            {
                postReceives(receiver, lengths);
                cluster.settle();
            }
            for (int m = 0; m < lengths.length; m++)
            {
                final String what = (posted ? "posted first, " : "staged, ") + "message " + m;
                assertEquals(Doorbell.DONE, sender.sendDoorbell(m), what);
                assertEquals(Doorbell.DONE, receiver.receiveDoorbell(m), what);
                assertEquals(lengths[m], receiver.receiveCompletion(m)[3], what);
                assertReceived(receiver, m * 4 * PAGE, message(40 + m, lengths[m]), what);
            }
            sender.freeDoorbells();
            receiver.freeDoorbells();
        }
        assertEquals(4, counter(0, NicCounters.EAGER_SHORTS_SENT));
        assertEquals(4, counter(0, NicCounters.PERMISSION_REQUESTS_SENT), "only the long ones ask");
        assertEquals(0, counter(3, NicCounters.PACKETS_DROPPED));
    }

    private static void postReceives(final SteppedProcess receiver, final int[] lengths)
    {
        for (int m = 0; m < lengths.length; m++)
        {
            receiver.receiveContext(m, GROUP, 0, ContextLayout.ANY, m * 4 * PAGE, 3 * PAGE);
            receiver.post(ProcessCommand.RECEIVE, m);
        }
    }

    @Test
    void broadcastShortAndMulticastShortGoEagerlyToEveryDestination()
    {
        final SteppedProcess[] p = start(SteppedCluster.smallParameters(2, 2).build(), 0, 1, 2, 3);
        // Destination 1 has its receive posted, the others get the message staged.
        p[1].receiveContext(0, GROUP, 0, 1, 0, 64);
        p[1].post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        final byte[] data = message(50, 64);
        p[0].shortContext(0, p[0].name, 1, data);
        p[0].post(ProcessCommand.BROADCAST_SHORT, 0, GROUP, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(0));
        assertEquals(3, counter(0, NicCounters.EAGER_SHORTS_SENT));
        assertEquals(0, counter(0, NicCounters.PERMISSION_REQUESTS_SENT));
        assertEquals(1, counter(1, NicCounters.EAGER_SHORTS_DELIVERED));
        assertEquals(1, counter(2, NicCounters.EAGER_SHORTS_STAGED));
        assertEquals(1, counter(3, NicCounters.EAGER_SHORTS_STAGED));
        for (int r = 2; r < 4; r++)
        {
            p[r].receiveContext(0, GROUP, 0, 1, 0, 64);
            p[r].post(ProcessCommand.RECEIVE, 0);
        }
        cluster.settle();
        for (int r = 1; r < 4; r++)
        {
            assertEquals(Doorbell.DONE, p[r].receiveDoorbell(0), "destination " + r);
            assertReceived(p[r], 0, data, "broadcast to " + r);
        }

        final byte[] multi = message(51, 20);
        p[0].shortContext(1, p[0].name, 2, multi);
        p[0].postMulticast(ProcessCommand.MULTICAST_SHORT, 1, p[3].name, p[1].name);
        cluster.settle();
        assertEquals(Doorbell.DONE, p[0].sendDoorbell(1));
        assertEquals(5, counter(0, NicCounters.EAGER_SHORTS_SENT));
        assertEquals(0, counter(0, NicCounters.PERMISSION_REQUESTS_SENT));
        for (final int r : new int[] {1, 3})
        {
            p[r].receiveContext(1, GROUP, 0, 2, 100, 64);
            p[r].post(ProcessCommand.RECEIVE, 1);
        }
        cluster.settle();
        for (final int r : new int[] {1, 3})
        {
            assertEquals(Doorbell.DONE, p[r].receiveDoorbell(1), "destination " + r);
            assertReceived(p[r], 100, multi, "multicast to " + r);
        }
        assertEquals(Doorbell.FREE, p[2].receiveDoorbell(1), "not a destination");
    }
}
