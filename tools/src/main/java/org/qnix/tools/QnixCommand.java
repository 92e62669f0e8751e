package org.qnix.tools;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicProcessor;
import org.qnix.abi.ShortFlow;
import org.qnix.daemon.ClusterLock;
import org.qnix.daemon.ClusterState;
import org.qnix.examples.OneLineFailures;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code qnix} command line.
 */
@Command(name = "qnix", mixinStandardHelpOptions = true, version = "qnix 0.1.0",
    description = {
        "An emulated cluster of QNIX user-level network cards on one host: the NICs' firmware in one JVM (or one " +
            "per NIC), shared-memory files as NIC and host memory, real multi-JVM message-passing programs.",
        "",
        "Start with `qnix demo`, or: qnix cluster up; qnix run -n 4 -- Hello; qnix cluster down." },
    subcommands = { QnixCommand.Demo.class, QnixCommand.Cluster.class, QnixCommand.Run.class, Bench.class,
        PsCommand.class, StatCommand.class, InspectCommand.class, TraceCommand.class,
        CommandLine.HelpCommand.class })
public final class QnixCommand implements Runnable
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public void run()
    {
        spec.commandLine().usage(System.out);
    }

    /** Exit codes. */
    static final int OK = 0;
    static final int FAILED = 1;
    static final int BAD_ARGUMENT = 2;

    public static void main(final String[] args)
    {
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine()
    {
        final CommandLine cli = new CommandLine(new QnixCommand()).setUsageHelpWidth(100);
        // One line, not picocli's message followed by the whole usage: the help is one option away.
        cli.setParameterExceptionHandler((ex, args) ->
        {
            final CommandLine where = ex.getCommandLine();
            final List<String> suggestions = ex instanceof CommandLine.UnmatchedArgumentException ?
                ((CommandLine.UnmatchedArgumentException)ex).getSuggestions() : List.of();
            where.getErr().println("qnix: " + ex.getMessage().replace(System.lineSeparator(), "; ") +
                (suggestions.isEmpty() ? "" : "; did you mean " + String.join(" or ", suggestions) + "?") +
                " (" + where.getCommandSpec().qualifiedName() + " --help lists the options)");
            return BAD_ARGUMENT;
        });
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) ->
        {
            if (ex instanceof IllegalArgumentException)
            {
                commandLine.getErr().println("qnix: " + ex.getMessage());
                return BAD_ARGUMENT;
            }
            if (ex instanceof IllegalStateException || ex instanceof java.io.UncheckedIOException)
            {
                commandLine.getErr().println("qnix: " + ex.getMessage());
                return FAILED;
            }
            if (OneLineFailures.isLibraryFailure(ex))
            {
                // A bench or demo JVM is a program of the cluster too: the cluster went down under it,
                // its NIC stopped, a peer went away. The exception names what happened.
                commandLine.getErr().println("qnix: " + ex.getClass().getSimpleName() + ": " + ex.getMessage());
                return FAILED;
            }
            throw ex;
        });
        return cli;
    }

    static String clusterName(final String option)
    {
        return null != option ? option : ClusterDirectory.defaultClusterName();
    }

    @Command(name = "cluster", mixinStandardHelpOptions = true,
        description = "Bring an emulated cluster up, show its state, take it down.",
        subcommands = { Up.class, Status.class, Down.class })
    static final class Cluster implements Runnable
    {
        @CommandLine.Spec
        private CommandLine.Model.CommandSpec spec;

        public void run()
        {
            spec.commandLine().usage(System.out);
        }
    }

    @Command(name = "up", mixinStandardHelpOptions = true,
        description = {
            "Bring up a cluster.",
            "Creates its files under $QNIX_DIR (default /dev/shm/qnix), the NICs' control programs (--firmware) " +
                "and one driver socket per node; returns when every NIC reports running. A stale cluster of the same " +
                "name (its daemon died) is cleaned up first. A directory of that name that qnix did not create is " +
                "refused, as is a second `up` while the first is running. Every byte of the files is reserved at " +
                "once: sizes that do not fit the file system's free space are refused before anything starts. Files " +
                "and directories are yours only (0600, 0700)." })
    static final class Up implements Callable<Integer>
    {
        @Option(names = "--name", description = "Cluster name (default: $QNIX_CLUSTER or 'default').")
        String name;

        @Option(names = "--torus", defaultValue = "2x2", description = "Topology WxH (default: ${DEFAULT-VALUE}).")
        String torus;

        @Option(names = "--firmware", defaultValue = "shared",
            description = "Where the NIC control programs run: shared (default: every NIC round-robin on one thread " +
                "of one firmware JVM, the fastest here), processes (one JVM per NIC) or threads (each NIC a thread " +
                "of the daemon).")
        String firmware;

        @Option(names = "--idle", defaultValue = "backoff",
            description = "Firmware idle strategy: backoff (default: hot for --hot-us after work, then parks), " +
                "yield or busy.")
        String idle;

        @Option(names = "--nic-cpu", defaultValue = "auto", paramLabel = "auto|none|CPU",
            description = "The CPU that plays the NICs' processor with --firmware shared: the firmware JVM runs " +
                "there and programs registered with the cluster keep off it while registered, except those the driver " +
                "places there when the other CPUs hold more (on two CPUs: rank 3 of a job, then every second rank) " +
                "(default auto: the highest-numbered CPU when this command's cpuset, a container's, has two or more; " +
                "a taskset mask does not count; none: the scheduler decides).")
        String nicCpu;

        @Option(names = "--hot-us", paramLabel = "MICROSECONDS",
            description = "How long the firmware (idle backoff) and the programs' backoff and sleep doorbell waits " +
                "keep yielding after their last work before they park or sleep (default 300; 0: at once).")
        Integer hotUs;

        @Option(names = "--short-flow", defaultValue = "eager", paramLabel = "eager|permission",
            description = "How Send_Short and the short casts travel: eager (default: with their data at once, " +
                "thesis 3.7) or permission (Permission_Request, Permission_Reply, then the data, thesis 3.5.1).")
        String shortFlow;

        @Option(names = "--sdram", description = "NIC local memory per node, e.g. 64M (default 64M).")
        String sdram;

        @Option(names = "--host-mem", description = "DMA-able host memory per node, e.g. 256M (default 256M).")
        String hostMem;

        @Option(names = "--processes", description = "P: Virtual Network Interfaces per NIC (default 64).")
        Integer processes;

        @Option(names = "--contexts", description = "M: Send and Receive Contexts per process (default 32).")
        Integer contexts;

        @Option(names = "--command-queue", description = "N: Command Queue entries, N >= 2M (default 64).")
        Integer commandQueue;

        @Option(names = "--shared-with-group",
            description = "Let your group use the cluster: files 0660 and directories 0770 instead of 0600 and 0700, " +
                "and the drivers accept its processes.")
        boolean sharedWithGroup;

        @Option(names = "--debug-firmware", paramLabel = "X-Y[:PORT]",
            description = "Start that node's firmware JVM with a JDWP agent (default port 5005). Repeatable.")
        List<String> debug = new ArrayList<>();

        public Integer call() throws Exception
        {
            final ClusterParameters.Builder builder = ClusterParameters.builder().torus(torus);
            builder.shortFlow(parseShortFlow(shortFlow));
            if (null != sdram)
            {
                builder.sdramBytes(ClusterParameters.parseSize("--sdram", sdram));
            }
            if (null != hostMem)
            {
                builder.hostMemoryBytes(ClusterParameters.parseSize("--host-mem", hostMem));
            }
            if (null != processes)
            {
                builder.processes(processes);
            }
            if (null != contexts)
            {
                builder.contexts(contexts);
            }
            if (null != commandQueue)
            {
                builder.commandQueueEntries(commandQueue);
            }
            if (null != hotUs)
            {
                builder.hotUs(hotUs);
            }
            final ClusterControl.Settings settings =
                new ClusterControl.Settings(clusterName(name), builder.build()).firmware(firmware).idle(idle)
                    .nicCpu(nicCpu).sharedWithGroup(sharedWithGroup);
            int nextPort = 5005;
            for (final String spec : debug)
            {
                final String[] parts = spec.split(":", -1);
                final int port = parts.length > 1 ? debugPort(spec, parts[1]) : nextPort;
                nextPort = port + 1;
                settings.debug(debugNode(spec, parts[0]), port);
            }
            // Taken down again if interrupted before it is up: Ctrl-C does not reach the daemon's session.
            final OwnedCluster owned = OwnedCluster.up(settings, System.out, System.out);
            if (!owned.keep())
            {
                // Interrupted as it came up: the shutdown hook says so and takes it down.
                return FAILED;
            }
            final ClusterDirectory dir = owned.directory();
            final ClusterParameters params = settings.params;
            final int cpu = ClusterProperties.read(dir.propertiesFile()).map(ClusterProperties::nicCpu)
                .orElse(NicProcessor.NONE);
            System.out.println("cluster '" + dir.name() + "' is up: " + params.torus() +
                " torus, " + params.nodeCount() + " NICs, firmware as " + settings.firmware +
                (cpu >= 0 ? " on CPU " + cpu + " (programs keep off it, but those the driver places there)" : "") + ", short messages " +
                params.shortFlow().text() + ", files in " + dir.path());
            settings.debugPorts.forEach((node, port) -> System.out.println("  firmware of node " + node +
                " listens for a debugger on port " + port + ": jdb -attach localhost:" + port +
                " (loopback only; or attach your IDE's remote JVM debugger there)"));
            System.out.println("next: ./qnix run -n 4 --cluster " + dir.name() + " -- Hello");
            return OK;
        }

        private static ShortFlow parseShortFlow(final String text)
        {
            try
            {
                return ShortFlow.parse(text);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException("--short-flow " + text + ": must be eager or permission", ex);
            }
        }

        private static NicCoordinates debugNode(final String spec, final String node)
        {
            try
            {
                return NicCoordinates.parse(node);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException("--debug-firmware " + spec +
                    ": expected X-Y[:PORT], e.g. 1-0 or 1-0:5005");
            }
        }

        private static int debugPort(final String spec, final String port)
        {
            try
            {
                return Integer.parseInt(port);
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("--debug-firmware " + spec + ": PORT " + port +
                    " is not a number (X-Y[:PORT], e.g. 1-0:5005)");
            }
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show a cluster's nodes (firmware pid, heartbeat age) and registered processes.")
    static final class Status implements Callable<Integer>
    {
        @Option(names = "--name", description = "Cluster name (default: $QNIX_CLUSTER or 'default').")
        String name;

        public Integer call()
        {
            final ClusterDirectory dir = ClusterDirectory.of(clusterName(name));
            final ClusterState state = ClusterState.inspect(dir);
            if (state.isAbsent())
            {
                // An error, not a state: reported as every other error is (stderr, "qnix:", exit 1).
                throw new IllegalStateException("no cluster '" + dir.name() + "' (" + state.reason() +
                    "); start one with ./qnix cluster up --name " + dir.name());
            }
            final Optional<ClusterLock.Holder> busy = ClusterLock.holder(dir);
            if (busy.isPresent())
            {
                // Half-built (or half-removed): not stale, not yet marked, its files not all there.
                System.out.println(busy.get().describe(dir) + "; ask again when it is done");
                return FAILED;
            }
            if (state.isForeign())
            {
                throw new IllegalStateException("no cluster '" + dir.name() + "': " + state.reason());
            }
            if (state.isStale())
            {
                System.out.println("cluster '" + dir.name() + "' is STALE: " + state.reason() + ". Its files remain in " +
                    dir.path() + "; `qnix cluster down --name " + dir.name() + "` (or `cluster up` with the same name) " +
                    "cleans it up.");
                return FAILED;
            }
            ClusterStatus.read(dir).print(System.out);
            return OK;
        }
    }

    @Command(name = "down", mixinStandardHelpOptions = true,
        description = {
            "Stop a cluster's daemon and firmware and remove its files; cleans up a stale cluster too.",
            "Removes only the files qnix created, by name; anything else in the directory is left and listed.",
            "A name with no cluster is not an error: it prints \"nothing to do\" and exits 0, so a script can " +
                "always call it to clean up; a lock file of that name left by a process that died holding it " +
                "goes too." })
    static final class Down implements Callable<Integer>
    {
        @Option(names = "--name", description = "Cluster name (default: $QNIX_CLUSTER or 'default').")
        String name;

        public Integer call() throws Exception
        {
            final ClusterDirectory dir = ClusterDirectory.of(clusterName(name));
            if (!ClusterControl.down(dir, System.out))
            {
                System.out.println("no cluster '" + dir.name() + "': nothing to do");
            }
            return OK;
        }
    }

    @Command(name = "run", mixinStandardHelpOptions = true,
        description = {
            "Launch a parallel program of K JVMs on a cluster.",
            "Process i is named (AI, i) in group AI of size K, placed on the cluster's nodes, with its output " +
                "prefixed by its rank; each rank's OS pid is printed as it starts. Exits with the first non-zero " +
                "exit code and stops the other processes when one fails.",
            "PROGRAM is a main class of your class path (-cp, or $CLASSPATH), an example (Hello, PingPong, " +
                "Stream, Collectives; VIPL: ViplHello, ViplPingPong, ViplStream, ViplRdma; PCIComm: PciCommCat), a " +
                "jar with a Main-Class, or a class of qnix's own class path. Your class path goes after qnix's, so " +
                "programs run on the libqnix of the cluster.",
            "Refused before any JVM starts: an unknown program, an example's bad arguments or rank count, and " +
                "more ranks than the cluster has free Process Table entries (P per NIC) on the nodes they go to." })
    static final class Run implements Callable<Integer>
    {
        @Option(names = "-n", required = true, description = "Number of processes.")
        int processes;

        @Option(names = "--cluster", description = "Cluster name (default: $QNIX_CLUSTER or 'default').")
        String cluster;

        @Option(names = "--node-map", defaultValue = "round-robin",
            description = "round-robin (default: rank r on node r mod nodes) or packed (consecutive ranks on one " +
                "node, ceil(K / nodes) to a node).")
        String nodeMap;

        @Option(names = "--ai", description = "Application Identifier, 0 or more (default: this launcher's pid).")
        Integer ai;

        @Option(names = { "-cp", "--classpath", "--class-path" }, paramLabel = "PATH",
            description = "Your program's classes: directories and jars separated by ':', dir/* for every jar " +
                "in dir, as for java (default: $CLASSPATH).")
        String classPath;

        @Parameters(index = "0", paramLabel = "PROGRAM", description = "Main class, jar, or example name.")
        String program;

        @Parameters(index = "1..*", paramLabel = "ARGS", description = "Arguments for the program.")
        List<String> args = new ArrayList<>();

        public Integer call() throws Exception
        {
            final ProgramLauncher launcher = new ProgramLauncher(
                ClusterDirectory.of(clusterName(cluster)), processes, program, args).nodeMap(nodeMap)
                .classPath(UserClassPath.of(classPath, System.getenv("CLASSPATH")));
            if (null != ai)
            {
                launcher.applicationId(ai);
            }
            return launcher.run(System.out);
        }
    }

    @Command(name = "demo", mixinStandardHelpOptions = true,
        description = {
            "Run the demo on an embedded 2x2 cluster: Hello, PingPong, ViplPingPong, Stream, Collectives.",
            "Brings up the cluster, runs Hello on 4 processes and shows the cluster status while they are " +
                "registered, then PingPong (one-way latency, QNIX), ViplPingPong (the same through a VIA Reliable " +
                "Delivery VI) and Stream (bandwidth) between two processes on different nodes, then Collectives " +
                "(barrier, broadcast, all-reduce) on 4 processes, prints what they measured and a few of the NICs' " +
                "counters (qnix stat), and tears everything down." })
    static final class Demo implements Callable<Integer>
    {
        @Option(names = "--name", defaultValue = "demo", description = "Cluster name (default: ${DEFAULT-VALUE}).")
        String name;

        @Option(names = "--firmware", defaultValue = "shared",
            description = "shared (default), processes or threads (see cluster up --help).")
        String firmware;

        public Integer call() throws Exception
        {
            return DemoScript.run(name, firmware, System.out);
        }
    }
}
