package org.qnix.abi;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * {@code cluster.properties}: the topology, the parameters, the daemon's pid and start time, and the
 * cluster's state. Written by the daemon with an atomic rename, so a reader never sees half a file.
 *
 * <pre>{@code
 * ClusterProperties props = ClusterProperties.read(dir.propertiesFile()).orElseThrow();
 * boolean up = ClusterProperties.STATE_UP.equals(props.state());
 * }</pre>
 */
public final class ClusterProperties
{
    public static final String STATE_STARTING = "starting";
    public static final String STATE_UP = "up";
    public static final String STATE_STOPPING = "stopping";
    public static final String STATE_FAILED = "failed";

    /** Each NIC's control program in a JVM of its own. */
    public static final String FIRMWARE_PROCESSES = "processes";
    /** Each NIC's control program on a thread of the daemon. */
    public static final String FIRMWARE_THREADS = "threads";
    /** Every NIC's control program round-robin on one thread of one firmware JVM (the "hardware"). */
    public static final String FIRMWARE_SHARED = "shared";
    public static final List<String> FIRMWARE_MODES = List.of(FIRMWARE_SHARED, FIRMWARE_PROCESSES, FIRMWARE_THREADS);
    /** Key of the NICs' CPU ({@link NicProcessor}), absent or -1 for none. */
    public static final String NIC_CPU = "nicCpu";

    /**
     * @return {@code mode} if it is a firmware placement.
     * @throws IllegalArgumentException naming the placements otherwise.
     */
    public static String checkFirmwareMode(final String mode)
    {
        if (!FIRMWARE_MODES.contains(mode))
        {
            throw new IllegalArgumentException("--firmware " + mode + ": use " + String.join(", ", FIRMWARE_MODES));
        }
        return mode;
    }

    private final Properties props;

    public ClusterProperties(final Properties props)
    {
        this.props = props;
    }

    /**
     * @param daemonStartMs    the daemon's start, wall-clock ms (compared only where the ticks are unknown).
     * @param daemonStartTicks the daemon's start in clock ticks after boot ({@link ProcessStartTicks}; 0 if
     *                         unknown): with its pid, what tells the daemon from a later process with that pid.
     */
    public static ClusterProperties of(
        final ClusterParameters params, final long daemonPid, final long daemonStartMs, final long daemonStartTicks,
        final String firmwareMode, final String state)
    {
        final Properties p = new Properties();
        for (final Map.Entry<String, String> e : params.toMap().entrySet())
        {
            p.setProperty(e.getKey(), e.getValue());
        }
        p.setProperty("daemon.pid", Long.toString(daemonPid));
        p.setProperty("daemon.startMs", Long.toString(daemonStartMs));
        p.setProperty("daemon.startTicks", Long.toString(daemonStartTicks));
        p.setProperty("firmware", firmwareMode);
        p.setProperty("layoutVersion", Integer.toString(FileDescriptorBlock.LAYOUT_VERSION));
        p.setProperty("state", state);
        return new ClusterProperties(p);
    }

    public static Optional<ClusterProperties> read(final Path file)
    {
        final Properties p = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8))
        {
            p.load(reader);
            return Optional.of(new ClusterProperties(p));
        }
        catch (final NoSuchFileException ex)
        {
            return Optional.empty();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read " + file, ex);
        }
    }

    /** Writes to a temporary file, with the mode of its directory's kind, and renames it over the target. */
    public void write(final Path file)
    {
        final Path tmp = temporaryFile(file);
        FileModes.createFileOrThrow(tmp);
        try (Writer writer = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8,
            StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING))
        {
            props.store(writer, "QNIX emulated cluster");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write " + tmp, ex);
        }
        try
        {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot rename " + tmp + " to " + file, ex);
        }
    }

    /** @return the file {@link #write} writes before renaming it: one of the files qnix removes by name. */
    public static Path temporaryFile(final Path file)
    {
        return file.resolveSibling(file.getFileName() + ".tmp");
    }

    public ClusterProperties withState(final String state)
    {
        final Properties copy = new Properties();
        copy.putAll(props);
        copy.setProperty("state", state);
        return new ClusterProperties(copy);
    }

    public ClusterProperties with(final String key, final String value)
    {
        final Properties copy = new Properties();
        copy.putAll(props);
        copy.setProperty(key, value);
        return new ClusterProperties(copy);
    }

    /**
     * @throws IllegalStateException if the file holds parameters no {@code cluster up} writes (it was
     *                               edited or damaged): naming the key, not as a bad option of the user's.
     */
    public ClusterParameters parameters()
    {
        try
        {
            return ClusterParameters.fromProperties(props);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalStateException(ClusterDirectory.PROPERTIES_FILE + " is damaged (" + ex.getMessage() +
                "): `qnix cluster down` removes the cluster", ex);
        }
    }

    /** @return the daemon's pid, 0 if the file names none (or a damaged one). */
    public long daemonPid()
    {
        return unknownOrLong("daemon.pid");
    }

    /** @return the daemon's start in ms since the epoch, 0 if unknown. */
    public long daemonStartMs()
    {
        return unknownOrLong("daemon.startMs");
    }

    /** @return the daemon's start in clock ticks after boot, 0 if unknown ({@link ProcessStartTicks}). */
    public long daemonStartTicks()
    {
        return unknownOrLong("daemon.startTicks");
    }

    /**
     * A damaged value reads as unknown: the daemon's identity decides whether the cluster is live or
     * stale, and an exception here made even {@code cluster down} fail, so nothing could clean it up.
     */
    private long unknownOrLong(final String key)
    {
        try
        {
            return Long.parseLong(props.getProperty(key, "0").trim());
        }
        catch (final NumberFormatException ex)
        {
            return 0;
        }
    }

    public String firmwareMode()
    {
        return props.getProperty("firmware", FIRMWARE_PROCESSES);
    }

    /**
     * @return the CPU the NICs' control programs run on and registered programs keep off, but those the
     * driver places there (NicProcessor).
     */
    public int nicCpu()
    {
        try
        {
            return Integer.parseInt(props.getProperty(NIC_CPU, Integer.toString(NicProcessor.NONE)).trim());
        }
        catch (final NumberFormatException ex)
        {
            // Placement only: a hand-edited value costs speed, never a registration.
            return NicProcessor.NONE;
        }
    }

    public String state()
    {
        return props.getProperty("state", "unknown");
    }
}
