package org.qnix.pcicomm;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;

/**
 * A cid taken on a node of a cluster: an exclusive lock on a file named after them, held by the
 * listening end from {@code listen} until its connection is closed. The seed's driver keeps its
 * connections in a table and refuses a second listen on a cid (000 5.1.1); the VIPL matches requests
 * by discriminator but lets any number of servers wait on one, so the exclusion lives here. The
 * operating system drops the lock when the process dies, so a killed listener frees its cid.
 *
 * <p>The file is in the temporary directory, not the cluster's: the daemon removes exactly the files it
 * made there (issue 13), and a file left by a killed process would keep the directory. The holder
 * deletes it on release; a new holder checks that the file it locked is still the one at the path, so
 * a file deleted under it does not let two processes hold one cid.
 *
 * <pre>{@code
 * CidLock lock = CidLock.acquire(ClusterDirectory.of("default"), node, 7);   // CID_TAKEN if held
 * lock.release();
 * }</pre>
 */
final class CidLock
{
    private final Path path;
    private final FileChannel channel;
    private final FileLock lock;

    private CidLock(final Path path, final FileChannel channel, final FileLock lock)
    {
        this.path = path;
        this.channel = channel;
        this.lock = lock;
    }

    /** @return the lock, or throws {@code CID_TAKEN} if another connection holds it. */
    static CidLock acquire(final ClusterDirectory cluster, final NicCoordinates node, final int cid)
    {
        final Path path = path(cluster, node, cid);
        try
        {
            Files.createDirectories(path.getParent());
            while (true)
            {
                final FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock lock = null;
                try
                {
                    lock = channel.tryLock();
                }
                catch (final OverlappingFileLockException ex)
                {
                    // Held by another connection of this JVM.
                }
                if (null == lock)
                {
                    channel.close();
                    throw new PciCommException(PciCommException.Reason.CID_TAKEN, "cid " + cid + " on node " + node +
                        " of cluster '" + cluster.name() + "' is listened on or connected already");
                }
                if (sameFile(path, channel))
                {
                    return new CidLock(path, channel, lock);
                }
                // The previous holder deleted the file between our open and our lock: take the new one.
                lock.release();
                channel.close();
            }
        }
        catch (final IOException ex)
        {
            throw new PciCommException(PciCommException.Reason.RESOURCE, "cannot take cid " + cid + " on node " + node +
                ": " + path + ": " + ex.getMessage(), ex);
        }
    }

    /** Frees the cid: the file goes first, then the lock, so a process that locks it after finds it gone. */
    void release()
    {
        try
        {
            Files.deleteIfExists(path);
            lock.release();
            channel.close();
        }
        catch (final IOException ex)
        {
            // The lock goes with the channel or with the process; nothing else to undo.
        }
    }

    static Path path(final ClusterDirectory cluster, final NicCoordinates node, final int cid)
    {
        final String where = Integer.toHexString(cluster.path().toAbsolutePath().normalize().toString().hashCode());
        return Path.of(System.getProperty("java.io.tmpdir"), "qnix-pcicomm-" + System.getProperty("user.name"),
            cluster.name() + "-" + where + "." + node + "." + Integer.toUnsignedString(cid) + ".lock");
    }

    /**
     * @return true if the file at {@code path} is the one {@code channel} locked: a token written through
     * the channel reads back through the path (a file deleted and made again would not hold it).
     */
    private static boolean sameFile(final Path path, final FileChannel channel) throws IOException
    {
        final byte[] token = (ProcessHandle.current().pid() + ":" + System.nanoTime() + ":" +
            System.identityHashCode(channel)).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        channel.truncate(0);
        channel.write(java.nio.ByteBuffer.wrap(token), 0);
        try
        {
            return java.util.Arrays.equals(token, Files.readAllBytes(path));
        }
        catch (final java.nio.file.NoSuchFileException ex)
        {
            return false;
        }
    }
}
