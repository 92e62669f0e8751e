package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;
import org.qnix.daemon.ClusterState;

/**
 * {@code cluster up} and {@code down} touch only what qnix created, and one {@code up} at a time
 * (issue 17, item 2). Each command runs as the user runs it: {@code qnix} in its own JVM, here on a
 * {@code $QNIX_DIR} of the test's own.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ClusterOwnershipTest
{
    /** A hang guard for one command, not a timing assertion. */
    private static final long COMMAND_TIMEOUT_MINUTES = 5;
    private static final String[] SMALL_CLUSTER = { "--torus", "2x1", "--firmware", "threads", "--host-mem", "64M" };

    @TempDir
    Path qnixDir;

    private final List<Process> commands = new ArrayList<>();
    private final List<Path> outputs = new ArrayList<>();

    /** A process killed while it held a cluster's lock leaves the file; `down` of the name removes it. */
    @Test
    void theLockFileOfAProcessThatDiedHoldingItGoesWithDown() throws Exception
    {
        final String name = "orphan";
        final ClusterDirectory dir = new ClusterDirectory(qnixDir, name);
        final Process holder = new ProcessBuilder("sleep", "0").start();
        holder.waitFor();
        Files.writeString(dir.lockFile(), "pid=" + holder.pid() + "\nstartMs=1\npurpose=UP\n", StandardCharsets.UTF_8);

        final Command down = run("cluster", "down", "--name", name);
        assertEquals(QnixCommand.OK, down.exit, down.output);
        assertTrue(down.output.contains("removed " + dir.lockFile() + ", left by a process that died holding it"),
            down.output);
        assertTrue(down.output.contains("no cluster '" + name + "': nothing to do"), down.output);
        assertFalse(Files.exists(dir.lockFile()), dir.lockFile() + " is still there");
    }

    @Test
    void aUserDirectoryWithTheClusterNameIsNeitherUsedNorRemoved() throws Exception
    {
        final String name = "mine";
        final ClusterDirectory dir = new ClusterDirectory(qnixDir, name);
        final Path notes = Files.createDirectories(dir.path()).resolve("notes.txt");
        Files.writeString(notes, "precious", StandardCharsets.UTF_8);
        // Even a file with one of qnix's names is the user's here.
        final Path sdram = Files.createDirectories(dir.nodeDirectory(new NicCoordinates(0, 0))).resolve("nic.sdram");
        Files.writeString(sdram, "mine too", StandardCharsets.UTF_8);
        try
        {
            final Command up = run(withSmallCluster("cluster", "up", "--name", name));
            assertEquals(QnixCommand.FAILED, up.exit, up.output);
            assertTrue(up.output.contains(dir.path() + " was not created by qnix") &&
                up.output.contains("not touching it"), up.output);

            final Command down = run("cluster", "down", "--name", name);
            assertEquals(QnixCommand.FAILED, down.exit, down.output);
            assertTrue(down.output.contains(dir.path() + " was not created by qnix") &&
                down.output.contains("not touching it"), down.output);

            assertEquals("precious", Files.readString(notes, StandardCharsets.UTF_8));
            assertEquals("mine too", Files.readString(sdram, StandardCharsets.UTF_8));
            assertEquals(List.of(dir.path()), list(qnixDir), "nothing else created, not even a lock file");
            assertEquals(List.of(dir.nodeDirectory(new NicCoordinates(0, 0)), notes), list(dir.path()));
        }
        finally
        {
            tearDown(dir);
        }
    }

    @Test
    void ofTwoConcurrentUpsOfOneNameExactlyOneSucceeds() throws Exception
    {
        final String name = "both";
        final ClusterDirectory dir = new ClusterDirectory(qnixDir, name);
        try
        {
            final Running first = start(withSmallCluster("cluster", "up", "--name", name));
            final Running second = start(withSmallCluster("cluster", "up", "--name", name));
            final Command a = first.finish();
            final Command b = second.finish();

            assertEquals(1, (QnixCommand.OK == a.exit ? 1 : 0) + (QnixCommand.OK == b.exit ? 1 : 0),
                "exactly one succeeds:\n" + a.output + "\n" + b.output);
            final Running winner = QnixCommand.OK == a.exit ? first : second;
            final Command lost = QnixCommand.OK == a.exit ? b : a;
            assertEquals(QnixCommand.FAILED, lost.exit, lost.output);
            // Which message depends on whether it asked while the other was still bringing it up.
            assertTrue(lost.output.contains("qnix: cluster '" + name + "' is being brought up by pid " +
                winner.process.pid()) || lost.output.contains("qnix: cluster '" + name + "' is already up"), lost.output);

            final Command status = run("cluster", "status", "--name", name);
            assertEquals(QnixCommand.OK, status.exit, status.output);
            assertTrue(status.output.contains("cluster '" + name + "': up"), status.output);
            assertTrue(ClusterState.inspect(dir).isLive());

            final Command down = run("cluster", "down", "--name", name);
            assertEquals(QnixCommand.OK, down.exit, down.output);
            assertFalse(Files.exists(dir.path()), dir.path() + " still exists");
        }
        finally
        {
            tearDown(dir);
        }
    }

    @Test
    void aStaleClusterLosesOnlyItsOwnFiles() throws Exception
    {
        final String name = "stale";
        final ClusterDirectory dir = new ClusterDirectory(qnixDir, name);
        try
        {
            final Command up = run(withSmallCluster("cluster", "up", "--name", name));
            assertEquals(QnixCommand.OK, up.exit, up.output);
            final long daemon = ClusterState.inspect(dir).properties().orElseThrow().daemonPid();
            ProcessHandle.of(daemon).orElseThrow().destroyForcibly();
            TestClusters.await("daemon dead", () -> TestClusters.isGone(daemon));
            final Path notes = dir.path().resolve("notes.txt");
            Files.writeString(notes, "precious", StandardCharsets.UTF_8);
            final NicCoordinates node = new NicCoordinates(1, 0);
            final Path dump = dir.nodeDirectory(node).resolve("dump.txt");
            Files.writeString(dump, "mine too", StandardCharsets.UTF_8);

            final Command status = run("cluster", "status", "--name", name);
            assertEquals(QnixCommand.FAILED, status.exit, status.output);
            assertTrue(status.output.contains("STALE"), status.output);

            final Command down = run("cluster", "down", "--name", name);
            assertEquals(QnixCommand.OK, down.exit, down.output);
            assertTrue(down.output.contains("was stale"), down.output);
            assertTrue(down.output.contains("left " + notes + ": not created by qnix"), down.output);
            assertTrue(down.output.contains("left " + dump + ": not created by qnix"), down.output);
            assertTrue(down.output.contains("left " + dir.path() + " in place"), down.output);
            assertEquals("precious", Files.readString(notes, StandardCharsets.UTF_8));
            assertEquals("mine too", Files.readString(dump, StandardCharsets.UTF_8));
            assertFalse(Files.exists(dir.propertiesFile()));
            assertFalse(Files.exists(dir.daemonLog()));
            assertFalse(Files.exists(dir.nodeDirectory(new NicCoordinates(0, 0))));
            assertEquals(List.of(dump), list(dir.nodeDirectory(node)));

            // Not reused while the user's files are in it, nor wiped.
            final Command again = run(withSmallCluster("cluster", "up", "--name", name));
            assertEquals(QnixCommand.FAILED, again.exit, again.output);
            assertTrue(again.output.contains(dir.path() + " still holds files qnix did not create"), again.output);
            assertEquals("precious", Files.readString(notes, StandardCharsets.UTF_8));

            // Once they are moved away, `down` finishes.
            Files.delete(notes);
            Files.delete(dump);
            final Command finish = run("cluster", "down", "--name", name);
            assertEquals(QnixCommand.OK, finish.exit, finish.output);
            assertFalse(Files.exists(dir.path()), finish.output);
        }
        finally
        {
            tearDown(dir);
        }
    }

    private static String[] withSmallCluster(final String... args)
    {
        final List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of(SMALL_CLUSTER));
        return all.toArray(new String[0]);
    }

    /** What one {@code qnix} command printed, and its exit code. */
    private record Command(int exit, String output)
    {
    }

    /** A {@code qnix} command started and not yet waited for. */
    private record Running(Process process, Path output)
    {
        Command finish() throws InterruptedException, IOException
        {
            if (!process.waitFor(COMMAND_TIMEOUT_MINUTES, TimeUnit.MINUTES))
            {
                process.destroyForcibly().waitFor();
                throw new AssertionError("qnix " + process.info().commandLine().orElse("") + " did not finish:\n" +
                    Files.readString(output, StandardCharsets.UTF_8));
            }
            return new Command(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        }
    }

    private Command run(final String... args) throws InterruptedException, IOException
    {
        return start(args).finish();
    }

    /** Starts {@code qnix ARGS} in a new JVM on this test's {@code $QNIX_DIR}, its output to a file. */
    private Running start(final String... args) throws IOException
    {
        final List<String> command = ChildCommand.qnix(args);
        // Outside $QNIX_DIR, which the test checks holds nothing else.
        final Path output = Files.createTempFile("qnix-command", ".out");
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(output.toFile());
        builder.environment().put("QNIX_DIR", qnixDir.toString());
        builder.environment().remove("QNIX_CLUSTER");
        outputs.add(output);
        final Process process = builder.start();
        commands.add(process);
        return new Running(process, output);
    }

    /**
     * Stops whatever the test started, whether it passed or not: the commands, then the cluster (a
     * directory qnix did not create is refused, and the temporary directory's removal takes it).
     */
    private void tearDown(final ClusterDirectory dir) throws InterruptedException, IOException
    {
        for (final Process process : commands)
        {
            process.destroyForcibly();
            process.waitFor(1, TimeUnit.MINUTES);
        }
        for (final Path output : outputs)
        {
            Files.deleteIfExists(output);
        }
        try
        {
            ClusterControl.down(dir, TestClusters.quiet());
        }
        catch (final IllegalStateException ex)
        {
            System.err.println("tearing down " + dir + ": " + ex.getMessage());
        }
        for (final ProcessHandle leftover : TestClusters.processesOf(dir))
        {
            leftover.destroyForcibly();
        }
        TestClusters.await("no process of " + dir + " left", () -> TestClusters.processesOf(dir).isEmpty());
    }

    private static List<Path> list(final Path directory) throws IOException
    {
        try (var entries = Files.list(directory))
        {
            return entries.sorted().toList();
        }
    }
}
