package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;

/**
 * Two JVMs take and release one cluster's lock as fast as they can while each release deletes the lock
 * file (there is no cluster directory): a JVM that locked the file just deleted must not believe it
 * holds the lock while the other locks the new one. Each holder proves it is alone by creating a
 * directory that must not exist, and removes it before it lets go. The window in which a JVM opens the
 * file just before its deletion is narrow; qnix-abi's LockFilesTest pins how such a JVM tells.
 */
class ClusterLockRaceTest
{
    private static final int ITERATIONS = 3000;
    private static final int OVERLAP = 3;

    @TempDir
    Path base;

    @Test
    void twoProcessesNeverHoldTheLockAtOnce() throws Exception
    {
        final List<Process> children = new ArrayList<>();
        try
        {
            for (int i = 0; i < 2; i++)
            {
                children.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                    Contender.class.getName(), base.toString(), String.valueOf(ITERATIONS))
                    .redirectErrorStream(true).redirectOutput(base.resolve("contender-" + i + ".log").toFile()).start());
            }
            // Both JVMs are started before either contends, so that their loops overlap.
            Thread.sleep(1000);
            Files.createFile(base.resolve("go"));
            for (final Process child : children)
            {
                assertTrue(child.waitFor(5, TimeUnit.MINUTES), "a contender did not finish");
                assertEquals(0, child.exitValue(), "exit " + OVERLAP + " is two holders at once; logs: " + logs());
            }
            System.out.println(logs());
            assertTrue(Files.notExists(new ClusterDirectory(base, "race").lockFile()));
        }
        finally
        {
            children.forEach(Process::destroyForcibly);
        }
    }

    private String logs() throws IOException
    {
        final StringBuilder text = new StringBuilder();
        for (int i = 0; i < 2; i++)
        {
            text.append('\n').append(Files.readString(base.resolve("contender-" + i + ".log")));
        }
        return text.toString();
    }

    /** A JVM taking the lock {@code ITERATIONS} times, as far as the other lets it. */
    public static final class Contender
    {
        public static void main(final String[] args) throws IOException, InterruptedException
        {
            final ClusterDirectory dir = new ClusterDirectory(Path.of(args[0]), "race");
            final Path alone = Path.of(args[0], "holder-inside");
            while (Files.notExists(Path.of(args[0], "go")))
            {
                Thread.sleep(1);
            }
            int held = 0;
            int busy = 0;
            for (int i = 0; i < Integer.parseInt(args[1]); i++)
            {
                final ClusterLock lock;
                try
                {
                    lock = ClusterLock.acquire(dir, ClusterLock.Purpose.UP);
                }
                catch (final IllegalStateException refused)
                {
                    busy++;
                    continue;
                }
                try (lock)
                {
                    try
                    {
                        Files.createDirectory(alone);
                    }
                    catch (final FileAlreadyExistsException ex)
                    {
                        System.err.println("two holders at once, iteration " + i);
                        // Not System.exit: ClusterLock's shutdown hook would wait for this thread's lock.
                        Runtime.getRuntime().halt(OVERLAP);
                    }
                    Thread.onSpinWait();
                    Files.delete(alone);
                    held++;
                }
            }
            System.out.println("contender " + ProcessHandle.current().pid() + " held the lock " + held + " times and was refused " + busy + " times");
        }
    }
}
