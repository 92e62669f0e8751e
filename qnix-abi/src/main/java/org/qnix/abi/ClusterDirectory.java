package org.qnix.abi;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Where the files of a cluster live (DESIGN.md 3): {@code $QNIX_DIR/<cluster-name>/}, with
 * {@code $QNIX_DIR} defaulting to {@code /dev/shm/qnix} (else the JVM temp dir). The environment
 * variable can be overridden by the {@code qnix.dir} system property.
 *
 * <pre>{@code
 * ClusterDirectory dir = ClusterDirectory.of("t");
 * Path sdram = dir.nicSdram(new NicCoordinates(1, 0));
 * }</pre>
 */
public final class ClusterDirectory
{
    public static final String DEFAULT_CLUSTER_NAME = "default";
    /** As Linux's MAXSYMLINKS: a longer chain of symbolic links is not followed by the kernel either. */
    private static final int MAX_SYMLINK_HOPS = 40;
    /** Unix-domain socket paths are limited to 107 bytes on Linux. */
    public static final int MAX_SOCKET_PATH = 107;

    /**
     * The file that says qnix created a directory: the only kind of directory qnix removes files from
     * (docs/IMPLEMENTATION.md, "Processes and files").
     */
    public static final String MARKER_FILE = ".qnix-cluster";
    public static final String PROPERTIES_FILE = "cluster.properties";
    public static final String DAEMON_LOG = "daemon.log";
    public static final String NIC_SDRAM = "nic.sdram";
    public static final String HOST_MEMORY = "host.mem";
    public static final String RX_FIFO = "rx.fifo";
    public static final String COUNTERS = "counters";
    public static final String DRIVER_SOCKET = "driver.sock";
    public static final String FIRMWARE_LOG = "firmware.log";
    public static final String NIC_WAKE = "nic.wake";
    /** Every file qnix creates in a node directory; removal deletes these names and nothing else. */
    public static final List<String> NODE_FILES =
        List.of(NIC_SDRAM, HOST_MEMORY, RX_FIFO, COUNTERS, NIC_WAKE, DRIVER_SOCKET, FIRMWARE_LOG);

    /**
     * Where the daemon and firmware JVMs write a crash report ({@code -XX:ErrorFile}) and the JIT's replay
     * data ({@code -XX:ReplayDataFile}), {@code %p} being the JVM's pid: in the cluster directory rather
     * than the working directory of whoever ran {@code cluster up}.
     */
    public static final String ERROR_FILE = "hs_err_pid%p.log";
    public static final String REPLAY_FILE = "replay_pid%p.log";

    private static final Pattern NODE_DIRECTORY = Pattern.compile("node-[0-9]+-[0-9]+");
    private static final Pattern CRASH_FILE = Pattern.compile("(hs_err|replay)_pid[0-9]+\\.log");

    private final String name;
    private final Path path;

    public ClusterDirectory(final Path base, final String name)
    {
        validateName(name);
        this.name = name;
        this.path = base.resolve(name).toAbsolutePath();
    }

    public static ClusterDirectory of(final String name)
    {
        return new ClusterDirectory(baseDirectory(), name);
    }

