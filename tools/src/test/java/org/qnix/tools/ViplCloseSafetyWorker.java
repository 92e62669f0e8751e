package org.qnix.tools;

import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.ViplDescriptor;
import org.qnix.abi.ViplResult;
import org.qnix.host.DoorbellWait;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * The racy half of {@link ViplCloseSafetyTest}, in a JVM of its own so that a crash (a read of memory
 * the close unmapped) is an exit code the test sees rather than the end of the test JVM. Each iteration
 * opens NIC 0-0, posts on Idle VIs (nothing completes), starts seven threads inside the calls that wait
 * or loop on the NIC's memory — {@code recvWait} asleep, {@code sendWait} busy, a {@code recvDone}
 * loop over a posted receive, a {@code sendDone} loop over an empty queue, {@code cq.await} backing
 * off, a {@code cq.done} loop, and a loop of posts each taken back by a wait — and closes the NIC from
 * the main thread after a random pause. Every thread must end with a {@link ViplException}
 * {@code INVALID_STATE}, and so must every call on the NIC's VIs and CQ after the close.
 *
 * <pre>
 * java ... org.qnix.tools.ViplCloseSafetyWorker CLUSTER ITERATIONS SEED
 * </pre>
 *
 * Prints one {@code RESULT} line: {@code RESULT iterations=N closed=C other=O}. Exit 0 if every call
 * ended closed, 2 otherwise (at the first thread that did not end, at once: it would spin for ever).
 */
public final class ViplCloseSafetyWorker
{
    static final String[] THREADS =
        {"recvWait-sleep", "sendWait-busy", "recvDone-loop", "sendDone-loop-empty", "cqAwait-backoff", "cqDone-loop",
        "post-and-wait"};
    /** The calls {@link #callsAfterClose} makes. */
    static final int CALLS_AFTER_CLOSE = 16;
    private static final long FOREVER_MS = TimeUnit.HOURS.toMillis(1);

