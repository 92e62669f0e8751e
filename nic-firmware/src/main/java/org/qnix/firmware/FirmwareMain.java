package org.qnix.firmware;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import org.agrona.CloseHelper;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicProcessor;
import org.qnix.abi.ProcessStartTicks;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A firmware JVM: runs the NIC control program of one node, or of several round-robin on one thread
 * ({@code --firmware shared}: the "hardware" of the whole cluster), until the daemon that started it
 * stops it (SIGTERM) or dies. Started by the daemon, not by users; with {@code --debug-firmware} the
 * daemon adds a JDWP agent to this JVM.
 */
@Command(name = "qnix-firmware", mixinStandardHelpOptions = true,
    description = "Runs the NIC control programs of emulated nodes (started by the emulator daemon).")
public final class FirmwareMain implements Callable<Integer>
{
    /** How often the daemon's life is looked at: the firmware outlives a killed daemon by at most this. */
    private static final long DAEMON_WATCH_MS = 1_000;

    @Option(names = "--cluster-dir", required = true, description = "The cluster directory.")
    private Path clusterDir;

    @Option(names = "--node", required = true,
        description = "A NIC's coordinates, X-Y; several run round-robin on one thread.")
    private List<String> nodes;

    @Option(names = "--daemon-pid", description = "Exit when this process exits (default: never).")
    private long daemonPid;

    @Option(names = "--idle", defaultValue = IdleStrategies.BACKOFF,
        description = "Idle strategy: backoff, yield or busy (default: ${DEFAULT-VALUE}).")
    private String idle;

    @Option(names = "--debug-port", description = "JDWP port this JVM listens on, recorded for status.")
    private int debugPort;

    public Integer call() throws Exception
    {
        final ClusterDirectory dir = new ClusterDirectory(clusterDir.getParent(), clusterDir.getFileName().toString());
        final ClusterProperties props = ClusterProperties.read(dir.propertiesFile())
            .orElseThrow(() -> new IllegalStateException("no cluster at " + clusterDir));
        final ClusterParameters params = props.parameters();
        // Before any agent starts, so that every thread of this JVM, the duty cycle's too, runs there.
        final String unbound = NicProcessor.bindProcess(props.nicCpu());
        if (null != unbound)
        {
            System.out.println("NICs " + String.join(", ", nodes) + ": not bound to CPU " + props.nicCpu() + ": " +
                unbound);
        }

        final List<LoadedFirmware> firmware = new ArrayList<>();
        for (final String node : nodes)
        {
            final LoadedFirmware loaded = LoadedFirmware.load(dir, params, NicCoordinates.parse(node));
            firmware.add(loaded);
            loaded.program().runMode(ControlProgramLayout.MODE_PROCESS, debugPort);
        }
        final IdleStrategy idleStrategy = IdleStrategies.parse(idle, params.hotUs(),
            IdleNics.of(firmware.stream().map(LoadedFirmware::program).toList()));
        final AgentRunner shared = 1 == firmware.size() ? null : LoadedFirmware.startShared(firmware, idleStrategy);
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            CloseHelper.close(shared);
            firmware.forEach(LoadedFirmware::close);
            stopped.countDown();
        }, "firmware-shutdown"));
        if (null == shared)
        {
            firmware.get(0).start(idleStrategy);
        }
        System.out.println("NIC" + (1 == nodes.size() ? " " : "s ") + String.join(", ", nodes) +
            " control program" + (1 == nodes.size() ? "" : "s (one thread)") + " running (pid " +
            ProcessHandle.current().pid() + (props.nicCpu() >= 0 && null == unbound ? ", CPU " + props.nicCpu() : "") +
            (debugPort > 0 ? ", JDWP on port " + debugPort : "") + ")");

        if (daemonPid > 0)
        {
            watchDaemon(nodes);
        }
        stopped.await();
        return 0;
    }

    /**
     * Firmware JVMs end with their daemon (a {@code kill -9} of it leaves nobody to stop them). Polled
     * by pid and start: {@link ProcessHandle#onExit} of a process that is not this JVM's child waits
     * for it to be reaped, which an adopter that never reaps (a container's first process) never
     * does; and the JDK's own poll of it backs off to once every 5 s.
     */
    private void watchDaemon(final List<String> nodes)
    {
        final long startTicks = ProcessStartTicks.ofLiving(daemonPid);
        final Thread watch = new Thread(() ->
        {
            try
            {
                while (!ProcessStartTicks.hasExited(daemonPid, startTicks))
                {
                    Thread.sleep(DAEMON_WATCH_MS);
                }
            }
            catch (final InterruptedException ex)
            {
                return;
            }
            System.out.println("NICs " + String.join(", ", nodes) + ": daemon " + daemonPid + " exited, stopping");
            System.exit(0);
        }, "firmware-daemon-watch");
        watch.setDaemon(true);
        watch.start();
    }

    public static void main(final String[] args)
    {
        // Its output is the firmware log, in memory by default, and processes can make it write lines.
        CappedLog.install(CappedLog.DEFAULT_LIMIT_BYTES);
        final int exit = new CommandLine(new FirmwareMain()).execute(args);
        if (0 != exit)
        {
            System.exit(exit);
        }
    }
}
