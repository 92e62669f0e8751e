package org.qnix.firmware;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.Map;

import org.qnix.abi.MappedFile;

/**
 * The input FIFOs (and {@code nic.wake} files, to wake a sleeping NIC after a packet) of other NICs
 * mapped once per JVM, however many control programs of the JVM write into them. Every control program sends to every NIC, so with {@code --firmware threads} a daemon of
 * N NICs mapped N x (N - 1) FIFOs: 65,280 for a 16x16 torus, past the kernel's limit of 65,530
 * mappings per process ({@code vm.max_map_count}), and the JVM died of native out-of-memory the next
 * time it needed one. Shared, they are N - 1 per JVM whatever the placement (issue 17, item 7).
 *
 * <pre>{@code
 * MappedFile fifo = PeerFifoMappings.acquire(dir.rxFifo(peer));
 * // ... append packets ...
 * PeerFifoMappings.release(fifo);   // unmapped when its last user lets go
 * }</pre>
 */
final class PeerFifoMappings
{
    /** A file by its identity (device and inode), so that a cluster made again under a name gets new mappings. */
    private static final Map<Object, Shared> MAPPED = new HashMap<>();
    /** The same entries by the mapping handed out (by identity: MappedFile keeps Object's equals). */
    private static final Map<MappedFile, Shared> BY_MAPPING = new HashMap<>();

    private static final class Shared
    {
        final Object key;
        final MappedFile file;
        int users;

        Shared(final Object key, final MappedFile file)
        {
            this.key = key;
            this.file = file;
        }
    }

    private PeerFifoMappings()
    {
    }

    /** @return the JVM's mapping of all of {@code file}, made if it has none. */
    static synchronized MappedFile acquire(final Path file)
    {
        final Object key;
        try
        {
            key = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot map " + file, ex);
        }
        Shared shared = null == key ? null : MAPPED.get(key);
        if (null == shared)
        {
            shared = new Shared(key, MappedFile.mapExisting(file));
            if (null != key)
            {
                MAPPED.put(key, shared);
            }
        }
        shared.users++;
        BY_MAPPING.put(shared.file, shared);
        return shared.file;
    }

    /** Lets go of a mapping {@link #acquire} gave; the last user's release unmaps it. */
    static synchronized void release(final MappedFile file)
    {
        final Shared shared = BY_MAPPING.get(file);
        if (null == shared)
        {
            return;
        }
        if (0 == --shared.users)
        {
            BY_MAPPING.remove(file);
            if (null != shared.key)
            {
                MAPPED.remove(shared.key);
            }
            shared.file.close();
        }
    }
}
