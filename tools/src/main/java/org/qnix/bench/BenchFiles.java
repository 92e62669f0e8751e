package org.qnix.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Scratch files and directories of the benchmarks: in {@code /dev/shm} when there is one, removed after. */
final class BenchFiles
{
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
        return base().resolve("qnix-bench-" + kind + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
    }

    /** Deletes a file or a directory tree, quietly. */
    static void delete(final Path path)
    {
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
