package org.qnix.daemon;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import org.agrona.CloseHelper;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicProcessor;
import org.qnix.abi.ProcessStartTicks;
import org.qnix.firmware.CappedLog;
import org.qnix.firmware.IdleStrategies;
import org.qnix.firmware.NodeImage;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The emulator daemon: the power switch of one emulated cluster and the kernel driver of each of its
 * nodes. It creates the cluster directory and files, starts one NIC control program per node, waits
 * until every one reports running, opens the driver sockets, marks the cluster up, and runs until it
 * receives SIGTERM ({@code qnix cluster down}), when it stops everything it started and removes the
 * files. Users start it through {@code qnix cluster up}.
 */
@Command(name = "qnix-daemon", mixinStandardHelpOptions = true,
    description = "Runs one emulated QNIX cluster (started by `qnix cluster up`).")
public final class EmulatorDaemon implements Callable<Integer>
{
    /** Property written into cluster.properties for each node started with a JDWP agent. */
    public static final String DEBUG_PORT_PREFIX = "debug.";
    private static final long FIRMWARE_READY_TIMEOUT_MS = 120_000;

    @Option(names = "--cluster-dir", required = true, description = "Directory of the cluster to create.")
    private Path clusterDir;

    @Option(names = "--firmware", defaultValue = ClusterProperties.FIRMWARE_SHARED,
        description = "shared (every NIC on one thread of one firmware JVM), processes (one JVM per NIC) or " +
            "threads (every NIC on a thread of its own in the daemon).")
    private String firmwareMode;

    @Option(names = "--idle", defaultValue = IdleStrategies.BACKOFF,
        description = "Firmware idle strategy: backoff, yield or busy.")
    private String idle;

    @Option(names = "--nic-cpu", defaultValue = "auto",
        description = "The CPU of the NICs' control programs (shared placement): auto, none or a CPU number.")
    private String nicCpu;

    @Option(names = "--debug-port", description = "NODE=PORT: start that node's firmware JVM with a JDWP agent.")
    private Map<String, Integer> debugPorts = new LinkedHashMap<>();

    @Option(names = "--set", description = "KEY=VALUE cluster parameter, as in cluster.properties.")
    private Map<String, String> settings = new LinkedHashMap<>();

    @Option(names = "--shared-with-group",
        description = "Files 0660 and directories 0770, and the drivers accept the group's processes.")
    private boolean sharedWithGroup;

    private final List<FirmwareLauncher> launchers = new ArrayList<>();
    private final List<NodeImage> images = new ArrayList<>();
    private final List<NodeDriver> drivers = new ArrayList<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private ClusterDirectory dir;
    private boolean shutDown;

