package org.qnix.pcicomm;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.agrona.CloseHelper;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.LockFiles;
import org.qnix.abi.NicCoordinates;

/**
 * A cid taken on a node of a cluster: an exclusive lock on a file named after them, held by the
 * listening end from {@code listen} until its connection is closed. The seed's driver keeps its
 * connections in a table and refuses a second listen on a cid (000 5.1.1); the VIPL matches requests
 * by discriminator but lets any number of servers wait on one, so the exclusion lives here. The
 * operating system drops the lock when the process dies, so a killed listener frees its cid.
 *
 * <p>The file is in the temporary directory ({@link #directory()}), not the cluster's: the daemon
 * removes exactly the files it made there (issue 13), and a file left by a killed process would keep
 * the directory. The holder deletes it when it releases the cid, and a lock counts only once the path
 * names the locked file ({@link LockFiles}: a process that opened the file just before its deletion
 * must not take a lock on a file no one else sees). A killed holder leaves its empty file, which the
 * next holder of the cid takes over and deletes.
 *
 * <pre>{@code
 * CidLock lock = CidLock.acquire(ClusterDirectory.of("default"), node, 7);   // CID_TAKEN if held
 * lock.release();
 * }</pre>
 */
final class CidLock
{
    /**
     * The lock files this JVM holds. Checked before the file is opened: closing a second channel of a
     * locked file, as a failed attempt would, drops the JVM's lock on Linux (see above).
     */
    private static final java.util.Set<Path> HELD = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** How many times a lock taken on a file deleted meanwhile is given up and taken again on the new one. */
    private static final int UNLINKED_RETRIES = 100;

    private final Path path;
    /** Holds the file's lock: closing it releases the lock. */
    private final FileChannel channel;
    private boolean released;

    private CidLock(final Path path, final FileChannel channel)
    {
        this.path = path;
        this.channel = channel;
    }

    /** @return the lock, or throws {@code CID_TAKEN} if another connection holds it. */
    static CidLock acquire(final ClusterDirectory cluster, final NicCoordinates node, final int cid)
    {
        final Path path = path(cluster, node, cid);
        if (!HELD.add(path))
        {
            throw taken(cluster, node, cid);
        }
        try
        {
            Files.createDirectories(path.getParent());
            for (int attempt = 0; attempt <= UNLINKED_RETRIES; attempt++)
            {
                final FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                boolean kept = false;
                try
                {
                    FileLock lock = null;
                    try
                    {
                        lock = channel.tryLock();
                    }
                    catch (final OverlappingFileLockException ex)
                    {
                        // Not after HELD; kept as the JDK's own guard.
                    }
                    if (null == lock)
                    {
                        HELD.remove(path);
                        throw taken(cluster, node, cid);
                    }
                    if (LockFiles.pathNamesOpenFile(path))
                    {
                        kept = true;
                        return new CidLock(path, channel);
                    }
                    // Deleted by its last holder between the open and the lock: open the path again.
                }
                finally
                {
                    if (!kept)
                    {
                        // On every way out, an I/O error's too: the lock goes with the channel.
                        CloseHelper.quietClose(channel);
                    }
                }
            }
            HELD.remove(path);
            throw taken(cluster, node, cid);
        }
        catch (final IOException ex)
        {
            HELD.remove(path);
            throw new PciCommException(PciCommException.Reason.RESOURCE, "cannot take cid " + cid + " on node " + node +
                ": " + path + ": " + ex.getMessage(), ex);
        }
    }

    /** Frees the cid; idempotent. */
    void release()
    {
        if (released)
        {
            return;
        }
        released = true;
        try
        {
            // While the lock is held no one else deletes or replaces the file: the path is this one.
            Files.deleteIfExists(path);
        }
        catch (final IOException ex)
        {
            // Left behind: the cid's next holder takes the file over, as after a holder killed with -9.
        }
        // Whatever the delete did: the lock goes with the channel.
        CloseHelper.quietClose(channel);
        HELD.remove(path);
    }

    private static PciCommException taken(final ClusterDirectory cluster, final NicCoordinates node, final int cid)
    {
        return new PciCommException(PciCommException.Reason.CID_TAKEN, "cid " + cid + " on node " + node +
            " of cluster '" + cluster.name() + "' is listened on or connected already");
    }

    /** @return where the lock files of every cluster are. */
    static Path directory()
    {
        return Path.of(System.getProperty("java.io.tmpdir"), "qnix-pcicomm-" + System.getProperty("user.name"));
    }

    /** @return the lock file of a cid: the cluster's name and a hash of its directory, the node, the cid. */
    static Path path(final ClusterDirectory cluster, final NicCoordinates node, final int cid)
    {
        final String where = Integer.toHexString(cluster.path().toAbsolutePath().normalize().toString().hashCode());
        return directory().resolve(cluster.name() + "-" + where + "." + node + "." + Integer.toUnsignedString(cid) +
            ".lock");
    }
}
