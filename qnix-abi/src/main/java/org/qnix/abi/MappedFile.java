package org.qnix.abi;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A memory-mapped region of one of the cluster's files, seen as an {@link UnsafeBuffer}. A file
 * {@link #create}d here gets the mode of its directory's kind ({@link FileModes}: 0600, or 0660 in a
 * cluster shared with its group) and has all its blocks reserved before it is mapped
 * ({@link FileSpace}): a sparse file in a full {@code tmpfs} would kill the JVM that first writes a
 * page of it with SIGBUS. {@link #close()} unmaps.
 *
 * <pre>{@code
 * try (MappedFile sdram = MappedFile.mapExisting(dir.nicSdram(node), 0, length))
 * {
 *     UnsafeBuffer buffer = sdram.buffer();
 * }
 * }</pre>
 */
public final class MappedFile implements AutoCloseable
{
    private final Path file;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer buffer;
    private volatile boolean closed;

    private MappedFile(final Path file, final MappedByteBuffer mapped)
    {
        this.file = file;
        this.mapped = mapped;
        this.buffer = new UnsafeBuffer(mapped);
    }

    /**
     * Creates (or truncates) a file of {@code length} zero bytes, reserves its blocks and maps all of it.
     *
     * @throws IllegalStateException if its file system has no room for it.
     */
    public static MappedFile create(final Path file, final long length)
    {
        try
        {
            FileModes.createFile(file);
            try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
            {
                raf.setLength(0);
                FileSpace.reserve(file, length);
                raf.setLength(length);
                return new MappedFile(file, raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, length));
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create " + file + " (" + length + " bytes)", ex);
        }
    }

    /** Maps all of an existing file. */
    public static MappedFile mapExisting(final Path file)
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            return new MappedFile(file, raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, raf.length()));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot map " + file, ex);
        }
    }

    /**
     * Maps a region of an existing file: how a user process maps only its own VNI and HPS page.
     */
    public static MappedFile mapExisting(final Path file, final long offset, final long length)
    {
        return mapRegion(file, offset, length, false);
    }

    /**
     * Maps a region of an existing file read-only: a status area a process may look at but not change
     * (a write through it faults, so a hostile process cannot forge what others read there).
     */
    public static MappedFile mapReadOnly(final Path file, final long offset, final long length)
    {
        return mapRegion(file, offset, length, true);
    }

    private static MappedFile mapRegion(final Path file, final long offset, final long length, final boolean readOnly)
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), readOnly ? "r" : "rw"))
        {
            if (offset < 0 || length < 0 || offset + length > raf.length())
            {
                throw new IllegalArgumentException("region [" + offset + ", " + (offset + length) +
                    ") is outside " + file + " (" + raf.length() + " bytes)");
            }
            return new MappedFile(file, raf.getChannel().map(
                readOnly ? FileChannel.MapMode.READ_ONLY : FileChannel.MapMode.READ_WRITE, offset, length));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot map " + file, ex);
        }
    }

    public Path file()
    {
        return file;
    }

    public UnsafeBuffer buffer()
    {
        return buffer;
    }

    public MappedByteBuffer mappedByteBuffer()
    {
        return mapped;
    }

    /** Unmaps the region; idempotent. */
    public synchronized void close()
    {
        if (!closed)
        {
            closed = true;
            IoUtil.unmap(mapped);
        }
    }

    /** @return true once {@link #close()} unmapped the region: its address range may belong to another mapping. */
    public boolean isClosed()
    {
        return closed;
    }
}
