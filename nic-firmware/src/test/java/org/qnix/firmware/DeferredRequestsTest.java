package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.qnix.abi.PermissionRequestFlyweight;
import org.qnix.abi.SystemMessage;

/**
 * The Permission_Requests a receiving NIC keeps while there is no staging room: each once, answered
 * oldest first when their receiver frees room, kept again if there is still none, and never answered
 * once their sender stopped asking or was deleted (so nothing is granted for data that will not come).
 */
class DeferredRequestsTest
{
    private static final int RECEIVER = 3;
    private static final int OTHER_RECEIVER = 4;

    private final DeferredRequests deferred = new DeferredRequests();
    private final PermissionRequestFlyweight request = new PermissionRequestFlyweight()
        .wrap(new UnsafeBuffer(new byte[SystemMessage.PERMISSION_REQUEST_LENGTH]), 0);
    private final List<String> answered = new ArrayList<>();

    private void keep(final int sourceNode, final int receiverIndex, final long operationId, final long nowMs)
    {
        keep(sourceNode, receiverIndex, operationId, nowMs, PermissionRequests.PERMISSION_RETRY_MS);
    }

    private void keep(final int sourceNode, final int receiverIndex, final long operationId, final long nowMs,
        final int retryMs)
    {
        request.receiverPid(receiverIndex + 1).senderPid(7).tag(5).messageLength(4096).firstPacketLength(4096)
            .packets(1).operationId(operationId).senderAi(11).senderPi(0).retryMs(retryMs);
        deferred.keep(sourceNode, receiverIndex, request, nowMs);
    }

    private int replay(final int receiverIndex, final long nowMs)
    {
        return deferred.replay(receiverIndex, nowMs, (sourceNode, r) ->
            answered.add(sourceNode + ":" + r.operationId() + ":" + r.messageLength() + ":" + r.senderPid()));
    }

    @Test
    void theRequestsOfTheReceiverThatFreedRoomAreAnsweredOldestFirstTheOthersStay()
    {
        keep(1, RECEIVER, 100, 0);
        keep(2, OTHER_RECEIVER, 200, 0);
        keep(1, RECEIVER, 101, 0);

        assertEquals(2, replay(RECEIVER, 1));
        assertEquals(List.of("1:100:4096:7", "1:101:4096:7"), answered);
        assertEquals(1, deferred.size(), "another receiver's request waits for that receiver");
        assertEquals(0, replay(RECEIVER, 1));
    }

    @Test
    void aRetryReplacesTheKeptCopyAndAnAnswerRemovesIt()
    {
        keep(1, RECEIVER, 100, 0);
        deferred.forget(1, 100);
        keep(1, RECEIVER, 100, 1);
        assertEquals(1, deferred.size(), "kept once");

        deferred.forget(2, 100);
        assertEquals(1, deferred.size(), "the same operation id from another NIC is another operation");
        deferred.forget(1, 100);
        assertEquals(0, replay(RECEIVER, 1));
    }

    @Test
    void stillNoRoomKeepsItAgainWithTheTimeItsSenderLastAsked()
    {
        keep(1, RECEIVER, 100, 0);
        deferred.replay(RECEIVER, 1, (sourceNode, r) -> deferred.keep(sourceNode, RECEIVER, r, 1));
        assertEquals(1, deferred.size());

        assertEquals(0, replay(RECEIVER, DeferredRequests.staleMs(PermissionRequests.PERMISSION_RETRY_MS)),
            "its sender stopped asking at 0");
        assertEquals(0, deferred.size());
    }

    @Test
    void aRequestWhoseSenderStoppedAskingOrWasDeletedIsNeverAnswered()
    {
        keep(1, RECEIVER, 100, 0);
        keep(2, RECEIVER, 200, 5);
        deferred.senderDeleted(2, 7);
        assertEquals(0, replay(RECEIVER, DeferredRequests.staleMs(PermissionRequests.PERMISSION_RETRY_MS)));
        assertEquals(List.of(), answered);

        keep(1, RECEIVER, 101, 10);
        deferred.receiverDeleted(RECEIVER);
        assertEquals(0, replay(RECEIVER, 10));
    }

    @Test
    void aRequestIsKeptForTwiceTheRetryIntervalItNamesBoundedToWhatASenderMaySay()
    {
        keep(1, RECEIVER, 100, 0, 40);
        assertEquals(1, replay(RECEIVER, 80), "its sender asks again within 40 ms; 80 ms may look like one interval");
        keep(1, RECEIVER, 101, 0, 40);
        assertEquals(0, replay(RECEIVER, 81), "two intervals and a tick without a retry: stale");

        assertEquals(2L * PermissionRequests.PERMISSION_RETRY_MAX_MS + 1, DeferredRequests.staleMs(Integer.MAX_VALUE));
        assertEquals(3, DeferredRequests.staleMs(0));
        assertEquals(3, DeferredRequests.staleMs(-5));
        keep(1, RECEIVER, 102, 0, Integer.MAX_VALUE);
        assertEquals(0, replay(RECEIVER, DeferredRequests.staleMs(Integer.MAX_VALUE)), "a huge interval is bounded");
    }

    @Test
    void whenFullARequestIsNotKeptAndWaitsForItsRetry()
    {
        for (int i = 0; i < DeferredRequests.CAPACITY + 3; i++)
        {
            keep(1, RECEIVER, i, 0);
        }
        assertEquals(DeferredRequests.CAPACITY, deferred.size());
        assertEquals(DeferredRequests.CAPACITY, replay(RECEIVER, 0));
        assertEquals("1:0:4096:7", answered.get(0));
    }
}
