package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ProcessStartTicks;

/**
 * One holder at a time, named to the others; the lock file outlives the lock only while the cluster's
 * directory exists (how a lock on a deleted file is told: qnix-abi's LockFilesTest). Between processes the same is shown by ClusterLockRaceTest and by the tools
 * module's ClusterOwnershipTest, with two real {@code cluster up}.
 */
class ClusterLockTest
{
    @TempDir
    Path base;

    @Test
    void aSecondHolderIsRefusedWithTheFirstOnesPid() throws IOException
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "t");
        final long self = ProcessHandle.current().pid();
        try (ClusterLock lock = ClusterLock.acquire(dir, ClusterLock.Purpose.UP))
        {
            final IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> ClusterLock.acquire(dir, ClusterLock.Purpose.DOWN));
            assertTrue(refused.getMessage().startsWith("cluster 't' is being brought up by pid " + self),
                refused.getMessage());
            assertTrue(refused.getMessage().endsWith("not touching it"), refused.getMessage());
            assertEquals(self, ClusterLock.holder(dir).orElseThrow().pid());
            // Taking the lock touches nothing of the cluster's: the directory is not even created.
            assertFalse(Files.exists(dir.path()));
        }
        assertTrue(ClusterLock.holder(dir).isEmpty());
        assertFalse(Files.exists(dir.lockFile()), "no cluster directory: the lock file goes with the lock");

        try (ClusterLock again = ClusterLock.acquire(dir, ClusterLock.Purpose.DOWN))
        {
            assertEquals(ClusterLock.Purpose.DOWN, ClusterLock.holder(dir).orElseThrow().purpose());
        }
    }

    /**
     * A lock file naming a live process: its holder by its start in clock ticks, however far the clock
     * moved its wall-clock start; a process given that pid later (other ticks) is no holder.
     */
    @Test
    void theHolderIsToldByItsStartTicksNotItsWallClockStart() throws Exception
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "t");
        final Process holder = new ProcessBuilder("sleep", "600").start();
        try
        {
            final long startMs = holder.info().startInstant().map(Instant::toEpochMilli).orElseThrow();
            final long ticks = ProcessStartTicks.of(holder.pid());
            Files.writeString(dir.lockFile(), ClusterLock.format(
                new ClusterLock.Holder(holder.pid(), startMs - 3_600_000L, ticks, ClusterLock.Purpose.UP)));
            assertEquals(holder.pid(), ClusterLock.holder(dir).orElseThrow().pid(), "the clock moved an hour");

            Files.writeString(dir.lockFile(), ClusterLock.format(
                new ClusterLock.Holder(holder.pid(), startMs, ticks - 1, ClusterLock.Purpose.UP)));
            assertTrue(ClusterLock.holder(dir).isEmpty(), "another process with that pid");
        }
        finally
        {
            holder.destroyForcibly().waitFor();
        }
    }

    @Test
    void theLockFileStaysEmptyWhileTheClusterDirectoryExists() throws IOException
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "t");
        try (ClusterLock lock = ClusterLock.acquire(dir, ClusterLock.Purpose.UP))
        {
            Files.createDirectories(dir.path());
        }
        assertTrue(Files.exists(dir.lockFile()), "the cluster is up: its lock file stays");
        assertEquals(0, Files.size(dir.lockFile()));

        try (ClusterLock lock = ClusterLock.acquire(dir, ClusterLock.Purpose.DOWN))
        {
            Files.delete(dir.path());
        }
        assertFalse(Files.exists(dir.lockFile()), "the cluster is down: nothing of it is left");
    }

    @Test
    void aThreadOfTheSameJvmCanWaitForTheHolderToFinish() throws Exception
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "t");
        final ClusterLock lock = ClusterLock.acquire(dir, ClusterLock.Purpose.UP);
        final boolean[] released = new boolean[1];
        final Thread waiter = new Thread(() ->
        {
            try
            {
                released[0] = ClusterLock.awaitReleasedHere(dir, 600_000);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        });
        try
        {
            waiter.start();
            lock.close();
            waiter.join(600_000);
            assertTrue(released[0]);
        }
        finally
        {
            lock.close();
            waiter.interrupt();
        }
        assertTrue(ClusterLock.awaitReleasedHere(dir, 0));
    }

    @Test
    void locksOfDifferentClustersAreIndependent()
    {
        final ClusterDirectory a = new ClusterDirectory(base, "a");
        final ClusterDirectory b = new ClusterDirectory(base, "b");
        try (ClusterLock first = ClusterLock.acquire(a, ClusterLock.Purpose.UP);
            ClusterLock second = ClusterLock.acquire(b, ClusterLock.Purpose.UP))
        {
            assertTrue(ClusterLock.holder(a).isPresent() && ClusterLock.holder(b).isPresent());
        }
    }
}
