package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.daemon.ClusterLock;
import org.qnix.daemon.ClusterState;

/**
 * A {@code qnix} command that ends before its time, as a user's Ctrl-C (here SIGTERM, which runs the
 * same shutdown hooks) or a {@code kill -9} ends it: an interrupted {@code cluster up} takes down what
 * it brought up, an interrupted {@code cluster down} finishes and leaves no lock file, and the ranks of
 * a {@code qnix run} whose launcher is killed exit and de-register.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class InterruptedCommandsTest
{
    /** Tries to interrupt a command in its window; a try that came too late (it had finished) is tried again. */
    private static final int TRIES = 5;

    @TempDir
    Path temp;

    @Test
    void anInterruptedClusterUpTakesDownWhatItBroughtUp() throws Exception
    {
        boolean landed = false;
        for (int attempt = 0; attempt < TRIES && !landed; attempt++)
        {
            final String name = TestClusters.uniqueName("u");
            final ClusterDirectory dir = ClusterDirectory.of(name);
            final Path output = temp.resolve("up-" + attempt + ".out");
            Process up = null;
            try
            {
                up = start(output, "cluster", "up", "--name", name, "--torus", "2x1", "--firmware", "threads",
                    "--sdram", "64M", "--host-mem", "64M");
                final Process running = up;
                // Its directory is made before its daemon starts: from here on it has something to take down.
                TestClusters.await("the cluster's directory", () -> !running.isAlive() || Files.exists(dir.path()));
                up.destroy();
                assertTrue(up.waitFor(2, TimeUnit.MINUTES), "the interrupted up ends");
                final String printed = Files.readString(output);
                if (ClusterState.inspect(dir).isLive())
                {
                    // It came up (and was kept) before the signal: a cluster up stays up.
                    assertFalse(printed.contains("interrupted: taking cluster"), printed);
                    continue;
                }
                landed = true;
                assertTrue(printed.contains("interrupted: taking cluster '" + name + "' down"), printed);
                assertNothingLeft(dir, printed);
            }
            finally
            {
                stop(up);
                TestClusters.down(dir);
            }
        }
        assertTrue(landed, "no interrupt of " + TRIES + " came while the cluster was being brought up");
    }

    @Test
    void anInterruptedClusterDownFinishesAndLeavesNoLockFile() throws Exception
    {
        boolean landed = false;
        for (int attempt = 0; attempt < TRIES && !landed; attempt++)
        {
            final String name = TestClusters.uniqueName("w");
            final ClusterDirectory dir = TestClusters.up(name, 2, 1, "threads");
            final Path output = temp.resolve("down-" + attempt + ".out");
            Process down = null;
            try
            {
                down = start(output, "cluster", "down", "--name", name);
                final Process running = down;
                TestClusters.await("the down to hold the cluster's lock", () ->
                    !running.isAlive() || ClusterLock.holder(dir).isPresent());
                if (!down.isAlive())
                {
                    continue;
                }
                down.destroy();
                landed = true;
                assertTrue(down.waitFor(2, TimeUnit.MINUTES), "the interrupted down ends");
                final String printed = Files.readString(output);
                assertTrue(printed.contains("cluster '" + name + "' is down"), printed);
                assertNothingLeft(dir, printed);
            }
            finally
            {
                stop(down);
                TestClusters.down(dir);
            }
        }
        assertTrue(landed, "no interrupt of " + TRIES + " came while the cluster was being taken down");
    }

    @Test
    void theRanksOfAKilledLauncherExitAndDeregister() throws Exception
    {
        final String name = TestClusters.uniqueName("k");
        final ClusterDirectory dir = TestClusters.up(name, 2, 1, "threads");
        final Path hold = Files.createFile(temp.resolve("hold.flag"));
        final Path output = temp.resolve("run.out");
        Process launcher = null;
        final List<ProcessHandle> ranks = new ArrayList<>();
        try
        {
            launcher = start(output, "run", "-n", "2", "--cluster", name, "--", "Hello", "--hold-while", hold.toString());
            final Process running = launcher;
            TestClusters.await("2 greetings", () -> !running.isAlive() ||
                TestClusters.read(output).lines().filter(line -> line.contains("Hello from")).count() == 2);
            assertTrue(launcher.isAlive(), TestClusters.read(output));
            for (final ClusterStatus.Process rank : ClusterStatus.read(dir).registered())
            {
                ranks.add(ProcessHandle.of(rank.osPid()).orElseThrow());
            }
            assertEquals(2, ranks.size(), TestClusters.read(output));

            launcher.destroyForcibly();
            assertTrue(launcher.waitFor(1, TimeUnit.MINUTES));
            TestClusters.await("the ranks to exit", () -> ranks.stream().allMatch(TestClusters::isGone));
            TestClusters.await("no process registered", () -> ClusterStatus.read(dir).processes().isEmpty());
        }
        finally
        {
            Files.deleteIfExists(hold);
            stop(launcher);
            ranks.forEach(ProcessHandle::destroyForcibly);
            TestClusters.down(dir);
        }
    }

    /** The cluster is gone whole: its directory, its lock file and its JVMs. */
    private static void assertNothingLeft(final ClusterDirectory dir, final String printed)
    {
        assertFalse(Files.exists(dir.path()), dir.path() + " still exists:\n" + printed);
        assertFalse(Files.exists(dir.lockFile()), dir.lockFile() + " still exists:\n" + printed);
        assertEquals(List.of(), TestClusters.processesOf(dir), "no daemon or firmware left");
    }

    /** {@code qnix ARGS} in a JVM of its own, its output in {@code output}. */
    private static Process start(final Path output, final String... args) throws IOException
    {
        return new ProcessBuilder(ChildCommand.qnix(args)).redirectErrorStream(true).redirectOutput(output.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
    }

    private static void stop(final Process process) throws InterruptedException
    {
        if (null != process && process.isAlive())
        {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }
}
