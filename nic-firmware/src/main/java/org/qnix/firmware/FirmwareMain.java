package org.qnix.firmware;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.NicCoordinates;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A firmware JVM: runs the NIC control program of one node until the daemon that started it stops it
 * (SIGTERM) or dies. Started by the daemon, not by users; with {@code --debug-firmware} the daemon
 * adds a JDWP agent to this JVM.
 */
@Command(name = "qnix-firmware", mixinStandardHelpOptions = true,
    description = "Runs the NIC control program of one emulated node (started by the emulator daemon).")
public final class FirmwareMain implements Callable<Integer>
{
    @Option(names = "--cluster-dir", required = true, description = "The cluster directory.")
    private Path clusterDir;

    @Option(names = "--node", required = true, description = "This NIC's coordinates, X-Y.")
    private String node;

    @Option(names = "--daemon-pid", description = "Exit when this process exits (default: never).")
    private long daemonPid;

    @Option(names = "--idle", defaultValue = IdleStrategies.BACKOFF,
        description = "Idle strategy: backoff, yield or busy (default: ${DEFAULT-VALUE}).")
    private String idle;

    @Option(names = "--debug-port", description = "JDWP port this JVM listens on, recorded for status.")
    private int debugPort;

    public Integer call() throws Exception
    {
        final NicCoordinates coordinates = NicCoordinates.parse(node);
        final ClusterDirectory dir = new ClusterDirectory(clusterDir.getParent(), clusterDir.getFileName().toString());
        final ClusterProperties props = ClusterProperties.read(dir.propertiesFile())
            .orElseThrow(() -> new IllegalStateException("no cluster at " + clusterDir));
        final ClusterParameters params = props.parameters();

        final LoadedFirmware firmware = LoadedFirmware.load(dir, params, coordinates);
        firmware.program().runMode(ControlProgramLayout.MODE_PROCESS, debugPort);
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            firmware.close();
            stopped.countDown();
        }, "firmware-shutdown"));
        firmware.start(IdleStrategies.parse(idle));
        System.out.println("NIC " + coordinates + " control program running (pid " + ProcessHandle.current().pid() +
            (debugPort > 0 ? ", JDWP on port " + debugPort : "") + ")");

        if (daemonPid > 0)
        {
            ProcessHandle.of(daemonPid).ifPresentOrElse(
                daemon -> daemon.onExit().thenRun(() ->
                {
                    System.out.println("NIC " + coordinates + ": daemon " + daemonPid + " exited, stopping");
                    System.exit(0);
                }),
                () -> System.exit(0));
        }
        stopped.await();
        return 0;
    }

    public static void main(final String[] args)
    {
        final int exit = new CommandLine(new FirmwareMain()).execute(args);
        if (0 != exit)
        {
            System.exit(exit);
        }
    }
}
