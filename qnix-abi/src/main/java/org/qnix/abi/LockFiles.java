package org.qnix.abi;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Lock files that their holder deletes when it lets go (a cluster's {@code .NAME.lock}, a PCIComm
 * cid's), so that nothing is left behind. Another process may have opened such a file just before
 * its deletion and lock it just after: it then holds a lock on a file no one else sees, while a third
 * process locks a new file of the same name. So a lock counts only once the path is seen to name the
 * locked file, and otherwise the holder lets go and opens the path again.
 *
 * <p>The check may not open the file: POSIX record locks belong to the process, and closing any
 * descriptor of the file (a {@code Files.readString} of it, say) drops the lock just taken. So the path
 * is compared, by device and inode (a stat), with each of this JVM's open files in {@code /proc/self/fd}.
 *
 * <pre>{@code
 * FileChannel channel = FileChannel.open(path, CREATE, WRITE);
 * FileLock lock = channel.tryLock();
 * if (null != lock && !LockFiles.pathNamesOpenFile(path))
 * {
 *     channel.close();   // a file deleted meanwhile: open the path again
 * }
 * // ... and on release, while still holding the lock:
 * Files.deleteIfExists(path);
 * lock.release();
 * }</pre>
 */
public final class LockFiles
{
    private static final Path OPEN_FILES = Path.of("/proc/self/fd");

    private LockFiles()
    {
    }

    /**
     * @return whether the file {@code file} names now is one this JVM has open. The caller's channel
     * must be the only one this JVM has on that file (the callers keep a table of the locks they hold),
     * so that a true answer names the caller's channel.
     */
    public static boolean pathNamesOpenFile(final Path file) throws IOException
    {
        try (DirectoryStream<Path> descriptors = Files.newDirectoryStream(OPEN_FILES))
        {
            for (final Path descriptor : descriptors)
            {
                try
                {
                    if (Files.isSameFile(descriptor, file))
                    {
                        return true;
                    }
                }
                catch (final IOException ex)
                {
                    // The path is gone (deleted by the last holder), or a descriptor closed meanwhile.
                }
            }
        }
        return false;
    }
}
