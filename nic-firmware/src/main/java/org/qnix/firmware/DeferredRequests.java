package org.qnix.firmware;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.PermissionRequestFlyweight;
import org.qnix.abi.SystemMessage;

/**
 * The Permission_Requests this NIC left unanswered for want of staging room (the receiver's quota, or
 * staging memory full) or behind an older Eager_Short of the same sender and tag that fell back
 * ({@link EagerFallbacks}), kept so that the receiver's next Receive, when it takes a staged message (and
 * so frees room) or is posted, answers them at once instead of at the sender's next retry, which may be
 * up to {@link PermissionRequests#PERMISSION_RETRY_MAX_MS} later (thesis 3.2, Reliability, is still what
 * guarantees the answer). A stream whose receiver posts a little slower than its sender sends fills the
 * receiver's staging quota; without this each message past it waited for the retry while the receiver,
 * its staged messages taken, had nothing to do: {@code qnix bench bandwidth} at 4 KiB moved 0.4 GB/s
 * without this and 1.5-1.6 GB/s with it, on two cores.
 *
 * <p>Answering a kept request is answering the sender's retry a little early: the same bytes, handled
 * by the same {@link PermissionGrants#onPermissionRequest} rules (a live transfer is answered again, a
 * delivered one ignored). A request is kept once: a retry of the operation refreshes its row where it
 * is, so one sender's requests are answered in the order they first asked whatever their retries. It
 * goes when it is answered, when its sender or receiver is deleted, or when its sender has not asked
 * again within twice the retry interval the request named ({@link #staleMs}: it was answered another
 * way, or its NIC stopped). That is at most about 2 s, below the 3 s after which a silent NIC counts as
 * dead ({@code ControlProgramLayout.HEARTBEAT_TIMEOUT_MS}): one silent for less may be at a breakpoint
 * and sends its data when it resumes. When all {@link #CAPACITY} entries are taken, a request is not
 * kept and waits for its retry, as before (the ordering rule of docs/IMPLEMENTATION.md, "a message that
 * waited for staging may be overtaken", covers it).
 *
 * <pre>{@code
 * deferred.keep(sourceNode, receiverIndex, request, now);      // no answer for now: kept, or its row refreshed
 * deferred.forget(sourceNode, operationId);                    // answered: its row goes
 * int released = deferred.replay(receiverIndex, now, grants);  // a Receive posted, or staging freed
 * }</pre>
 *
 * <p>A fixed table of {@link #CAPACITY} rows scanned linearly, empty in the common case; allocation free.
 */
final class DeferredRequests
{
    /** Requests kept at most per NIC: a window of 8 sends from each of a few streams at once. */
    static final int CAPACITY = 64;
    /** {@link #replay} of every receiver's requests. */
    static final int ALL_RECEIVERS = -1;

    private static final int ROW = SystemMessage.PERMISSION_REQUEST_LENGTH;

    /** Answers a kept request as if it had just arrived (without counting it as received again). */
    @FunctionalInterface
    interface Handler
    {
        void onRequest(int sourceNode, PermissionRequestFlyweight request);
    }

    private final int[] sourceNodes = new int[CAPACITY];
    private final int[] receiverIndexes = new int[CAPACITY];
    private final long[] operationIds = new long[CAPACITY];
    private final long[] askedMs = new long[CAPACITY];
    private final UnsafeBuffer requests = new UnsafeBuffer(new byte[CAPACITY * ROW]);
    /** The rows being replayed, moved out first: answering one may keep it again. */
    private final int[] replaySources = new int[CAPACITY];
    private final long[] replayAskedMs = new long[CAPACITY];
    private final UnsafeBuffer replayRequests = new UnsafeBuffer(new byte[CAPACITY * ROW]);
    private final PermissionRequestFlyweight replayed = new PermissionRequestFlyweight();
    private int size;
    /** While a kept request is answered again: when its sender last asked, which keeping it again keeps. */
    private boolean inReplay;
    private long replayingAskedMs;

    /**
     * A kept request not asked for again within this long is dropped: its sender promised to ask again
     * within {@code retryMs} (read from the wire, so bounded to what a sender may say), and the
     * millisecond clock makes one retry interval look like two.
     */
    static long staleMs(final int retryMs)
    {
        return 2L * PermissionRequests.bounded(retryMs) + 1;
    }

