package org.qnix.tools;

import java.nio.file.Path;

import org.qnix.abi.MappedFile;

/**
 * Creates one cluster file the way the daemon does ({@link MappedFile#create}) and writes its last
 * byte, for {@link ClusterSpaceTest} to run in a file system too small for it: it prints the refusal,
 * where a sparse file would have been created and the write killed the JVM with SIGBUS.
 *
 * <pre>
 * java ... org.qnix.tools.ReserveFile FILE BYTES
 * </pre>
 */
public final class ReserveFile
{
    private ReserveFile()
    {
    }

    public static void main(final String[] args)
    {
        final Path file = Path.of(args[0]);
        final long length = Long.parseLong(args[1]);
        try (MappedFile mapped = MappedFile.create(file, length))
        {
            mapped.buffer().putByte(mapped.buffer().capacity() - 1, (byte)1);
            System.out.println("created " + file);
        }
        catch (final IllegalStateException ex)
        {
            System.out.println("refused: " + ex.getMessage());
        }
    }
}
