package org.qnix.daemon;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;

import org.agrona.CloseHelper;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.FileModes;
import org.qnix.abi.HostClock;
import org.qnix.abi.LockFiles;
import org.qnix.abi.ProcessStartTicks;

/**
 * The right to create or remove a cluster's files: an exclusive {@link FileLock} on
 * {@code $QNIX_DIR/.NAME.lock}. {@code cluster up} holds it from before it looks at the cluster
 * directory until the cluster is up (or its files are gone again), {@code cluster down} while it stops
 * the daemon and removes the files; the daemon holds none. So a second {@code up} or a {@code down}
 * never takes a half-built cluster for a stale one. The lock goes with its process, {@code kill -9}
 * included.
 *
 * <p>The lock file holds the holder's pid while it is held, and is empty otherwise. Its holder deletes it
 * on release when the cluster directory is gone ({@code down}, or an {@code up} that failed and removed
 * what it built), so that taking clusters down leaves nothing in {@code $QNIX_DIR}. Another process may
 * have opened the file just before it was deleted and lock it just after: it would then hold a lock on a
 * file no one else sees. So a lock counts only once the path is seen to name the locked file ({@link
 * LockFiles}); otherwise the holder lets go and opens the path again.
 *
 * <pre>{@code
 * try (ClusterLock lock = ClusterLock.acquire(dir, ClusterLock.Purpose.UP))
 * {
 *     // create the files, start the daemon, wait until it is up
 * }
 * }</pre>
 */
public final class ClusterLock implements AutoCloseable
{
    /** What the holder is doing, for the message the others get. */
    public enum Purpose
    {
        UP("brought up"), DOWN("taken down");

        private final String doing;

        Purpose(final String doing)
        {
            this.doing = doing;
        }
    }

    /**
     * The process holding a cluster's lock: its pid and its start, in wall-clock ms and in clock ticks
     * after boot (0 if unknown; {@link Processes#isSameProcess}).
     */
    public record Holder(long pid, long startMs, long startTicks, Purpose purpose)
    {
        /** @return e.g. "cluster 't' is being brought up by pid 1234". */
        public String describe(final ClusterDirectory dir)
        {
            return "cluster '" + dir.name() + "' is being " + purpose.doing + " by pid " + pid;
        }

        /** @return what another {@code up} or {@code down} is told. */
        public String refusal(final ClusterDirectory dir)
        {
            return describe(dir) + " (it holds " + dir.lockFile() + "): not touching it";
        }
    }

    /**
     * The locks this JVM holds, by file. POSIX record locks belong to the process: a second channel on
     * the file would be refused by the JDK, and closing it would drop the lock the first one holds. So
     * this JVM answers for its own locks from here and opens a lock file only when it holds none on it.
     * Guarded by the class.
     */
    private static final Map<Path, Holder> HELD_HERE = new HashMap<>();
    /** Whether {@link #finishAtShutdown()} has added its hook. Guarded by the class. */
    private static boolean shutdownHookAdded;
    /** The longest a shutdown waits for the locks held here: an {@code up}'s limit (180 s), and more. */
    private static final long RELEASE_AT_SHUTDOWN_MS = 240_000;

    private final ClusterDirectory dir;
    private final Path file;
    private final FileChannel channel;
    private final FileLock lock;
    private boolean closed;

