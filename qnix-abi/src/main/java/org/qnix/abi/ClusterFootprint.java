package org.qnix.abi;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * How much room the files of a cluster take in {@code $QNIX_DIR}: every node's NIC SDRAM, host memory,
 * input FIFO and counters (with the packet trace ring), each reserved whole when the daemon creates it ({@link FileSpace}). So
 * {@code cluster up} can refuse, before it starts anything, a cluster its file system cannot hold
 * (issue 17, item 7), naming the sizes.
 *
 * <pre>{@code
 * ClusterFootprint footprint = new ClusterFootprint(params);
 * footprint.refusal("t", ClusterDirectory.baseDirectory()).ifPresent(reason -> { throw new IllegalArgumentException(reason); });
 * }</pre>
 */
public final class ClusterFootprint
{
    private final ClusterParameters params;

    public ClusterFootprint(final ClusterParameters params)
    {
        this.params = params;
    }

    /** @return the bytes of one node's files. */
    public long nodeBytes()
    {
        return params.sdramBytes() + params.hostMemoryBytes() + RxFifoLayout.fileLength(params) +
            CountersLayout.FILE_LENGTH + NicWakeLayout.FILE_LENGTH;
    }

    /** @return the bytes of every node's files (the logs and properties are left out: a few KiB). */
    public long totalBytes()
    {
        // At most 255 x 255 nodes of about 2 GiB each: no overflow.
        return nodeBytes() * params.nodeCount();
    }

    /** @return e.g. "4 nodes x (64 MiB NIC SDRAM + 256 MiB host memory + 2 MiB input FIFO + 2.1 MiB counters, trace and wake-up line) = 1.3 GiB". */
    public String describe()
    {
        return params.nodeCount() + (1 == params.nodeCount() ? " node" : " nodes") + " x (" +
            Sizes.describe(params.sdramBytes()) + " NIC SDRAM (--sdram) + " +
            Sizes.describe(params.hostMemoryBytes()) + " host memory (--host-mem) + " +
            Sizes.describe(RxFifoLayout.fileLength(params)) + " input FIFO + " +
            Sizes.describe(CountersLayout.FILE_LENGTH + NicWakeLayout.FILE_LENGTH) + " counters, trace and wake-up line) = " +
            Sizes.describe(totalBytes());
    }

    /**
     * @param base the directory the cluster's directory goes into; it need not exist yet (its nearest
     *             existing ancestor is on the same file system as it will be).
     * @return why a cluster named {@code name} does not fit into the usable space of {@code base}'s
     * file system, or empty if it fits (or the space cannot be read).
     */
    public Optional<String> refusal(final String name, final Path base)
    {
        Path existing = base.toAbsolutePath();
        while (null != existing && !Files.exists(existing))
        {
            existing = existing.getParent();
        }
        if (null == existing)
        {
            return Optional.empty();
        }
        final long usable;
        final String kind;
        try
        {
            final FileStore store = Files.getFileStore(existing);
            usable = store.getUsableSpace();
            kind = store.type();
        }
        catch (final IOException ex)
        {
            return Optional.empty();
        }
        if (totalBytes() <= usable)
        {
            return Optional.empty();
        }
        return Optional.of("cluster '" + name + "' needs " + describe() + " in " + base + ", but its file system (" +
            kind + ") has only " + Sizes.describe(usable) + " (" + usable + " bytes) free: choose a smaller " +
            "--sdram, --host-mem or --torus, or a $QNIX_DIR with more room");
    }
}