    /** @return {@code qnix.dir}, else {@code $QNIX_DIR}, else {@code /dev/shm/qnix}, else tmp/qnix. */
    public static Path baseDirectory()
    {
        final String property = System.getProperty("qnix.dir");
        if (null != property && !property.isBlank())
        {
            return Path.of(property);
        }
        final String env = System.getenv("QNIX_DIR");
        if (null != env && !env.isBlank())
        {
            return Path.of(env);
        }
        final Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm))
        {
            return shm.resolve("qnix");
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "qnix");
    }

    /**
     * Writing a file a cluster maps cuts it short under its NIC, whose firmware then dies of a memory
     * fault: every output file a command or an example writes is asked about here first.
     *
     * <pre>{@code
     * final String why = ClusterDirectory.whyAClusterFile(out);
     * if (null != why)
     * {
     *     throw new IllegalArgumentException("--out " + out + ": " + why);
     * }
     * }</pre>
     *
     * @return why {@code file} may be a file of a cluster, or null. It may be one if it lies in {@link
     * #baseDirectory()}, its symbolic links followed, or if it exists with more than one name on that
     * directory's file system: a hard link to a cluster's file passes the first check. On {@code /dev/shm}
     * no output file has a second name; where the clusters live on a disk, any such file is refused too.
     */
    public static String whyAClusterFile(final Path file)
    {
        final Path clusters = baseDirectory().toAbsolutePath();
        if (isWithin(file, clusters))
        {
            return "is in " + clusters + ", where the clusters' NICs map their files: write it elsewhere";
        }
        if (isOtherNameOnTheFileSystemOf(file, clusters))
        {
            return "has other hard links on the file system of " + clusters + ", and may be a file a cluster's " +
                "NIC maps: write a new file";
        }
        return null;
    }

    /** @return whether {@code file}, its links followed, is (or would be created) in {@code directory} or below. */
    private static boolean isWithin(final Path file, final Path directory)
    {
        try
        {
            if (!Files.isDirectory(directory))
            {
                return false;
            }
            // A link that names nothing yet would be created where it points (through every link of a
            // chain): look there. A loop, or a chain longer than the kernel follows, creates nothing.
            Path target = file.toAbsolutePath();
            for (int hops = 0; Files.isSymbolicLink(target) && !Files.exists(target); hops++)
            {
                if (hops == MAX_SYMLINK_HOPS || null == target.getParent())
                {
                    return false;
                }
                target = target.getParent().resolve(Files.readSymbolicLink(target)).toAbsolutePath();
            }
            if (null == target.getParent())
            {
                return false;
            }
            final Path real = Files.exists(target) ? target.toRealPath() :
                target.getParent().toRealPath().resolve(target.getFileName());
            return real.startsWith(directory.toRealPath());
        }
        catch (final IOException ex)
        {
            // Not resolvable: the caller's own checks say why it cannot be written.
            return false;
        }
    }

    /**
     * A hard link made outside the clusters' directory to one of their files passes {@link #isWithin};
     * it can only be on their file system (the same device, whatever mount it is reached through).
     */
    private static boolean isOtherNameOnTheFileSystemOf(final Path file, final Path directory)
    {
        try
        {
            return Files.isRegularFile(file) && Files.isDirectory(directory) &&
                Files.getAttribute(file, "unix:dev").equals(Files.getAttribute(directory, "unix:dev")) &&
                (Integer)Files.getAttribute(file, "unix:nlink") > 1;
        }
        catch (final IOException | UnsupportedOperationException | IllegalArgumentException ex)
        {
            // Not known: the caller's own checks say why it cannot be written, if it cannot.
            return false;
        }
    }

    /** @return the cluster name to use when none is given: {@code $QNIX_CLUSTER} or "default". */
    public static String defaultClusterName()
    {
        final String env = System.getenv("QNIX_CLUSTER");
        return null != env && !env.isBlank() ? env : DEFAULT_CLUSTER_NAME;
    }

    public static void validateName(final String name)
    {
        if (null == name || !name.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,31}"))
        {
            throw new IllegalArgumentException("cluster name '" + name +
                "': use 1-32 letters, digits, '_', '.' or '-', starting with a letter or digit");
        }
    }

    public String name()
    {
        return name;
    }

    public Path path()
    {
        return path;
    }

    public Path propertiesFile()
    {
        return path.resolve(PROPERTIES_FILE);
    }

    public Path daemonLog()
    {
        return path.resolve(DAEMON_LOG);
    }

    /** @return the marker written first into a directory qnix creates. */
    public Path markerFile()
    {
        return path.resolve(MARKER_FILE);
    }

    /**
     * @return {@code $QNIX_DIR/.NAME.lock}: beside the cluster directory rather than in it, so that it
     * exists before the directory does and is never removed with it. No cluster name starts with a dot.
     */
    public Path lockFile()
    {
        return path.resolveSibling("." + name + ".lock");
    }

    /** @return whether a file name is one of a JVM crash report or replay file, {@link #ERROR_FILE}. */
    public static boolean isCrashFileName(final String fileName)
    {
        return CRASH_FILE.matcher(fileName).matches();
    }

    /** @return the {@code -XX:ErrorFile} pattern of the cluster's JVMs. */
    public Path errorFile()
    {
        return path.resolve(ERROR_FILE);
    }

    /** @return the {@code -XX:ReplayDataFile} pattern of the cluster's JVMs. */
    public Path replayFile()
    {
        return path.resolve(REPLAY_FILE);
    }

    /** @return whether a file name is one {@link NicCoordinates#directoryName()} gives. */
    public static boolean isNodeDirectoryName(final String fileName)
    {
        return NODE_DIRECTORY.matcher(fileName).matches();
    }

    public Path nodeDirectory(final NicCoordinates node)
    {
        return path.resolve(node.directoryName());
    }

    public Path nicSdram(final NicCoordinates node)
    {
        return nodeDirectory(node).resolve(NIC_SDRAM);
    }

    public Path hostMemory(final NicCoordinates node)
    {
        return nodeDirectory(node).resolve(HOST_MEMORY);
    }

    public Path rxFifo(final NicCoordinates node)
    {
        return nodeDirectory(node).resolve(RX_FIFO);
    }

    public Path counters(final NicCoordinates node)
    {
        return nodeDirectory(node).resolve(COUNTERS);
    }

    public Path nicWake(final NicCoordinates node)
    {
        return nodeDirectory(node).resolve(NIC_WAKE);
    }

    public Path driverSocket(final NicCoordinates node)
    {
        return nodeDirectory(node).resolve(DRIVER_SOCKET);
    }

    public Path firmwareLog(final NicCoordinates node)
    {
        return nodeDirectory(node).resolve(FIRMWARE_LOG);
    }

    /**
     * @throws IllegalArgumentException if a driver socket path would exceed the Unix-domain limit.
     */
    public void checkSocketPathLength(final NicCoordinates node)
    {
        final String socket = driverSocket(node).toString();
        if (socket.length() > MAX_SOCKET_PATH)
        {
            throw new IllegalArgumentException("driver socket path " + socket + " is " + socket.length() +
                " bytes, over the Unix-domain limit of " + MAX_SOCKET_PATH + ": set QNIX_DIR to a shorter directory");
        }
    }

    public String toString()
    {
        return path.toString();
    }
}
