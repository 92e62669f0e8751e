package org.qnix.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Scratch files and directories of the benchmarks: in {@code /dev/shm} when there is one, removed after,
 * and by a shutdown hook if the run is interrupted first (an Aeron directory alone holds about 200 MiB
 * of {@code /dev/shm}).
 */
final class BenchFiles
{
    /** Made by {@link #newFile} and not deleted yet. */
    private static final Set<Path> LIVE = ConcurrentHashMap.newKeySet();

    static
    {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(BenchFiles::delete), "qnix-bench-files"));
    }

    private BenchFiles()
    {
    }

    static Path base()
    {
        final Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    /** @return a path that does not exist yet, unique to this JVM and {@code kind}. */
    static Path newFile(final String kind)
    {
        final Path path = base().resolve("qnix-bench-" + kind + "-" + ProcessHandle.current().pid() + "-" +
            System.nanoTime());
        LIVE.add(path);
        return path;
    }

    /** Deletes a file or a directory tree, quietly. */
    static void delete(final Path path)
    {
        LIVE.remove(path);
        if (!Files.exists(path))
        {
            return;
        }
        try (Stream<Path> walk = Files.walk(path))
        {
            for (final Path p : walk.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(p);
            }
        }
        catch (final IOException ignore)
        {
            // Best effort: the benchmark's result stands.
        }
    }
}