    /** @return the requests kept now. */
    int size()
    {
        return size;
    }

    /** A request of this operation was answered: any kept copy goes. */
    void forget(final int sourceNode, final long operationId)
    {
        for (int i = size - 1; i >= 0; i--)
        {
            if (operationIds[i] == operationId && sourceNodes[i] == sourceNode)
            {
                remove(i);
                return;
            }
        }
    }

    /**
     * The request was left unanswered (no room, or behind an older Eager_Short that fell back): keep it
     * for the receiver's next Receive. A retry of a request kept already takes its row where it is, so
     * the rows of one sender stay in the order their operations first asked, whatever each one's retry
     * interval (a younger send retries sooner than an older one that has waited longer).
     */
    void keep(final int sourceNode, final int receiverIndex, final PermissionRequestFlyweight request,
        final long nowMs)
    {
        int row = indexOf(sourceNode, request.operationId());
        if (row < 0)
        {
            if (size == CAPACITY)
            {
                return;
            }
            row = size++;
        }
        sourceNodes[row] = sourceNode;
        receiverIndexes[row] = receiverIndex;
        operationIds[row] = request.operationId();
        askedMs[row] = inReplay ? replayingAskedMs : nowMs;
        request.copyTo(requests, row * ROW);
    }

    private int indexOf(final int sourceNode, final long operationId)
    {
        for (int i = 0; i < size; i++)
        {
            if (operationIds[i] == operationId && sourceNodes[i] == sourceNode)
            {
                return i;
            }
        }
        return -1;
    }

    /**
     * Room or a receive came for the process at {@code receiverIndex} ({@link #ALL_RECEIVERS}: staging
     * memory was freed, which any of them may use): its kept requests, oldest first, are answered now;
     * those still without an answer are kept again, in the same order.
     *
     * @return the requests answered and not kept again: something changed that may let others through.
     */
    int replay(final int receiverIndex, final long nowMs, final Handler handler)
    {
        if (0 == size)
        {
            return 0;
        }
        int taken = 0;
        int kept = 0;
        for (int i = 0; i < size; i++)
        {
            if (ALL_RECEIVERS == receiverIndex || receiverIndexes[i] == receiverIndex)
            {
                replaySources[taken] = sourceNodes[i];
                replayAskedMs[taken] = askedMs[i];
                replayRequests.putBytes(taken * ROW, requests, i * ROW, ROW);
                taken++;
            }
            else
            {
                move(i, kept++);
            }
        }
        size = kept;
        int released = 0;
        for (int r = 0; r < taken; r++)
        {
            if (nowMs - replayAskedMs[r] >=
                staleMs(replayRequests.getInt(r * ROW + SystemMessage.REQUEST_RETRY_MS_OFFSET)))
            {
                continue;
            }
            inReplay = true;
            replayingAskedMs = replayAskedMs[r];
            final int before = size;
            try
            {
                handler.onRequest(replaySources[r], replayed.wrap(replayRequests, r * ROW));
            }
            finally
            {
                inReplay = false;
            }
            if (size == before)
            {
                released++;
            }
        }
        return released;
    }

    /** The receiving process was deleted: its kept requests go (a new process may take its entry). */
    void receiverDeleted(final int receiverIndex)
    {
        for (int i = size - 1; i >= 0; i--)
        {
            if (receiverIndexes[i] == receiverIndex)
            {
                remove(i);
            }
        }
    }

    /** A sending process was deleted: its kept requests go, nothing must be granted for it any more. */
    void senderDeleted(final int sourceNode, final int senderPid)
    {
        for (int i = size - 1; i >= 0; i--)
        {
            if (sourceNodes[i] == sourceNode &&
                requests.getInt(i * ROW + SystemMessage.REQUEST_SENDER_PID_OFFSET) == senderPid)
            {
                remove(i);
            }
        }
    }

    private void remove(final int index)
    {
        for (int i = index + 1; i < size; i++)
        {
            move(i, i - 1);
        }
        size--;
    }

    private void move(final int from, final int to)
    {
        if (from == to)
        {
            return;
        }
        sourceNodes[to] = sourceNodes[from];
        receiverIndexes[to] = receiverIndexes[from];
        operationIds[to] = operationIds[from];
        askedMs[to] = askedMs[from];
        requests.putBytes(to * ROW, requests, from * ROW, ROW);
    }
}
