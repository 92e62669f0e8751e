package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ClusterDirectory#whyAClusterFile}: what an output file may not be, with the clusters' base
 * directory in a temporary directory ({@code qnix.dir}): in it, reached through links, or a second name
 * of a file in it.
 */
class ClusterFileCheckTest
{
    @TempDir
    Path temp;
    private Path clusters;
    private Path mapped;
    private String before;

    @BeforeEach
    void clustersInTemp() throws Exception
    {
        before = System.getProperty("qnix.dir");
        clusters = Files.createDirectory(temp.resolve("clusters"));
        System.setProperty("qnix.dir", clusters.toString());
        mapped = Files.writeString(Files.createDirectories(clusters.resolve("c/node-0-0")).resolve("nic.sdram"), "x");
    }

    @AfterEach
    void restore()
    {
        if (null == before)
        {
            System.clearProperty("qnix.dir");
        }
        else
        {
            System.setProperty("qnix.dir", before);
        }
    }

    @Test
    void aFileInTheClustersDirectoryOrReachedThroughLinksIsRefused() throws Exception
    {
        assertIn(mapped);
        assertIn(clusters.resolve("c/new.pcapng"));
        assertIn(Files.createSymbolicLink(temp.resolve("to-sdram"), mapped));
        // Dangling links: writing them would create the file where the last one points.
        final Path last = Files.createSymbolicLink(temp.resolve("last"), clusters.resolve("c/created"));
        assertIn(last);
        assertIn(Files.createSymbolicLink(temp.resolve("first"), last));
    }

    @Test
    void aSecondNameOfAFileOnTheClustersFileSystemIsRefused() throws Exception
    {
        final Path link = Files.createLink(temp.resolve("second-name"), mapped);
        final String why = ClusterDirectory.whyAClusterFile(link);
        assertTrue(null != why && why.startsWith("has other hard links on the file system of " + clusters), why);
    }

    @Test
    void anOrdinaryFileALinkLoopAndAMissingDirectoryAreNotClusterFiles() throws Exception
    {
        assertNull(ClusterDirectory.whyAClusterFile(temp.resolve("out.json")));
        assertNull(ClusterDirectory.whyAClusterFile(Files.writeString(temp.resolve("old.json"), "{}")));
        Files.createSymbolicLink(temp.resolve("a"), temp.resolve("b"));
        Files.createSymbolicLink(temp.resolve("b"), temp.resolve("a"));
        assertNull(ClusterDirectory.whyAClusterFile(temp.resolve("a")));
        assertNull(ClusterDirectory.whyAClusterFile(temp.resolve("no/such/dir/x")));
        assertNull(ClusterDirectory.whyAClusterFile(Path.of("/")));
    }

    private void assertIn(final Path file)
    {
        assertEquals("is in " + clusters + ", where the clusters' NICs map their files: write it elsewhere",
            ClusterDirectory.whyAClusterFile(file), file.toString());
    }
}
