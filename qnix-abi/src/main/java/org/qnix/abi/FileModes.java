package org.qnix.abi;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The modes of the files and directories qnix creates for a cluster (issue 17, item 8): for the owner
 * only, 0600 and 0700, or, for a cluster brought up with {@code --shared-with-group}, for the owner's
 * group too, 0660 and 0770. They are set explicitly after creation, so the caller's umask neither
 * widens them (umask 000 would let any local user write {@code host.mem}) nor narrows them. Each file
 * is created 0600 first, so that it is never more open than it ends up.
 *
 * <p>A cluster directory says which it is: one that is group-writable and not writable by others is
 * shared with its group, and everything created in it (and in its node directories) follows.
 *
 * <pre>{@code
 * FileModes.createDirectory(dir.path(), sharedWithGroup);   // 0700 or 0770
 * FileModes.createDirectory(dir.nodeDirectory(node));       // like its parent
 * FileModes.createFile(dir.daemonLog());                    // 0600 or 0660, like its directory
 * FileModes.restrict(dir.driverSocket(node));               // a file made by someone else (bind)
 * }</pre>
 */
public final class FileModes
{
    public static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");
    public static final Set<PosixFilePermission> OWNER_DIRECTORY = PosixFilePermissions.fromString("rwx------");
    public static final Set<PosixFilePermission> GROUP_FILE = PosixFilePermissions.fromString("rw-rw----");
    public static final Set<PosixFilePermission> GROUP_DIRECTORY = PosixFilePermissions.fromString("rwxrwx---");
    /** Of {@code $QNIX_DIR} when qnix creates it: its users' clusters each guard themselves. */
    public static final Set<PosixFilePermission> BASE_DIRECTORY = PosixFilePermissions.fromString("rwxr-xr-x");

    private FileModes()
    {
    }

    /** @return whether files created in {@code directory} are for its group too. */
    public static boolean isSharedWithGroup(final Path directory)
    {
        try
        {
            final Set<PosixFilePermission> mode = Files.getPosixFilePermissions(directory, LinkOption.NOFOLLOW_LINKS);
            return mode.contains(PosixFilePermission.GROUP_WRITE) && !mode.contains(PosixFilePermission.OTHERS_WRITE);
        }
        catch (final UnsupportedOperationException | IOException ex)
        {
            return false;
        }
    }

    /** @return the mode of a file created in {@code directory}. */
    public static Set<PosixFilePermission> fileModeIn(final Path directory)
    {
        return isSharedWithGroup(directory) ? GROUP_FILE : OWNER_FILE;
    }

    /**
     * Creates a directory, which must not exist, for the owner (0700) or for its group too (0770).
     *
     * @throws FileAlreadyExistsException if something has that name.
     */
    public static void createDirectory(final Path directory, final boolean sharedWithGroup) throws IOException
    {
        Files.createDirectory(directory, asAttribute(OWNER_DIRECTORY));
        setMode(directory, sharedWithGroup ? GROUP_DIRECTORY : OWNER_DIRECTORY);
    }

    /** Creates a directory, which must not exist, with the directory mode of its parent's kind. */
    public static void createDirectory(final Path directory) throws IOException
    {
        createDirectory(directory, isSharedWithGroup(directory.toAbsolutePath().getParent()));
    }

    /**
     * Creates {@code directory} and its missing parents as {@link Files#createDirectories} does, each
     * one created here getting {@code mode} rather than the umask's.
     */
    public static void createDirectories(final Path directory, final Set<PosixFilePermission> mode) throws IOException
    {
        final Path absolute = directory.toAbsolutePath();
        if (Files.isDirectory(absolute))
        {
            return;
        }
        final Path parent = absolute.getParent();
        if (null != parent)
        {
            createDirectories(parent, mode);
        }
        try
        {
            Files.createDirectory(absolute, asAttribute(OWNER_DIRECTORY));
            setMode(absolute, mode);
        }
        catch (final FileAlreadyExistsException ex)
        {
            if (!Files.isDirectory(absolute))
            {
                throw ex;
            }
            // Another process made it meanwhile: its mode is its own.
        }
    }

    /**
     * Creates an empty file, or takes one that exists, and gives it the file mode of its directory.
     */
    public static void createFile(final Path file) throws IOException
    {
        try
        {
            Files.newByteChannel(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                asAttribute(OWNER_FILE)).close();
        }
        catch (final FileAlreadyExistsException ex)
        {
            // Given its mode below, like a new one.
        }
        restrict(file);
    }

    /**
     * Sets the file mode of its directory on a file something else created (a bound socket, a file a
     * child process was told to write), whatever the umask gave it.
     */
    public static void restrict(final Path file) throws IOException
    {
        setMode(file, fileModeIn(file.toAbsolutePath().getParent()));
    }

    /** {@link #createFile}, for callers that cannot go on without the file. */
    public static void createFileOrThrow(final Path file)
    {
        try
        {
            createFile(file);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create " + file, ex);
        }
    }

    private static void setMode(final Path path, final Set<PosixFilePermission> mode) throws IOException
    {
        try
        {
            Files.setPosixFilePermissions(path, mode);
        }
        catch (final UnsupportedOperationException ex)
        {
            // Not a POSIX file system: there are no modes to set.
        }
    }

    private static FileAttribute<Set<PosixFilePermission>> asAttribute(final Set<PosixFilePermission> mode)
    {
        return PosixFilePermissions.asFileAttribute(mode);
    }
}
