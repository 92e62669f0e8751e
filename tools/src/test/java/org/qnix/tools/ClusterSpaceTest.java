package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;

/**
 * {@code cluster up} refuses sizes its file system cannot hold before it starts anything, naming them,
 * and a cluster file that does not fit is an error, not a SIGBUS later (issue 17, item 7). The small
 * file system is a 32 MiB tmpfs mounted in a mount namespace of the command's own ({@code unshare -m},
 * root only), so it goes away with the command; without root, the check is shown against the free
 * space of {@code $QNIX_DIR} itself.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ClusterSpaceTest
{
    private static final String UNSHARE = "/usr/bin/unshare";
    /** Mounts a 32 MiB tmpfs on $QNIX_DIR, runs the command, then lists what it left there. */
    private static final String IN_SMALL_TMPFS = "mount -t tmpfs -o size=32m qnix-test \"$QNIX_DIR\" || exit 99; " +
        "\"$@\"; code=$?; echo \"left in QNIX_DIR: [$(ls -A \"$QNIX_DIR\")]\"; exit $code";

    @TempDir
    Path qnixDir;

    @Test
    void upRefusesAClusterLargerThanASmallTmpfsBeforeStartingAnything() throws Exception
    {
        assumeSmallTmpfs();
        final ChildCommand.Result up = ChildCommand.run(withQnix(IN_SMALL_TMPFS,
            "cluster", "up", "--name", "big", "--torus", "2x1", "--firmware", "threads", "--host-mem", "64M"),
            Map.of("QNIX_DIR", qnixDir.toString()), null);
        assertEquals(QnixCommand.BAD_ARGUMENT, up.exit(), up.output());
        assertTrue(up.output().contains("qnix: cluster 'big' needs 2 nodes x (64 MiB NIC SDRAM (--sdram) + " +
            "64 MiB host memory (--host-mem) + ") && up.output().contains(" in " + qnixDir + ", but its file system " +
            "(tmpfs) has only 32 MiB (33554432 bytes) free"), up.output());
        assertTrue(up.output().contains("left in QNIX_DIR: []"), "nothing created, not even a lock file:\n" + up.output());
        assertTrue(TestClusters.processesOf(new ClusterDirectory(qnixDir, "big")).isEmpty(), "no daemon started");
    }

    @Test
    void aClusterFileThatDoesNotFitIsRefusedNotMappedSparse() throws Exception
    {
        assumeSmallTmpfs();
        final Path file = qnixDir.resolve("host.mem");
        final ChildCommand.Result reserve = ChildCommand.run(withJava(IN_SMALL_TMPFS,
            ReserveFile.class.getName(), file.toString(), Long.toString(64L << 20)), Map.of("QNIX_DIR", qnixDir.toString()),
            null);
        assertEquals(0, reserve.exit(), reserve.output());
        assertTrue(reserve.output().contains("refused: no room for " + file + ": its file system cannot hold another " +
            "64 MiB (67108864 bytes)"), reserve.output());
    }

    @Test
    void upRefusesAClusterLargerThanTheFreeSpaceOfQnixDir() throws Exception
    {
        final Path base = ClusterDirectory.baseDirectory();
        Path existing = base.toAbsolutePath();
        while (!Files.exists(existing))
        {
            existing = existing.getParent();
        }
        final FileStore store = Files.getFileStore(existing);
        final long perNode = (1L << 30) + (64L << 20);
        final long nodes = store.getUsableSpace() / perNode + 1;
        assumeTrue(nodes <= 255, "$QNIX_DIR has more room than a 255x1 torus of 1 GiB nodes takes");

        final String name = TestClusters.uniqueName("space");
        final CliResult result = CliResult.run("cluster", "up", "--name", name, "--torus", nodes + "x1",
            "--firmware", "threads", "--host-mem", "1G");
        assertEquals(QnixCommand.BAD_ARGUMENT, result.exit, result.out + result.err);
        assertTrue(result.err.contains("qnix: cluster '" + name + "' needs " + nodes + " nodes x (64 MiB NIC SDRAM " +
            "(--sdram) + 1 GiB host memory (--host-mem) + ") && result.err.contains("free: choose a smaller --sdram, " +
            "--host-mem or --torus"), result.err);
        final ClusterDirectory dir = ClusterDirectory.of(name);
        assertFalse(Files.exists(dir.path()), "nothing created");
        assertFalse(Files.exists(dir.lockFile()), "not even a lock file");
    }

    private static List<String> withQnix(final String script, final String... args)
    {
        final List<String> command = new ArrayList<>(List.of(UNSHARE, "-m"));
        command.addAll(ChildCommand.shell(script, ChildCommand.qnix(args)));
        return command;
    }

    private static List<String> withJava(final String script, final String mainClass, final String... args)
    {
        final List<String> java = ChildCommand.java(mainClass);
        java.addAll(List.of(args));
        final List<String> command = new ArrayList<>(List.of(UNSHARE, "-m"));
        command.addAll(ChildCommand.shell(script, java));
        return command;
    }

    /** Root and unshare: a tmpfs can be mounted in a mount namespace of the command's own. */
    private void assumeSmallTmpfs() throws Exception
    {
        assumeTrue(ChildCommand.executable(UNSHARE), "no " + UNSHARE);
        assumeTrue(ChildCommand.isRoot(), "not root: cannot mount a small tmpfs");
        final ChildCommand.Result probe = ChildCommand.run(List.of(UNSHARE, "-m", "/bin/sh", "-c", IN_SMALL_TMPFS, "sh",
            "/bin/true"), Map.of("QNIX_DIR", qnixDir.toString()), null);
        assumeTrue(0 == probe.exit(), "cannot mount a tmpfs here: " + probe.output());
    }
}