    private ViplCloseSafetyWorker()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final String cluster = args[0];
        final int iterations = Integer.parseInt(args[1]);
        final long seed = Long.parseLong(args[2]);
        System.out.println("vipl-close-safety: " + iterations + " iterations, seed " + seed);
        final Random random = new Random(seed);
        final CloseRace.Tally tally = new CloseRace.Tally(
            outcome -> outcome instanceof ViplException vipl && ViplResult.INVALID_STATE == vipl.result());
        for (int i = 0; i < iterations; i++)
        {
            final ViplNic nic = Vipl.openNic("0-0", cluster);
            // Mostly short pauses (the waits still in their spin or hot window), now and then past it.
            final int pauseUs = random.nextInt(4) == 0 ? random.nextInt(300_000) : random.nextInt(2_000);
            final Ends ends = new Ends(nic);
            final List<Throwable> outcomes = race(nic, ends, pauseUs);
            outcomes.addAll(callsAfterClose(nic, ends));
            tally.count(outcomes, i + " (pause " + pauseUs + " us)");
            if (tally.other() > 0)
            {
                break;
            }
        }
        tally.printResult(iterations);
        // halt, not exit: a thread that never ended must not keep the JVM, nor a hook wait for it.
        Runtime.getRuntime().halt(0 == tally.other() ? 0 : 2);
    }

    /** What the threads use: VIs whose posts stay posted (Idle), a CQ nothing completes into. */
    private static final class Ends
    {
        final ViplMemory memory;
        final MemoryRegion region;
        final CompletionQueue cq;
        /** A receive and a send posted. */
        final Vi posted;
        /** A receive posted; its receive queue on the CQ. */
        final Vi onCq;
        /** Nothing posted. */
        final Vi empty;
        /** For the post-and-wait loop. */
        final Vi poster;

        Ends(final ViplNic nic)
        {
            final ProtectionTag ptag = nic.createPtag();
            memory = nic.allocate(64 * 1024);
            region = nic.registerMem(memory, 0, memory.length(), new MemoryAttributes(ptag, false, false));
            cq = nic.createCq(64);
            final ViAttributes attributes = new ViAttributes(Reliability.UNRELIABLE, 1024, ptag, false, false);
            posted = nic.createVi(attributes, null, null);
            onCq = nic.createVi(attributes, null, cq);
            empty = nic.createVi(attributes, null, null);
            poster = nic.createVi(attributes, null, null);
            posted.postRecv(receive(0), region);
            posted.postSend(send(1), region);
            onCq.postRecv(receive(2), region);
        }

        Descriptor receive(final int slot)
        {
            final Descriptor d = memory.descriptor(slot * 128);
            d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, memory.address(32 * 1024), region.handle(), 1024);
            return d;
        }

        Descriptor send(final int slot)
        {
            final Descriptor d = memory.descriptor(slot * 128);
            d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(16)
                .dataSegment(0, memory.address(32 * 1024), region.handle(), 16);
            return d;
        }
    }

    /** Threads inside waits and loops, the NIC closed after {@code pauseUs}. @return how each ended. */
    private static List<Throwable> race(final ViplNic nic, final Ends ends, final int pauseUs)
        throws InterruptedException
    {
        final Runnable[] bodies =
        {
            () -> ends.posted.recvWait(FOREVER_MS, DoorbellWait.SLEEP),
            () -> ends.posted.sendWait(FOREVER_MS, DoorbellWait.BUSY),
            () -> spin(() -> null == ends.onCq.recvDone()),
            () -> spin(() -> null == ends.empty.sendDone()),
            () -> ends.cq.await(FOREVER_MS, DoorbellWait.BACKOFF),
            () -> spin(() -> null == ends.cq.done()),
            () ->
            {
                // A receive the NIC refuses completes at once, also on an Idle VI: post it, take it back, again.
                final Descriptor bad = ends.memory.descriptor(5 * 128);
                while (true)
                {
                    try
                    {
                        bad.fields().reset().control(ViplDescriptor.OP_RDMA_WRITE).segmentCount(0);
                    }
                    catch (final IndexOutOfBoundsException ex)
                    {
                        // This thread's own write, after the close unmapped the memory: its views shrink
                        // to nothing rather than fault. The library's next call must end INVALID_STATE.
                        if (!nic.isClosed())
                        {
                            throw ex;
                        }
                    }
                    ends.poster.postRecv(bad, ends.region);
                    if (bad != ends.poster.recvWait(FOREVER_MS, DoorbellWait.YIELD))
                    {
                        throw new AssertionError("another receive completed");
                    }
                }
            },
        };
        return CloseRace.race(THREADS, bodies, nic::close, pauseUs);
    }

    private interface Condition
    {
        boolean holds();
    }

    private static void spin(final Condition condition)
    {
        while (condition.holds())
        {
            Thread.onSpinWait();
        }
        throw new AssertionError("a poll found a completion nothing made");
    }

    /** Every kind of call on the NIC's VIs and CQ after its close: each must end INVALID_STATE. */
    private static List<Throwable> callsAfterClose(final ViplNic nic, final Ends ends)
    {
        final List<Runnable> calls = List.of(
            () -> ends.posted.recvWait(1_000),
            () -> ends.posted.sendWait(1_000, DoorbellWait.YIELD),
            ends.posted::recvDone,
            ends.posted::sendDone,
            ends.empty::sendDone,
            ends.empty::recvDone,
            () -> ends.empty.recvWait(1_000, DoorbellWait.BUSY),
            () -> ends.onCq.recvWait(1_000, DoorbellWait.BACKOFF),
            ends.cq::done,
            () -> ends.cq.await(1_000),
            () -> ends.empty.postSend(ends.send(6), ends.region),
            () -> ends.empty.postRecv(ends.receive(7), ends.region),
            () -> ends.empty.recvNotify((vi, d) -> { }),
            () -> ends.cq.notify((cq, c) -> { }),
            ends.empty::query,
            nic::createPtag);
        return CloseRace.outcomesOf(calls);
    }
}
