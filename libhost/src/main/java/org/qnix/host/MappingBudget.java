package org.qnix.host;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * How many memory mappings this JVM's buffers may hold (issue 17, item 7). The kernel allows a process
 * {@code /proc/sys/vm/max_map_count} mappings (65,530 by default); each buffer is one mapping per run
 * of physically contiguous pages, so a scattered 4 KiB buffer is one, and a 2 MiB one up to 512. A
 * program that allocated buffers until refused reached the kernel's limit first, and then the JVM
 * itself could not map memory (a heap expansion, a thread stack) and died with a fatal error. So the
 * library counts its mappings and refuses, with a {@link HostMemoryException}, the one that would take it
 * past the limit less what the JVM had mapped when the first buffer was made and a margin of
 * {@value #JVM_MARGIN} for what it maps later.
 *
 * <p>The system property {@value #LIMIT_PROPERTY} sets the limit outright (a number of mappings), for
 * tests and for programs that map much else.
 *
 * <p>A freed buffer's range is retired ({@link RetiredMemory}), not unmapped: it stays mappings of the
 * process until its last view is collected, and is counted until then. An acquire that would pass the
 * limit while retired ranges are counted asks for a collection and waits (at most
 * {@link #COLLECTION_WAIT_MS}) for them to be given back before it refuses.
 *
 * <pre>{@code
 * MappingBudget.acquire(runs, "a buffer of 8 scattered pages");   // throws HostMemoryException past the limit
 * // ... mmap ...
 * MappingBudget.retired(runs);                                     // retired: still mappings
 * MappingBudget.release(runs, true);                               // its last view collected: unmapped
 * }</pre>
 */
final class MappingBudget
{
    /** System property: the number of mappings the library's buffers may hold in this JVM. */
    static final String LIMIT_PROPERTY = "qnix.maxMappings";
    /** Mappings left for the JVM's own later needs: threads, heap and code cache growth, malloc arenas. */
    static final int JVM_MARGIN = 4096;
    /** How long an acquire waits for retired ranges to be collected before it refuses. */
    static final long COLLECTION_WAIT_MS = 2_000;
    private static final Path MAX_MAP_COUNT = Path.of("/proc/sys/vm/max_map_count");
    private static final Path OWN_MAPS = Path.of("/proc/self/maps");

    private static long limit = -1;
    private static String limitSource;
    private static long held;
    /** Of {@link #held}: retired ranges, unmapped once their last view is collected. */
    private static long retiredHeld;

    private MappingBudget()
    {
    }

    /**
     * Counts {@code mappings} more, about to be made for {@code what}.
     *
     * @throws HostMemoryException if they would take the library past its limit; nothing is counted then.
     */
    static synchronized void acquire(final long mappings, final String what)
    {
        if (limit < 0)
        {
            computeLimit();
        }
        if (held + mappings > limit && retiredHeld > 0)
        {
            awaitCollection(mappings);
        }
        if (held + mappings > limit)
        {
            throw new HostMemoryException("cannot map " + what + ": it needs " + mappings + " memory mapping(s) and this " +
                "process's buffers already hold " + held + " of the " + limit + " allowed (" + limitSource + "). " +
                "Free buffers, or use fewer and larger ones; contiguous pages take one mapping per buffer");
        }
        held += mappings;
    }

    /** Gives back what {@link #acquire} counted, once the mappings are gone. */
    static synchronized void release(final long mappings)
    {
        release(mappings, false);
    }

    /**
     * Gives back what {@link #acquire} counted, once the mappings are gone.
     *
     * @param wasRetired whether {@link #retired} counted them as retired.
     */
    static synchronized void release(final long mappings, final boolean wasRetired)
    {
        held = Math.max(0, held - mappings);
        if (wasRetired)
        {
            retiredHeld = Math.max(0, retiredHeld - mappings);
        }
        MappingBudget.class.notifyAll();
    }

    /** The mappings were retired: still counted, given back by {@code release(mappings, true)} when collected. */
    static synchronized void retired(final long mappings)
    {
        retiredHeld += mappings;
    }

    /** Asks for a collection and waits, releasing the lock, until {@code mappings} fit or no retired one is left. */
    private static void awaitCollection(final long mappings)
    {
        System.gc();
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(COLLECTION_WAIT_MS);
        long leftNs;
        while (held + mappings > limit && retiredHeld > 0 && (leftNs = deadline - System.nanoTime()) > 0)
        {
            try
            {
                MappingBudget.class.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(leftNs)));
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** @return the mappings counted now. */
    static synchronized long held()
    {
        return held;
    }

    /** @return of {@link #held()}, the retired ones not collected yet. */
    static synchronized long retiredHeld()
    {
        return retiredHeld;
    }

    private static void computeLimit()
    {
        final String property = System.getProperty(LIMIT_PROPERTY);
        if (null != property && !property.isBlank())
        {
            try
            {
                limit = Math.max(0, Long.parseLong(property.trim()));
                limitSource = "-D" + LIMIT_PROPERTY + "=" + property.trim();
                return;
            }
            catch (final NumberFormatException ex)
            {
                throw new HostMemoryException("-D" + LIMIT_PROPERTY + "=" + property + " is not a number of mappings");
            }
        }
        final long kernel = readLong(MAX_MAP_COUNT, 65530);
        final long jvm = countLines(OWN_MAPS);
        limit = Math.max(0, kernel - jvm - JVM_MARGIN);
        limitSource = "vm.max_map_count " + kernel + " less the JVM's " + jvm + " mappings and a margin of " + JVM_MARGIN;
    }

    private static long readLong(final Path file, final long otherwise)
    {
        // Not Files.readString: it reads a procfs file, whose size says 0, as its first byte only.
        try (BufferedReader reader = Files.newBufferedReader(file))
        {
            final String line = reader.readLine();
            return null == line ? otherwise : Long.parseLong(line.trim());
        }
        catch (final IOException | NumberFormatException ex)
        {
            return otherwise;
        }
    }

    private static long countLines(final Path file)
    {
        try (Stream<String> lines = Files.lines(file))
        {
            return lines.count();
        }
        catch (final IOException | RuntimeException ex)
        {
            // Not Linux: a JVM of a few thousand mappings is a generous guess.
            return 2048;
        }
    }
}