    public Integer call() throws Exception
    {
        dir = new ClusterDirectory(clusterDir.getParent(), clusterDir.getFileName().toString());
        final Properties props = new Properties();
        props.putAll(settings);
        final ClusterParameters params = ClusterParameters.fromProperties(props);
        ClusterProperties.checkFirmwareMode(firmwareMode);
        IdleStrategies.parse(idle);
        final int cpu = NicProcessor.resolve(nicCpu, firmwareMode);

        final long pid = ProcessHandle.current().pid();
        final long startMs = ProcessHandle.current().info().startInstant()
            .map(java.time.Instant::toEpochMilli).orElse(System.currentTimeMillis());
        final ClusterState existing = ClusterState.inspect(dir);
        if (existing.isLive())
        {
            // Started by hand on a running cluster: creating its files again would truncate the memory every
            // one of its processes maps (SIGBUS), and this daemon's exit would remove them.
            System.err.println("qnix-daemon: not starting on " + dir.path() + ": " + existing.alreadyUp());
            return 1;
        }
        final String marker = JvmFlags.clusterMarker(dir.path());
        if (!dir.path().toAbsolutePath().toString().equals(System.getProperty(JvmFlags.CLUSTER_PROPERTY)))
        {
            // ClusterState.inspect takes a daemon without the marker on its command line for a reused pid:
            // every later look would call this cluster stale, and a second daemon or `cluster up` would
            // remove the files its processes map. Compared as text, as inspect compares it: a relative
            // path in the property would not be found on the command line.
            System.err.println("qnix-daemon: not starting on " + dir.path() + ": this JVM lacks the cluster's " +
                "marker; add " + marker + " first on the java command line, or bring the cluster up with: " +
                "QNIX_DIR=" + dir.path().getParent() + " ./qnix cluster up --name " + dir.name());
            return 1;
        }
        // `cluster up` created the directory and its marker; a daemon started by hand creates them itself.
        ClusterFiles.createOrCheck(dir, sharedWithGroup);
        // The firmware JVM binds itself to the CPU, and registering programs move off it, as this file says.
        ClusterProperties state = ClusterProperties.of(params, pid, startMs, ProcessStartTicks.of(pid), firmwareMode,
            ClusterProperties.STATE_STARTING)
            .with(ClusterProperties.NIC_CPU, Integer.toString(cpu));
        state.write(dir.propertiesFile());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown(false), "daemon-shutdown"));

        try
        {
            for (int i = 0; i < params.nodeCount(); i++)
            {
                final NicCoordinates node = NicCoordinates.ofIndex(i, params.torusWidth());
                dir.checkSocketPathLength(node);
                // Made here, with the cluster directory's kind of mode, before NodeImage fills it.
                ClusterFiles.createNodeDirectory(dir, node);
                own(images, NodeImage.create(dir, params, node));
            }
            if (ClusterProperties.FIRMWARE_SHARED.equals(firmwareMode))
            {
                // One firmware JVM for every NIC: the "hardware", its control programs on one thread.
                final FirmwareLauncher launcher = own(launchers, new FirmwareLauncher(dir, params, images));
                launcher.startProcess(idle, debugPorts.values().stream().findFirst().orElse(0));
            }
            else
            {
                for (final NodeImage image : images)
                {
                    final FirmwareLauncher launcher = own(launchers, new FirmwareLauncher(dir, params, List.of(image)));
                    if (ClusterProperties.FIRMWARE_THREADS.equals(firmwareMode))
                    {
                        launcher.startThread(idle);
                    }
                    else
                    {
                        launcher.startProcess(idle, debugPorts.getOrDefault(image.node().toString(), 0));
                    }
                }
            }
            for (final FirmwareLauncher launcher : launchers)
            {
                launcher.awaitRunning(FIRMWARE_READY_TIMEOUT_MS);
            }
            final ClusterRegistry registry =
                new ClusterRegistry(new NicCpuPlacement(cpu, NicProcessor.usableCpus().size() - 1, ProcessCpus.OS));
            final NicHeartbeats heartbeats = new NicHeartbeats(images);
            final DriverAccess access = DriverAccess.of(dir, sharedWithGroup);
            for (int i = 0; i < params.nodeCount(); i++)
            {
                final NodeImage image = images.get(i);
                final NodeDriver driver =
                    own(drivers, new NodeDriver(image, registry, dir.driverSocket(image.node()), heartbeats, access));
                driver.start();
            }
        }
        catch (final Exception ex)
        {
            System.out.println("cluster " + dir.name() + " failed to start: " + ex.getMessage());
            ex.printStackTrace(System.out);
            // shutdown(true) marks cluster.properties FAILED for `cluster up`; after a SIGTERM's shutdown,
            // which removed the files, it writes nothing, so no stray cluster.properties is left behind.
            shutdown(true);
            return 1;
        }

        ClusterProperties upState = state.withState(ClusterProperties.STATE_UP);
        for (final Map.Entry<String, Integer> debug : debugPorts.entrySet())
        {
            upState = upState.with(DEBUG_PORT_PREFIX + debug.getKey(), Integer.toString(debug.getValue()));
        }
        upState.write(dir.propertiesFile());
        System.out.println("cluster " + dir.name() + " is up: " + params.nodeCount() + " nodes, firmware as " +
            firmwareMode + (cpu >= 0 ? " on CPU " + cpu : "") + ", daemon pid " + pid);
        stopped.await();
        return 0;
    }

    /**
     * @return {@code resource}, now closed by {@link #shutdown}; closed at once, with an exception, if a
     * SIGTERM (the CLI's `up` timeout, a Ctrl-C) began the shutdown while the cluster was starting.
     */
    private synchronized <T extends AutoCloseable> T own(final List<T> owner, final T resource)
    {
        if (shutDown)
        {
            CloseHelper.quietClose(resource);
            throw new IllegalStateException("stopped while starting");
        }
        owner.add(resource);
        return resource;
    }

    /**
     * Stops drivers and control programs and removes the files qnix named; keeps only the log (and the
     * state) if the start failed, so that {@code cluster up} can show why. Files it did not create are
     * left where they are, and said so in the log.
     */
    private synchronized void shutdown(final boolean keepLog)
    {
        if (shutDown)
        {
            return;
        }
        shutDown = true;
        try
        {
            ClusterProperties.read(dir.propertiesFile()).ifPresent(
                p -> p.withState(keepLog ? ClusterProperties.STATE_FAILED : ClusterProperties.STATE_STOPPING)
                    .write(dir.propertiesFile()));
        }
        catch (final RuntimeException ignore)
        {
        }
        CloseHelper.quietCloseAll(drivers);
        CloseHelper.quietCloseAll(launchers);
        // The images stay mapped until the process exits, which follows: a driver's connection thread
        // (a registration or a VIA connection waiting) may still read them, and an unmapped page would be
        // a SIGSEGV of the daemon half-way through removing the files. Removing a mapped file is fine.
        try
        {
            (keepLog ? ClusterFiles.removeAllButLog(dir) : ClusterFiles.remove(dir)).stream()
                .filter(line -> !line.startsWith("removed "))
                .forEach(System.out::println);
        }
        catch (final RuntimeException ex)
        {
            System.out.println("could not remove " + dir.path() + ": " + ex);
        }
        stopped.countDown();
    }

    public static void main(final String[] args)
    {
        // Its output is daemon.log, in memory by default, and processes can make it write lines.
        CappedLog.install(CappedLog.DEFAULT_LIMIT_BYTES);
        final int exit = new CommandLine(new EmulatorDaemon()).execute(args);
        System.exit(exit);
    }
}
