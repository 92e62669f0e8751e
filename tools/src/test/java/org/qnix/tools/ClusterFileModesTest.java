package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;

/**
 * The files and directories of a cluster are its owner's only, 0600 and 0700, or its group's too with
 * {@code --shared-with-group}, 0660 and 0770, whatever the umask of whoever runs {@code cluster up}
 * (issue 17, item 8). {@code cluster up} runs as a user runs it, in its own JVM, under umask 000.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ClusterFileModesTest
{
    @TempDir
    Path qnixDir;

    @Test
    void underUmask000EveryFileIsTheOwnersOnly() throws Exception
    {
        assertModes(false, "rw-------", "rwx------");
    }

    @Test
    void sharedWithGroupUnderUmask000EveryFileIsTheGroupsToo() throws Exception
    {
        assertModes(true, "rw-rw----", "rwxrwx---");
    }

    private void assertModes(final boolean shared, final String file, final String directory) throws Exception
    {
        final String name = shared ? "shared" : "mine";
        final ClusterDirectory dir = new ClusterDirectory(qnixDir, name);
        try
        {
            final List<String> up = ChildCommand.qnix("cluster", "up", "--name", name, "--torus", "2x1",
                "--firmware", "processes", "--host-mem", "64M");
            if (shared)
            {
                up.add("--shared-with-group");
            }
            final ChildCommand.Result result = ChildCommand.run(ChildCommand.shell("umask 000; exec \"$@\"", up),
                Map.of("QNIX_DIR", qnixDir.toString()), null);
            assertEquals(QnixCommand.OK, result.exit(), result.output());

            final Map<String, String> expected = new TreeMap<>();
            final Map<String, String> actual = new TreeMap<>();
            try (Stream<Path> tree = Files.walk(dir.path()))
            {
                for (final Path path : tree.toList())
                {
                    final boolean isDirectory = Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS);
                    expected.put(path.toString(), isDirectory ? directory : file);
                    actual.put(path.toString(), mode(path));
                }
            }
            // Each of them is there: a file the walk did not see would not be checked.
            for (final NicCoordinates node : List.of(new NicCoordinates(0, 0), new NicCoordinates(1, 0)))
            {
                for (final Path each : List.of(dir.nicSdram(node), dir.hostMemory(node), dir.rxFifo(node),
                    dir.counters(node), dir.driverSocket(node), dir.firmwareLog(node)))
                {
                    assertTrue(actual.containsKey(each.toString()), each + " missing: " + actual);
                }
            }
            for (final Path each : List.of(dir.markerFile(), dir.propertiesFile(), dir.daemonLog()))
            {
                assertTrue(actual.containsKey(each.toString()), each + " missing: " + actual);
            }
            assertEquals(expected, actual);
            // The lock file beside the directory is the owner's in either case: only `up` and `down` write it.
            assertEquals("rw-------", mode(dir.lockFile()));
        }
        finally
        {
            ClusterControl.down(dir, TestClusters.quiet());
            TestClusters.await("no process of " + dir + " left", () -> TestClusters.processesOf(dir).isEmpty());
        }
    }

    private static String mode(final Path path) throws IOException
    {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }
}