    private ClusterLock(final ClusterDirectory dir, final FileChannel channel, final FileLock lock)
    {
        this.dir = dir;
        this.file = dir.lockFile();
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * How many times a lock taken on a file that was deleted meanwhile is given up and taken again on the
     * path's new file before {@link #acquire} refuses: each retry needs another process to have deleted
     * the file in between, which only a holder's release does.
     */
    private static final int UNLINKED_RETRIES = 100;

    private static final int HOLDER_LOOKS = 50;
    private static final long HOLDER_LOOK_MS = 10;

    private static void pause(final long ms)
    {
        try
        {
            Thread.sleep(ms);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Takes the cluster's lock without waiting.
     *
     * @throws IllegalStateException naming the holder if another process (or this one) holds it.
     */
    public static ClusterLock acquire(final ClusterDirectory dir, final Purpose purpose)
    {
        synchronized (ClusterLock.class)
        {
            final Path file = dir.lockFile();
            final Holder heldHere = HELD_HERE.get(file);
            if (null != heldHere)
            {
                throw busy(dir, Optional.of(heldHere));
            }
            for (int attempt = 0; attempt <= UNLINKED_RETRIES; attempt++)
            {
                final ClusterLock lock = tryAcquire(dir, purpose);
                if (null != lock)
                {
                    return lock;
                }
            }
            throw busy(dir, Optional.empty());
        }
    }

    /**
     * One attempt of {@link #acquire}.
     *
     * @return null when the lock was taken on a file its holder had deleted meanwhile: try again.
     */
    private static ClusterLock tryAcquire(final ClusterDirectory dir, final Purpose purpose)
    {
        final Path file = dir.lockFile();
        FileChannel channel = null;
        try
        {
            FileModes.createDirectories(file.getParent(), FileModes.BASE_DIRECTORY);
            // Not through a symbolic link: the file is truncated, and must be this one. The owner's
            // only, whatever the umask: anyone who could write it could lock it or forge its holder.
            channel = FileChannel.open(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(FileModes.OWNER_FILE));
            try
            {
                Files.setPosixFilePermissions(file, FileModes.OWNER_FILE);
            }
            catch (final NoSuchFileException ex)
            {
                // Deleted by its last holder since the open: open the path again.
                channel.close();
                return null;
            }
            final FileLock lock = tryLock(channel);
            if (null == lock)
            {
                // Read through this channel: its content is the other process's, written just after
                // it locked; a holder caught between the two gets a moment to write its name.
                Optional<Holder> other = parse(read(channel));
                for (int look = 0; other.isEmpty() && look < HOLDER_LOOKS; look++)
                {
                    pause(HOLDER_LOOK_MS);
                    other = parse(read(channel));
                }
                channel.close();
                throw busy(dir, other);
            }
            if (!LockFiles.pathNamesOpenFile(file))
            {
                channel.close();
                return null;
            }
            final long pid = ProcessHandle.current().pid();
            final Holder self = new Holder(pid, startMs(ProcessHandle.current()), ProcessStartTicks.of(pid), purpose);
            channel.truncate(0);
            channel.write(ByteBuffer.wrap(format(self).getBytes(StandardCharsets.UTF_8)), 0);
            HELD_HERE.put(file, self);
            finishAtShutdown();
            return new ClusterLock(dir, channel, lock);
        }
        catch (final IOException ex)
        {
            CloseHelper.quietClose(channel);
            throw new UncheckedIOException("cannot lock " + file, ex);
        }
    }

    /**
     * Once per JVM: at shutdown (Ctrl-C) it waits for the locks it holds to be released. The thread that
     * holds one goes on running meanwhile, so an interrupted {@code down} finishes, and an interrupted
     * {@code up} comes up or fails (its caller's own hook may take it down again, {@code OwnedCluster}).
     * Before, the JVM halted half-way, which left the lock file behind, and after an {@code up} a
     * running cluster nobody was told of. A holder that calls {@code System.exit} itself would make this
     * wait its whole limit: every holder here lets go (try-with-resources) before anything exits.
     */
    private static void finishAtShutdown()
    {
        if (shutdownHookAdded)
        {
            return;
        }
        shutdownHookAdded = true;
        try
        {
            Runtime.getRuntime().addShutdownHook(new Thread(() ->
            {
                synchronized (ClusterLock.class)
                {
                    final long deadline = HostClock.millis() + RELEASE_AT_SHUTDOWN_MS;
                    for (long left = RELEASE_AT_SHUTDOWN_MS; !HELD_HERE.isEmpty() && left > 0;
                        left = deadline - HostClock.millis())
                    {
                        try
                        {
                            ClusterLock.class.wait(left);
                        }
                        catch (final InterruptedException ex)
                        {
                            return;
                        }
                    }
                }
            }, "qnix-cluster-lock-release"));
        }
        catch (final IllegalStateException shuttingDown)
        {
            // Taken by a shutdown hook (a teardown): the JVM waits for that hook anyway.
        }
    }

    /**
     * Waits until no thread of this JVM holds the cluster's lock: how a shutdown hook that takes a
     * cluster down lets an {@code up} of the same JVM, interrupted half-way, finish or fail first.
     * Another process's lock is not waited for.
     *
     * @return false if this JVM still holds it after the timeout.
     */
    public static boolean awaitReleasedHere(final ClusterDirectory dir, final long timeoutMs) throws InterruptedException
    {
        synchronized (ClusterLock.class)
        {
            final long deadline = HostClock.millis() + timeoutMs;
            for (long left = timeoutMs; HELD_HERE.containsKey(dir.lockFile()); left = deadline - HostClock.millis())
            {
                if (left <= 0)
                {
                    return false;
                }
                ClusterLock.class.wait(left);
            }
            return true;
        }
    }

    /**
     * @return the live process that holds the cluster's lock, as its lock file names it; empty when it
     * is free (or its holder died).
     */
    public static Optional<Holder> holder(final ClusterDirectory dir)
    {
        synchronized (ClusterLock.class)
        {
            final Path file = dir.lockFile();
            final Holder heldHere = HELD_HERE.get(file);
            if (null != heldHere)
            {
                return Optional.of(heldHere);
            }
            // This JVM holds no lock on the file, so opening and closing it here drops none.
            final String content;
            try
            {
                content = Files.readString(file, StandardCharsets.UTF_8);
            }
            catch (final NoSuchFileException ex)
            {
                return Optional.empty();
            }
            catch (final IOException ex)
            {
                return Optional.empty();
            }
            return parse(content).filter(ClusterLock::isAlive);
        }
    }

    /**
     * Empties the lock file and releases the lock. The file is deleted first when the cluster directory
     * is gone: no process can delete or replace it while this one holds the lock (see the class comment).
     */
    public void close()
    {
        synchronized (ClusterLock.class)
        {
            if (closed)
            {
                return;
            }
            closed = true;
            try
            {
                channel.truncate(0);
                if (!Files.exists(dir.path(), LinkOption.NOFOLLOW_LINKS))
                {
                    Files.deleteIfExists(file);
                }
                lock.release();
            }
            catch (final IOException ex)
            {
                // Closing the channel below releases the lock all the same.
            }
            finally
            {
                CloseHelper.quietClose(channel);
                HELD_HERE.remove(file);
                ClusterLock.class.notifyAll();
            }
        }
    }

    private static FileLock tryLock(final FileChannel channel) throws IOException
    {
        try
        {
            return channel.tryLock();
        }
        catch (final OverlappingFileLockException ex)
        {
            return null;
        }
    }

    private static IllegalStateException busy(final ClusterDirectory dir, final Optional<Holder> holder)
    {
        return new IllegalStateException(holder.map(h -> h.refusal(dir)).orElse("cluster '" + dir.name() +
            "' is being brought up or taken down by another process (it holds " + dir.lockFile() + "): not touching it"));
    }

    private static String read(final FileChannel channel) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.allocate(256);
        channel.read(buffer, 0);
        return new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8);
    }

    /** @return the lock file's content naming {@code holder}; package-private for tests that write one. */
    static String format(final Holder holder)
    {
        return "pid=" + holder.pid() + "\nstartMs=" + holder.startMs() + "\nstartTicks=" + holder.startTicks() +
            "\npurpose=" + holder.purpose() + "\n";
    }

    private static Optional<Holder> parse(final String content)
    {
        final Properties props = new Properties();
        try
        {
            props.load(new StringReader(content));
            return Optional.of(new Holder(Long.parseLong(props.getProperty("pid")),
                Long.parseLong(props.getProperty("startMs")), Long.parseLong(props.getProperty("startTicks", "0")),
                Purpose.valueOf(props.getProperty("purpose"))));
        }
        catch (final IOException | RuntimeException ex)
        {
            // Empty (free, or its holder is between locking and writing) or not ours to read.
            return Optional.empty();
        }
    }

    /** Alive, and the same process: not another one that has since been given its pid. */
    private static boolean isAlive(final Holder holder)
    {
        return ProcessHandle.of(holder.pid()).filter(p -> Processes.isAlive(p.pid()))
            .map(p -> Processes.isSameProcess(p, holder.startTicks(), holder.startMs()))
            .orElse(false);
    }

    private static long startMs(final ProcessHandle process)
    {
        return process.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    }
}
