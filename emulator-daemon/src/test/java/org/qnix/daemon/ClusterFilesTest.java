package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.NicCoordinates;

/**
 * Only what qnix created is removed: a marked directory's files by name, never a tree, never a
 * directory without the marker (issue 17, item 2).
 */
class ClusterFilesTest
{
    @TempDir
    Path base;

    @Test
    void aClusterCreatedByQnixIsRemovedCompletely() throws IOException
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "t");
        ClusterFiles.create(dir);
        writeClusterFiles(dir, 2);
        assertTrue(ClusterFiles.isMarked(dir));
        assertTrue(Files.readString(dir.markerFile()).startsWith(ClusterFiles.MARKER_FORMAT + "\n"));

        final List<String> report = ClusterFiles.remove(dir);

        assertEquals(List.of("removed " + dir.path()), report);
        assertEquals(List.of(), list(base));
    }

    @Test
    void aDirectoryWithoutTheMarkerIsNotTouched() throws IOException
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "mine");
        // The user's directory even holds files with qnix's names.
        writeClusterFiles(dir, 1);
        Files.writeString(dir.path().resolve("notes.txt"), "keep me", StandardCharsets.UTF_8);
        final List<Path> before = list(dir.path());

        assertFalse(ClusterFiles.isMarked(dir));
        assertEquals(ClusterState.Kind.FOREIGN, ClusterState.inspect(dir).kind());
        final List<String> report = ClusterState.inspect(dir).cleanUp();

        assertEquals(1, report.size(), report.toString());
        assertTrue(report.get(0).contains(dir.path() + " was not created by qnix") &&
            report.get(0).endsWith("not touching it"), report.toString());
        assertEquals(before, list(dir.path()));
        assertEquals("keep me", Files.readString(dir.path().resolve("notes.txt")));
        assertThrows(IllegalStateException.class, () -> ClusterFiles.createOrCheck(dir, false));
        assertThrows(IllegalStateException.class, () -> ClusterFiles.create(dir));
        assertEquals(before, list(dir.path()));
    }

    @Test
    void aMarkerFileThatIsNotQnixsDoesNotCount() throws IOException
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "mine");
        Files.createDirectories(dir.path());
        Files.writeString(dir.markerFile(), "my own notes\n", StandardCharsets.UTF_8);

        assertFalse(ClusterFiles.isMarked(dir));
        assertTrue(ClusterFiles.remove(dir).get(0).endsWith("not touching it"));
        assertTrue(Files.exists(dir.markerFile()));
    }

    @Test
    void aSymbolicLinkWithTheClusterNameIsNotFollowed() throws IOException
    {
        final ClusterDirectory real = new ClusterDirectory(base, "real");
        ClusterFiles.create(real);
        writeClusterFiles(real, 1);
        final ClusterDirectory link = new ClusterDirectory(base, "link");
        Files.createSymbolicLink(link.path(), real.path());

        assertEquals(ClusterState.Kind.FOREIGN, ClusterState.inspect(link).kind());
        assertTrue(ClusterFiles.remove(link).get(0).endsWith("not touching it"));
        assertTrue(Files.exists(real.nicSdram(new NicCoordinates(0, 0))));
    }

    @Test
    void filesQnixDidNotCreateAreLeftAndReportedWithTheirDirectories() throws IOException
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "t");
        ClusterFiles.create(dir);
        writeClusterFiles(dir, 2);
        final Path notes = dir.path().resolve("notes.txt");
        final NicCoordinates node = new NicCoordinates(1, 0);
        final Path dump = dir.nodeDirectory(node).resolve("dump.bin");
        final Path elsewhere = Files.createDirectory(base.resolve("elsewhere"));
        Files.writeString(elsewhere.resolve("nic.sdram"), "not a NIC", StandardCharsets.UTF_8);
        final Path linkedNode = dir.path().resolve("node-9-9");
        Files.createSymbolicLink(linkedNode, elsewhere);
        Files.writeString(notes, "keep me", StandardCharsets.UTF_8);
        Files.writeString(dump, "mine too", StandardCharsets.UTF_8);

        final List<String> report = ClusterFiles.remove(dir);

        assertTrue(report.contains("left " + notes + ": not created by qnix"), report.toString());
        assertTrue(report.contains("left " + dump + ": not created by qnix"), report.toString());
        assertTrue(report.contains("left " + linkedNode + ": not created by qnix"), report.toString());
        assertTrue(report.contains("left " + dir.path() + " in place: it holds files qnix did not create"),
            report.toString());
        assertEquals("keep me", Files.readString(notes));
        assertEquals("mine too", Files.readString(dump));
        assertEquals("not a NIC", Files.readString(elsewhere.resolve("nic.sdram")));
        // qnix's own files are gone, and the node directory that held only them.
        assertEquals(List.of(dump), list(dir.nodeDirectory(node)));
        assertFalse(Files.exists(dir.nodeDirectory(new NicCoordinates(0, 0))));
        assertFalse(Files.exists(dir.propertiesFile()));
        assertFalse(Files.exists(dir.daemonLog()));
        // The marker stays: once the user's files are moved away, a second removal finishes.
        assertTrue(ClusterFiles.isMarked(dir));
        assertEquals(ClusterState.Kind.STALE, ClusterState.inspect(dir).kind());

        Files.delete(notes);
        Files.delete(dump);
        Files.delete(linkedNode);
        assertEquals(List.of("removed " + dir.path()), ClusterFiles.remove(dir));
        assertEquals(List.of(elsewhere), list(base));
    }

    @Test
    void aFailedStartKeepsItsLogAndState() throws IOException
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "t");
        ClusterFiles.create(dir);
        writeClusterFiles(dir, 1);

        assertEquals(List.of(), ClusterFiles.removeAllButLog(dir));

        assertEquals(List.of(dir.markerFile(), dir.propertiesFile(), dir.daemonLog()), list(dir.path()));
        assertEquals(List.of("removed " + dir.path()), ClusterFiles.remove(dir));
    }

    @Test
    void aDirectoryBearingTheNameOfAQnixFileIsNotRemoved() throws IOException
    {
        final ClusterDirectory dir = new ClusterDirectory(base, "t");
        ClusterFiles.create(dir);
        Files.createDirectories(dir.daemonLog().resolve("inside"));

        final List<String> report = ClusterFiles.remove(dir);

        assertTrue(report.contains("left " + dir.daemonLog() + ": not created by qnix"), report.toString());
        assertTrue(Files.isDirectory(dir.daemonLog().resolve("inside")));
    }

    /** Every file a cluster of {@code nodes} nodes in a row has, with some content. */
    private static void writeClusterFiles(final ClusterDirectory dir, final int nodes) throws IOException
    {
        Files.createDirectories(dir.path());
        Files.writeString(dir.propertiesFile(), "state=up\n", StandardCharsets.UTF_8);
        Files.writeString(ClusterProperties.temporaryFile(dir.propertiesFile()), "state=up\n", StandardCharsets.UTF_8);
        Files.writeString(dir.daemonLog(), "log\n", StandardCharsets.UTF_8);
        for (int x = 0; x < nodes; x++)
        {
            final NicCoordinates node = new NicCoordinates(x, 0);
            Files.createDirectories(dir.nodeDirectory(node));
            for (final String name : ClusterDirectory.NODE_FILES)
            {
                Files.writeString(dir.nodeDirectory(node).resolve(name), name, StandardCharsets.UTF_8);
            }
        }
    }

    private static List<Path> list(final Path directory) throws IOException
    {
        try (var entries = Files.list(directory))
        {
            return entries.filter(p -> Files.exists(p, LinkOption.NOFOLLOW_LINKS)).sorted().toList();
        }
    }
}
