package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.qnix.abi.ClusterDirectory;

/**
 * What the close-safety tests share ({@link CloseSafetyTest} for libqnix, {@link ViplCloseSafetyTest} for
 * the VIPL): in the worker's JVM, threads inside waits and loops closed under them and calls made after
 * the close, each outcome collected; in the test's, the worker run as a child JVM, so that a crash is an
 * exit code and a crash file rather than the end of the test JVM, and its {@code RESULT} line checked.
 *
 * <pre>{@code
 * List<Throwable> outcomes = CloseRace.race(names, bodies, qnix::close, pauseUs);   // in the worker
 * outcomes.addAll(CloseRace.outcomesOf(List.of(() -> qnix.send(0))));
 * CloseRace.assertEveryCallEndedClosed(worker, dir, workingDirectory, iterations, 6 + 19);   // in the test
 * }</pre>
 */
final class CloseRace
{
    private static final Pattern RESULT = Pattern.compile("RESULT iterations=(\\d+) closed=(\\d+) other=(\\d+)");

    private CloseRace()
    {
    }

    /**
     * Starts a daemon thread per body, named by {@code names}, and runs {@code close} once all started
     * and {@code pauseUs} passed.
     *
     * @return how each thread ended, in order: its exception, or an AssertionError if it returned or did
     * not end within a minute of the close (a hang guard, not a timing assertion).
     */
    static List<Throwable> race(final String[] names, final Runnable[] bodies, final Runnable close, final int pauseUs)
        throws InterruptedException
    {
        final AtomicReferenceArray<Throwable> endings = new AtomicReferenceArray<>(bodies.length);
        final CountDownLatch started = new CountDownLatch(bodies.length);
        final Thread[] threads = new Thread[bodies.length];
        for (int t = 0; t < threads.length; t++)
        {
            final int index = t;
            threads[t] = new Thread(() ->
            {
                started.countDown();
                try
                {
                    bodies[index].run();
                    endings.set(index, new AssertionError(names[index] + " returned"));
                }
                catch (final Throwable ex)
                {
                    endings.set(index, ex);
                }
            }, names[t]);
            threads[t].setDaemon(true);
            threads[t].start();
        }
        started.await();
        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(pauseUs));
        close.run();

        final List<Throwable> outcomes = new ArrayList<>();
        for (int t = 0; t < threads.length; t++)
        {
            // Every wait and loop leaves within a sleep slice of the close.
            threads[t].join(TimeUnit.SECONDS.toMillis(60));
            outcomes.add(threads[t].isAlive() ? new AssertionError(names[t] + " did not end after close()") :
                endings.get(t));
        }
        return outcomes;
    }

    /** A worker's counts of the outcomes that ended closed and of the others, for its RESULT line. */
    static final class Tally
    {
        private final Predicate<Throwable> endedClosed;
        private long closed;
        private long other;

        /** @param endedClosed whether an outcome is the library's "closed" exception. */
        Tally(final Predicate<Throwable> endedClosed)
        {
            this.endedClosed = endedClosed;
        }

        /** Counts each outcome; prints a FAIL line, and its trace, for each that did not end closed. */
        void count(final List<Throwable> outcomes, final String iteration)
        {
            for (final Throwable outcome : outcomes)
            {
                if (endedClosed.test(outcome))
                {
                    closed++;
                }
                else
                {
                    other++;
                    System.out.println("FAIL iteration " + iteration + ": " + outcome);
                    if (null != outcome)
                    {
                        outcome.printStackTrace(System.out);
                    }
                }
            }
        }

        long other()
        {
            return other;
        }

        /** Prints the line {@link #assertEveryCallEndedClosed} reads. */
        void printResult(final int iterations)
        {
            System.out.println("RESULT iterations=" + iterations + " closed=" + closed + " other=" + other);
            System.out.flush();
        }
    }

    /** @return how each call ended: its exception, or an AssertionError if it returned. */
    static List<Throwable> outcomesOf(final List<Runnable> calls)
    {
        final List<Throwable> outcomes = new ArrayList<>();
        for (final Runnable call : calls)
        {
            try
            {
                call.run();
                outcomes.add(new AssertionError("a call after close() returned"));
            }
            catch (final Throwable ex)
            {
                outcomes.add(ex);
            }
        }
        return outcomes;
    }

    /**
     * Runs {@code worker} against {@code dir}'s cluster in {@code workingDirectory} and checks what it
     * printed: exit 0, {@code iterations} done, {@code closedPerIteration} outcomes each ended closed, none
     * otherwise, and no JVM crash file.
     */
    static void assertEveryCallEndedClosed(final List<String> worker, final ClusterDirectory dir,
        final Path workingDirectory, final int iterations, final int closedPerIteration)
        throws IOException, InterruptedException
    {
        final ChildCommand.Result result = ChildCommand.run(worker,
            Map.of("QNIX_DIR", dir.path().getParent().toString()), workingDirectory);
        System.out.println(result.output().lines().filter(l -> l.startsWith("RESULT")).findFirst().orElse(""));
        assertEquals(0, result.exit(), result.output());
        final Matcher counts = RESULT.matcher(result.output());
        assertTrue(counts.find(), result.output());
        assertEquals(iterations, Integer.parseInt(counts.group(1)));
        assertEquals(0, Integer.parseInt(counts.group(3)), result.output());
        assertEquals(iterations * closedPerIteration, Integer.parseInt(counts.group(2)), result.output());
        try (Stream<Path> files = Files.list(workingDirectory))
        {
            assertEquals(List.of(), files.toList(), "no JVM crash file");
        }
    }
}
