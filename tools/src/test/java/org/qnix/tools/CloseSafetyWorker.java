package org.qnix.tools;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.ProcessName;
import org.qnix.host.DoorbellWait;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixClosedException;
import org.qnix.lib.ReceiveStatus;

/**
 * The racy half of {@link CloseSafetyTest}, in a JVM of its own so that a crash (memory unmapped under a
 * running call) is an exit code the test sees rather than the end of the test JVM. Each iteration
 * registers, starts six threads inside the calls that wait or loop on the VNI — waitForReceive
 * (sleeping on the futex), awaitReceive busy, pollForReceive and pollForSend loops, awaitSend backing
 * off, and a loop of sendContext + send/trySend whose sends to an unmatched tag keep every context in
 * flight — and closes from the main thread after a random pause. Every thread must end with
 * {@link QnixClosedException}, and so must every call after the close.
 *
 * <pre>
 * java ... org.qnix.tools.CloseSafetyWorker CLUSTER AI ITERATIONS SEED
 * </pre>
 *
 * Prints one {@code RESULT} line: {@code RESULT iterations=N closed=C other=O}. Exit 0 if every call
 * ended closed, 2 otherwise.
 */
public final class CloseSafetyWorker
{
    /** The tag of the receives the threads wait on: nobody sends it. */
    private static final int TAG_NOBODY_SENDS = 1;
    /** The tag of the sends: no receive matches it, so they stay in flight. */
    private static final int TAG_NOBODY_RECEIVES = 2;
    private static final String[] THREADS =
        {"waitForReceive", "awaitReceive-busy", "pollForReceive", "pollForSend", "awaitSend-backoff", "send"};

    private CloseSafetyWorker()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final String cluster = args[0];
        final int ai = Integer.parseInt(args[1]);
        final int iterations = Integer.parseInt(args[2]);
        final long seed = Long.parseLong(args[3]);
        System.out.println("close-safety: " + iterations + " iterations, seed " + seed);
        final Random random = new Random(seed);
        final CloseRace.Tally tally = new CloseRace.Tally(outcome -> outcome instanceof QnixClosedException);
        for (int i = 0; i < iterations; i++)
        {
            final Qnix qnix = Qnix.options().name(new ProcessName(ai, 0)).group(ai, 1).cluster(cluster).node("0-0")
                .timeout(Duration.ofSeconds(120)).init();
            final List<Throwable> outcomes = race(qnix, random.nextInt(3000));
            outcomes.addAll(callsAfterClose(qnix));
            tally.count(outcomes, Integer.toString(i));
        }
        tally.printResult(iterations);
        System.exit(0 == tally.other() ? 0 : 2);
    }

    /** Threads inside waits and loops, closed from this thread after {@code pauseUs}. @return how each ended. */
    private static List<Throwable> race(final Qnix qnix, final int pauseUs) throws InterruptedException
    {
        final QnixBuffer buffer = qnix.allocateBuffer(256);
        buffer.lock();
        final ProcessName self = qnix.name();
        // Posting is single-threaded: every context the threads wait on is posted here first.
        final int rxSleep = postReceive(qnix, buffer);
        final int rxBusy = postReceive(qnix, buffer);
        final int rxPoll = postReceive(qnix, buffer);
        // Taken over by the send threads once their send completes (a context whose completion was taken
        // is no longer held: a poll or wait on it ends in IllegalStateException).
        final int rxAfterPoll = postReceive(qnix, buffer);
        final int rxAfterWait = postReceive(qnix, buffer);
        final int txPoll = qnix.sendContext(self, TAG_NOBODY_RECEIVES, true, buffer, 64, 64);
        qnix.send(txPoll);
        final int txWait = qnix.sendContext(self, TAG_NOBODY_RECEIVES, true, buffer, 64, 64);
        qnix.send(txWait);

        final Runnable[] bodies =
        {
            () -> forever(() -> qnix.waitForReceive(rxSleep, new ReceiveStatus(), 1, TimeUnit.HOURS)),
            () -> forever(() -> qnix.awaitReceive(rxBusy, new ReceiveStatus(), DoorbellWait.BUSY, 1, TimeUnit.HOURS)),
            () ->
            {
                final ReceiveStatus status = new ReceiveStatus();
                forever(() -> qnix.pollForReceive(rxPoll, status));
            },
            () ->
            {
                while (!qnix.pollForSend(txPoll))
                {
                    Thread.onSpinWait();
                }
                final ReceiveStatus status = new ReceiveStatus();
                forever(() -> qnix.pollForReceive(rxAfterPoll, status));
            },
            () ->
            {
                qnix.awaitSend(txWait, DoorbellWait.BACKOFF, 1, TimeUnit.HOURS);
                forever(() -> qnix.awaitReceive(rxAfterWait, new ReceiveStatus(), DoorbellWait.BACKOFF, 1, TimeUnit.HOURS));
            },
            () ->
            {
                int k = 0;
                while (true)
                {
                    // No doorbell: the NIC frees a context that completes; pending ones run the contexts out,
                    // and the next sendContext waits for one until the close.
                    final int context = qnix.sendContext(self, TAG_NOBODY_RECEIVES, false, buffer, 128, 64);
                    if (0 == (k++ & 1))
                    {
                        qnix.send(context);
                    }
                    else
                    {
                        while (!qnix.trySend(context))
                        {
                            Thread.onSpinWait();
                        }
                    }
                }
            },
        };
        return CloseRace.race(THREADS, bodies, qnix::close, pauseUs);
    }

    private static int postReceive(final Qnix qnix, final QnixBuffer buffer)
    {
        final int context = qnix.recvContext(Qnix.ANY_PROC, TAG_NOBODY_SENDS, true, buffer, 0, 64);
        qnix.receive(context);
        return context;
    }

    private static void forever(final Runnable call)
    {
        while (true)
        {
            call.run();
        }
    }

    /** Every kind of call after close(): each must end closed. */
    private static List<Throwable> callsAfterClose(final Qnix qnix)
    {
        final ProcessName peer = new ProcessName(qnix.name().ai(), 1);
        final List<Runnable> calls = List.of(
            () -> qnix.pollForSend(0),
            () -> qnix.pollForReceive(0, new ReceiveStatus()),
            () -> qnix.awaitSend(0, DoorbellWait.SLEEP, 1, TimeUnit.SECONDS),
            () -> qnix.awaitReceive(0, new ReceiveStatus(), DoorbellWait.BUSY, 1, TimeUnit.SECONDS),
            () -> qnix.send(0),
            () -> qnix.trySend(0),
            () -> qnix.sendShort(0),
            () -> qnix.trySendShort(0),
            () -> qnix.receive(0),
            () -> qnix.tryReceive(0),
            () -> qnix.groupContext(),
            () -> qnix.barrier(0, qnix.name().ai(), 1),
            () -> qnix.awaitBarrier(qnix.name().ai(), 1, 1, TimeUnit.SECONDS),
            () -> qnix.broadcast(0, qnix.name().ai()),
            () -> qnix.tryMulticast(0, peer),
            () -> qnix.sendContextShort(peer, 1, true, new org.agrona.concurrent.UnsafeBuffer(new byte[8]), 0, 8),
            () -> qnix.groupMembers(qnix.name().ai()),
            () -> qnix.allocateBuffer(64),
            () -> qnix.bufferPool(1));
        return CloseRace.outcomesOf(calls);
    }
}
