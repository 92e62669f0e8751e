package org.qnix.daemon;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.FileModes;
import org.qnix.abi.NicCoordinates;

/**
 * The files of a cluster directory, by name. A directory qnix creates gets a marker first
 * ({@value ClusterDirectory#MARKER_FILE}); removal touches only a marked directory and, in it, only
 * the files qnix gives a name to. It never walks a tree: whatever else is found there is left in
 * place and reported, and a directory that is not empty then stays.
 *
 * <pre>{@code
 * ClusterFiles.create(dir, false);                        // the directory (0700) and its marker
 * ClusterFiles.remove(dir).forEach(System.out::println);  // what was removed, what was left and why
 * }</pre>
 */
public final class ClusterFiles
{
    /** First line of the marker; a later format would change the number. */
    public static final String MARKER_FORMAT = "qnix-cluster 1";
    private static final String MARKER_KIND = "qnix-cluster ";

    private ClusterFiles()
    {
    }

    /**
     * Creates the cluster directory, which must not exist yet, for its owner only (0700), and its
     * marker, which names the process that created it.
     *
     * @throws IllegalStateException if something already has that name.
     */
    public static void create(final ClusterDirectory dir)
    {
        create(dir, false);
    }

    /**
     * Creates the cluster directory, which must not exist yet, and its marker, which names the process
     * that created it. The directory is the owner's only (0700), or its group's too (0770) when
     * {@code sharedWithGroup}; every file and directory qnix creates in it follows ({@link FileModes}).
     * {@code $QNIX_DIR}, if qnix creates it, gets 0755.
     *
     * @throws IllegalStateException if something already has that name.
     */
    public static void create(final ClusterDirectory dir, final boolean sharedWithGroup)
    {
        final Path path = dir.path();
        try
        {
            FileModes.createDirectories(path.getParent(), FileModes.BASE_DIRECTORY);
            FileModes.createDirectory(path, sharedWithGroup);
        }
        catch (final FileAlreadyExistsException ex)
        {
            throw new IllegalStateException(path + " already exists: not touching it");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create " + path, ex);
        }
        final ProcessHandle self = ProcessHandle.current();
        final String marker = MARKER_FORMAT + "\n" +
            "created.by.pid=" + self.pid() + "\n" +
            "created.by.startMs=" + self.info().startInstant().map(Instant::toEpochMilli).orElse(0L) + "\n";
        try
        {
            FileModes.createFile(dir.markerFile());
            Files.writeString(dir.markerFile(), marker, StandardCharsets.UTF_8,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write " + dir.markerFile(), ex);
        }
    }

    /**
     * Creates a node's directory with the mode of the cluster directory's kind. One that exists (a daemon
     * started by hand on a cluster directory it left) is used as it is.
     */
    public static void createNodeDirectory(final ClusterDirectory dir, final NicCoordinates node)
    {
        try
        {
            FileModes.createDirectory(dir.nodeDirectory(node));
        }
        catch (final FileAlreadyExistsException ex)
        {
            if (!Files.isDirectory(dir.nodeDirectory(node), LinkOption.NOFOLLOW_LINKS))
            {
                throw new IllegalStateException(dir.nodeDirectory(node) + " exists and is not a directory: not touching it");
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create " + dir.nodeDirectory(node), ex);
        }
    }

    /**
     * Creates the cluster directory if it does not exist (a daemon started by hand), else checks that
     * qnix created it.
     *
     * @throws IllegalStateException if the directory exists but qnix did not create it.
     */
    public static void createOrCheck(final ClusterDirectory dir, final boolean sharedWithGroup)
    {
        if (!Files.exists(dir.path(), LinkOption.NOFOLLOW_LINKS))
        {
            create(dir, sharedWithGroup);
        }
        else if (!isMarked(dir))
        {
            throw new IllegalStateException(notOurs(dir));
        }
    }

    /**
     * @return whether the cluster directory is a real directory (not a symbolic link) holding a qnix
     * marker: a regular file whose first line is a marker format.
     */
    public static boolean isMarked(final ClusterDirectory dir)
    {
        final Path marker = dir.markerFile();
        if (!Files.isDirectory(dir.path(), LinkOption.NOFOLLOW_LINKS) ||
            !Files.isRegularFile(marker, LinkOption.NOFOLLOW_LINKS))
        {
            return false;
        }
        // A bounded read: the marker is three short lines, whatever a user may have put there is not.
        try (InputStream in = Files.newInputStream(marker, LinkOption.NOFOLLOW_LINKS))
        {
            final String head = new String(in.readNBytes(64), StandardCharsets.UTF_8);
            return head.startsWith(MARKER_KIND);
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    /** @return the refusal for a directory qnix did not create, naming it. */
    public static String notOurs(final ClusterDirectory dir)
    {
        return dir.path() + " was not created by qnix (it has no " + ClusterDirectory.MARKER_FILE +
            " marker): not touching it";
    }

    /**
     * Removes the cluster's files and, once they are all gone, its marker and directory.
     *
     * @return what was done and what was left, one line each; nothing if the directory did not exist.
     */
    public static List<String> remove(final ClusterDirectory dir)
    {
        return remove(dir, null);
    }

    /**
     * Removes the files of a cluster that failed to start but its log, {@code cluster.properties} and
     * JVM crash reports, so that {@code cluster up} can show why; the marker and directory stay with them.
     *
     * @return what was left that qnix did not create, one line each.
     */
    public static List<String> removeAllButLog(final ClusterDirectory dir)
    {
        final Set<String> log = Set.of(ClusterDirectory.DAEMON_LOG, ClusterDirectory.PROPERTIES_FILE);
        return remove(dir, name -> log.contains(name) || ClusterDirectory.isCrashFileName(name));
    }

    /** @param keep the names to keep, with the marker and directory; null to remove everything qnix named. */
    private static List<String> remove(final ClusterDirectory dir, final Predicate<String> keep)
    {
        final Path root = dir.path();
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS))
        {
            return List.of();
        }
        if (!isMarked(dir))
        {
            return List.of(notOurs(dir));
        }
        final Removal removal = new Removal();
        for (final Path entry : list(root))
        {
            final String name = entry.getFileName().toString();
            if (ClusterDirectory.MARKER_FILE.equals(name) || null != keep && keep.test(name))
            {
                continue;
            }
            if (ClusterDirectory.isCrashFileName(name))
            {
                // Said, since it is the only trace of a JVM of the cluster that crashed.
                removal.deleteFile(entry);
                if (!Files.exists(entry, LinkOption.NOFOLLOW_LINKS))
                {
                    removal.report.add("removed JVM crash report " + entry);
                }
            }
            else if (isClusterFileName(dir, name))
            {
                removal.deleteFile(entry);
            }
            else if (ClusterDirectory.isNodeDirectoryName(name) && Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS))
            {
                removeNodeDirectory(entry, removal);
            }
            else
            {
                removal.leave(entry);
            }
        }
        if (null != keep)
        {
            return removal.report;
        }
        if (!removal.complete())
        {
            // The marker stays: qnix did create this directory, and once its other files are moved away a
            // second `cluster down` finishes the job.
            removal.report.add("left " + root + " in place: it holds files qnix did not create");
            return removal.report;
        }
        removal.deleteFile(dir.markerFile());
        removal.deleteDirectory(root);
        if (removal.complete())
        {
            removal.report.add("removed " + root);
        }
        return removal.report;
    }

    private static void removeNodeDirectory(final Path node, final Removal removal)
    {
        final int leftBefore = removal.left;
        for (final Path entry : list(node))
        {
            if (ClusterDirectory.NODE_FILES.contains(entry.getFileName().toString()))
            {
                removal.deleteFile(entry);
            }
            else
            {
                removal.leave(entry);
            }
        }
        if (removal.left == leftBefore)
        {
            removal.deleteDirectory(node);
        }
    }

    private static boolean isClusterFileName(final ClusterDirectory dir, final String name)
    {
        return ClusterDirectory.PROPERTIES_FILE.equals(name) || ClusterDirectory.DAEMON_LOG.equals(name) ||
            ClusterProperties.temporaryFile(dir.propertiesFile()).getFileName().toString().equals(name);
    }

    private static List<Path> list(final Path directory)
    {
        try (Stream<Path> entries = Files.list(directory))
        {
            return entries.sorted().toList();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot list " + directory, ex);
        }
    }

    /** What one removal did, and how many entries it left. */
    private static final class Removal
    {
        final List<String> report = new ArrayList<>();
        int left;

        boolean complete()
        {
            return 0 == left;
        }

        void leave(final Path entry)
        {
            left++;
            report.add("left " + entry + ": not created by qnix");
        }

        /** Deletes a file qnix names; a directory of that name is not one of its files. */
        void deleteFile(final Path file)
        {
            if (Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS))
            {
                leave(file);
                return;
            }
            try
            {
                Files.deleteIfExists(file);
            }
            catch (final IOException ex)
            {
                left++;
                report.add("could not remove " + file + ": " + ex);
            }
        }

        /** Deletes a directory only if it is empty: something else appearing in it since is left. */
        void deleteDirectory(final Path directory)
        {
            try
            {
                Files.deleteIfExists(directory);
            }
            catch (final DirectoryNotEmptyException ex)
            {
                left++;
                report.add("left " + directory + " in place: files appeared in it while it was being removed");
            }
            catch (final IOException ex)
            {
                left++;
                report.add("could not remove " + directory + ": " + ex);
            }
        }
    }
}
