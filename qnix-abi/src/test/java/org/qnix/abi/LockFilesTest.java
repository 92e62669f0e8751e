package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a process sees that opened a lock file just before its holder deleted it on release. */
class LockFilesTest
{
    @TempDir
    Path base;

    @Test
    void aLockTakenOnADeletedFileIsToldFromOneOnThePathsFile() throws IOException
    {
        final Path file = base.resolve(".t.lock");
        Files.createFile(file);
        try (FileChannel opened = FileChannel.open(file, StandardOpenOption.WRITE))
        {
            assertTrue(LockFiles.pathNamesOpenFile(file));
            Files.delete(file);
            assertFalse(LockFiles.pathNamesOpenFile(file), "deleted");
            Files.createFile(file);
            assertFalse(LockFiles.pathNamesOpenFile(file), "deleted, and another file of the same name made");
        }
    }
}
