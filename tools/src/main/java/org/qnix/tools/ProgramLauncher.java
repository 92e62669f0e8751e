package org.qnix.tools;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.jar.JarFile;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.NicCoordinates;
import org.qnix.daemon.ClusterState;
import org.qnix.examples.Collectives;
import org.qnix.examples.Hello;
import org.qnix.examples.PciCommCat;
import org.qnix.examples.PingPong;
import org.qnix.examples.Stream;
import org.qnix.examples.ViplHello;
import org.qnix.examples.ViplPingPong;
import org.qnix.examples.ViplRdma;
import org.qnix.examples.ViplStream;

/**
 * {@code qnix run}: launches a parallel program of K JVMs on a cluster, process i named (AI, i) in
 * group AI of size K (thesis 3.2), placed on nodes by a node map, each output line prefixed with its
 * rank. Returns the first non-zero exit code and stops the other processes when one fails.
 *
 * <p>Everything it can check is checked before the first JVM starts: the program and, for an example,
 * its arguments; the cluster; and that the cluster's Process Tables have a free entry for every rank
 * on the node the node map puts it on.
 *
 * <pre>{@code
 * int exit = new ProgramLauncher(ClusterDirectory.of("t"), 8, "Hello", List.of()).run(System.out);
 * int mine = new ProgramLauncher(ClusterDirectory.of("t"), 2, "UserMain", List.of())
 *     .classPath(UserClassPath.of("build/classes", null)).run(System.out);
 * }</pre>
 */
public final class ProgramLauncher
{
    /** How processes are placed on nodes. */
    public enum NodeMap
    {
        /** Rank r on node r mod nodes: neighbours in rank live on different NICs. */
        ROUND_ROBIN,
        /** Consecutive ranks share a node: ceil(K / nodes) per node. */
        PACKED;

        static NodeMap parse(final String text)
        {
            switch (text)
            {
                case "round-robin": return ROUND_ROBIN;
                case "packed": return PACKED;
                default: throw new IllegalArgumentException("--node-map " + text + ": use round-robin or packed");
            }
        }
    }

    static final String EXAMPLES_PACKAGE = "org.qnix.examples.";
    /**
     * What run checks of an example before any JVM starts, so that a mistake starts none: its arguments
     * (the example's own parser) and the ranks it takes. The two-party examples need both parties (extra
     * ranks register and leave); ViplHello's extra ranks would be clients the one server never answers.
     */
    private record ExampleRules(Consumer<List<String>> arguments, int minRanks, int maxRanks)
    {
        static ExampleRules atLeast(final int ranks, final Consumer<List<String>> arguments)
        {
            return new ExampleRules(arguments, ranks, Integer.MAX_VALUE);
        }

        void check(final String example, final List<String> args, final int processes)
        {
            try
            {
                arguments.accept(args);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException(example + " " + ex.getMessage());
            }
            if (processes < minRanks || processes > maxRanks)
            {
                throw new IllegalArgumentException("-n " + processes + ": " + example + " takes " +
                    (minRanks == maxRanks ? "exactly " : "at least ") + minRanks + " processes (qnix run -n " +
                    minRanks + " -- " + example + ")");
            }
        }
    }

    private static final Map<String, ExampleRules> EXAMPLES = Map.of(
        Hello.class.getName(), ExampleRules.atLeast(1, Hello.Options::parse),
        PingPong.class.getName(), ExampleRules.atLeast(2, PingPong.Options::parse),
        Stream.class.getName(), ExampleRules.atLeast(2, Stream.Options::parse),
        Collectives.class.getName(), ExampleRules.atLeast(2, Collectives.Options::parse),
        PciCommCat.class.getName(), ExampleRules.atLeast(2, PciCommCat.Options::parse),
        ViplHello.class.getName(), new ExampleRules(ProgramLauncher::viplHelloArguments, 2, 2),
        ViplPingPong.class.getName(), ExampleRules.atLeast(2, ViplPingPong.Options::parse),
        ViplStream.class.getName(), ExampleRules.atLeast(2, ViplStream.Options::parse),
        ViplRdma.class.getName(), ExampleRules.atLeast(2, ViplRdma.Options::parse));
    private static final long STOP_GRACE_MS = 5_000;

    /** ViplHello keeps the README's few lines: its one optional argument, the server's node, is checked here. */
    private static void viplHelloArguments(final List<String> args)
    {
        // ExampleRules.check puts the example's name first.
        if (args.size() > 1)
        {
            throw new IllegalArgumentException(String.join(" ", args) + ": one argument at most, the server's node, " +
                "e.g. 0-0");
        }
        if (!args.isEmpty())
        {
            try
            {
                NicCoordinates.parse(args.get(0));
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException(args.get(0) + ": expected the server's node X-Y, e.g. 0-0");
            }
        }
    }

    /**
     * An example's arguments against the cluster and where the ranks go: ViplHello's server must be a
     * node of the cluster, PciCommCat's listener is rank 0's node, since rank 0 listens where it runs
     * (otherwise the client waited two minutes for nobody), and no QNIX example's message is larger than
     * the cluster's largest (otherwise every rank started, then failed).
     */
    private static void checkExampleAgainstCluster(final String example, final List<String> args,
        final ClusterParameters params, final List<NicCoordinates> placement, final String cluster)
    {
        if (ViplHello.class.getName().equals(example) && !args.isEmpty())
        {
            final NicCoordinates server = NicCoordinates.parse(args.get(0));
            if (!params.hasNode(server))
            {
                throw new IllegalArgumentException("ViplHello " + server + ": cluster '" + cluster + "' has no such " +
                    "node, it is a " + params.torus() + " torus");
            }
        }
        if (PingPong.class.getName().equals(example))
        {
            checkSizes("PingPong", args, PingPong.Options.parse(args).sizes(), params, cluster);
        }
        if (Stream.class.getName().equals(example))
        {
            checkSizes("Stream", args, Stream.Options.parse(args).sizes(), params, cluster);
        }
        if (Collectives.class.getName().equals(example))
        {
            final Collectives.Options options = Collectives.Options.parse(args);
            checkSizes("Collectives", args, options.sizes(), params, cluster);
            if ((long)options.longs() * Long.BYTES > params.maxMessageBytes())
            {
                throw new IllegalArgumentException("Collectives --longs " + options.longs() + ": " +
                    options.longs() * Long.BYTES + " bytes is more than " + params.maxMessageBytes() + " bytes, the " +
                    "largest message of cluster '" + cluster + "'" + (args.contains("--longs") ? "" : " (the default)"));
            }
        }
        if (PciCommCat.class.getName().equals(example))
        {
            final NicCoordinates listener = NicCoordinates.parse(PciCommCat.Options.parse(args).listenerNode());
            if (!listener.equals(placement.get(0)))
            {
                throw new IllegalArgumentException("PciCommCat --listener-node " + listener + ": rank 0 listens on " +
                    "its own node, " + placement.get(0) + " here; leave the option out or give " + placement.get(0));
            }
        }
    }

    /** A QNIX example's message sizes, against the cluster's largest message (the VIPL's check their own). */
    private static void checkSizes(final String example, final List<String> args, final int[] sizes,
        final ClusterParameters params, final String cluster)
    {
        for (final int size : sizes)
        {
            if (size > params.maxMessageBytes())
            {
                // A cluster made with fewer descriptors or smaller pages (ClusterParameters.Builder, as tests
                // make them) may refuse an example's own defaults.
                throw new IllegalArgumentException(example + " --sizes: " + size + " is more than " +
                    params.maxMessageBytes() + " bytes, the largest message of cluster '" + cluster + "'" +
                    (args.contains("--sizes") ? "" : " (the default)"));
            }
        }
    }

    private final ClusterDirectory dir;
    private final int processes;
    private final String program;
    private final List<String> args;
    private NodeMap nodeMap = NodeMap.ROUND_ROBIN;
    private int applicationId = (int)(ProcessHandle.current().pid() & 0x7FFF_FFFF);
    private final List<String> jvmOptions = new ArrayList<>();
    private Consumer<String> lineListener = line -> {};
    private UserClassPath userClassPath = UserClassPath.of(null, null);

    public ProgramLauncher(final ClusterDirectory dir, final int processes, final String program, final List<String> args)
    {
        if (processes < 1)
        {
            throw new IllegalArgumentException("-n " + processes + ": at least one process");
        }
        this.dir = dir;
        this.processes = processes;
        this.program = program;
        this.args = List.copyOf(args);
    }

    public ProgramLauncher nodeMap(final String map)
    {
        this.nodeMap = NodeMap.parse(map);
        return this;
    }

    public ProgramLauncher applicationId(final int ai)
    {
        if (ai < 0)
        {
            // -1 is ANY, the wildcard of a Receive: a process of that name would match every sender.
            throw new IllegalArgumentException("--ai " + ai + ": an Application Identifier is 0 or more " +
                "(-1 is the wildcard ANY)");
        }
        this.applicationId = ai;
        return this;
    }

    public ProgramLauncher jvmOption(final String option)
    {
        jvmOptions.add(option);
        return this;
    }

    /** The user's class path, after qnix's own: where a program of the user's is found. */
    public ProgramLauncher classPath(final UserClassPath classPath)
    {
        this.userClassPath = classPath;
        return this;
    }

    /** Also hands every output line (without the rank prefix) to a listener, e.g. to wait for one. */
    public ProgramLauncher onLine(final Consumer<String> listener)
    {
        this.lineListener = listener;
        return this;
    }

    public int applicationId()
    {
        return applicationId;
    }

    /** @return the node of each rank. */
    public static List<NicCoordinates> place(final NodeMap map, final int processes, final ClusterParameters params)
    {
        final int nodes = params.nodeCount();
        final int perNode = (processes + nodes - 1) / nodes;
        final List<NicCoordinates> placement = new ArrayList<>();
        for (int rank = 0; rank < processes; rank++)
        {
            final int index = NodeMap.ROUND_ROBIN == map ? rank % nodes : rank / perNode;
            placement.add(NicCoordinates.ofIndex(index, params.torusWidth()));
        }
        return placement;
    }

    /**
     * Runs the program to completion.
     *
     * @return 0, or the exit code of the first process that failed.
     */
    public int run(final PrintStream out) throws InterruptedException
    {
        final String[] mainAndClassPath = resolveProgram();
        final ExampleRules example = EXAMPLES.get(mainAndClassPath[0]);
        if (null != example)
        {
            example.check(mainAndClassPath[0].substring(EXAMPLES_PACKAGE.length()), args, processes);
        }
        final ClusterState state = ClusterState.inspect(dir);
        if (!state.isLive())
        {
            throw new IllegalStateException(state.isAbsent() ?
                "no cluster '" + dir.name() + "': start one with ./qnix cluster up --name " + dir.name() :
                state.isForeign() ? "no cluster '" + dir.name() + "': " + state.reason() :
                "cluster '" + dir.name() + "' is stale (" + state.reason() + "): run ./qnix cluster down --name " + dir.name());
        }
        final ClusterParameters params = state.properties().orElseThrow().parameters();
        final List<NicCoordinates> placement = place(nodeMap, processes, params);
        checkExampleAgainstCluster(mainAndClassPath[0], args, params, placement, dir.name());
        checkRoom(placement, params);

        final List<Process> children = new ArrayList<>();
        final List<Thread> pumps = new ArrayList<>();
        final BlockingQueue<Integer> exited = new LinkedBlockingQueue<>();
        // Ctrl-C (or a kill of the launcher): the ranks are stopped on purpose, so their exit codes
        // (143 for SIGTERM) are no failure to report.
        final AtomicBoolean interrupted = new AtomicBoolean();
        final Thread stopper = new Thread(() ->
        {
            interrupted.set(true);
            synchronized (out)
            {
                out.println("[qnix run] interrupted: stopping every rank");
            }
            stopAll(children);
        }, "qnix-run-stop");
        Runtime.getRuntime().addShutdownHook(stopper);
        try
        {
            for (int rank = 0; rank < processes; rank++)
            {
                final List<String> command = new ArrayList<>();
                command.add(JvmFlags.javaExecutable());
                command.addAll(JvmFlags.flags());
                command.add("-XX:+UseSerialGC");
                command.add("-XX:TieredStopAtLevel=1");
                command.addAll(jvmOptions);
                command.add("-cp");
                command.add(mainAndClassPath[1]);
                // Through RankMain, which ends the rank if this launcher dies without stopping it.
                command.add(RankMain.class.getName());
                command.add(mainAndClassPath[0]);
                command.addAll(args);
                final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
                builder.environment().put("QNIX_DIR", dir.path().getParent().toString());
                builder.environment().put("QNIX_CLUSTER", dir.name());
                builder.environment().put("QNIX_NODE", placement.get(rank).toString());
                builder.environment().put("QNIX_AI", Integer.toString(applicationId));
                builder.environment().put("QNIX_PI", Integer.toString(rank));
                builder.environment().put("QNIX_GROUP_SIZE", Integer.toString(processes));
                builder.environment().put(RankMain.LAUNCHER_PID, Long.toString(ProcessHandle.current().pid()));
                final Process child;
                try
                {
                    child = builder.start();
                }
                catch (final IOException ex)
                {
                    throw new UncheckedIOException("cannot start rank " + rank, ex);
                }
                synchronized (children)
                {
                    children.add(child);
                }
                final int exitedRank = rank;
                child.onExit().thenRun(() -> exited.add(exitedRank));
                // Before its output, so that a rank can be found (jstack, a debugger, kill) while it runs.
                synchronized (out)
                {
                    out.println("[qnix run] rank " + rank + " is OS pid " + child.pid() + " on node " +
                        placement.get(rank));
                }
                final int r = rank;
                final Thread pump = new Thread(() -> pump(child, r, out, lineListener), "qnix-run-output-" + rank);
                pump.setDaemon(true);
                pump.start();
                pumps.add(pump);
            }

            int firstFailure = 0;
            for (int remaining = processes; remaining > 0; remaining--)
            {
                // Blocks until a rank exits: the JDK's process reaper waits for it, nothing polls, so a
                // launcher of programs blocked in long waits costs no CPU (issue 13).
                final int rank = exited.take();
                final int exit = children.get(rank).exitValue();
                if (0 != exit && 0 == firstFailure && !interrupted.get())
                {
                    firstFailure = exit;
                    out.println("[qnix run] rank " + rank + " exited with code " + exit + "; stopping the others");
                    stopAll(children);
                }
            }
            for (final Thread pump : pumps)
            {
                pump.join(STOP_GRACE_MS);
            }
            return firstFailure;
        }
        finally
        {
            stopAll(children);
            try
            {
                Runtime.getRuntime().removeShutdownHook(stopper);
            }
            catch (final IllegalStateException ignore)
            {
                // Already shutting down: the hook is running.
            }
        }
    }

    /**
     * Refuses a run the cluster cannot take: more ranks than P x nodes, or more ranks on a node than its
     * Process Table has free entries. The driver would refuse the extra registrations anyway, but only
     * after every JVM had started and the others had waited for them.
     */
    private void checkRoom(final List<NicCoordinates> placement, final ClusterParameters params)
    {
        final int perNic = params.maxProcessesPerNic();
        final int capacity = perNic * params.nodeCount();
        if (processes > capacity)
        {
            throw new IllegalArgumentException("-n " + processes + ": cluster '" + dir.name() + "' takes at most " +
                capacity + " processes (P = " + perNic + " per NIC x " + params.nodeCount() + " NICs)");
        }
        final Map<NicCoordinates, Integer> ranks = new LinkedHashMap<>();
        placement.forEach(node -> ranks.merge(node, 1, Integer::sum));
        final Map<NicCoordinates, Integer> taken = new HashMap<>();
        ClusterStatus.read(dir).processes().forEach(p -> taken.merge(p.node(), 1, Integer::sum));
        for (final Map.Entry<NicCoordinates, Integer> node : ranks.entrySet())
        {
            final int inUse = taken.getOrDefault(node.getKey(), 0);
            if (node.getValue() > perNic - inUse)
            {
                throw new IllegalStateException("-n " + processes + ": node " + node.getKey() + " would get " +
                    node.getValue() + " ranks but has " + (perNic - inUse) + " free Process Table entries of " +
                    perNic + " (" + inUse + " taken; qnix cluster status --name " + dir.name() + " lists them)");
            }
        }
    }

    private static void pump(final Process child, final int rank, final PrintStream out, final Consumer<String> listener)
    {
        try (BufferedReader reader = new BufferedReader(
            new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while (null != (line = reader.readLine()))
            {
                synchronized (out)
                {
                    out.println("[" + rank + "] " + line);
                }
                listener.accept(line);
            }
        }
        catch (final IOException ignore)
        {
            // The process is gone.
        }
    }

    private static void stopAll(final List<Process> children)
    {
        final List<Process> alive = new ArrayList<>();
        synchronized (children)
        {
            for (final Process child : children)
            {
                if (child.isAlive())
                {
                    child.destroy();
                    alive.add(child);
                }
            }
        }
        for (final Process child : alive)
        {
            try
            {
                if (!child.waitFor(STOP_GRACE_MS, TimeUnit.MILLISECONDS))
                {
                    child.destroyForcibly();
                }
            }
            catch (final InterruptedException ex)
            {
                child.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * @return main class and class path for the program: a jar, a class of the user's class path, an
     * example's short name, or a class of qnix's class path, in that order.
     */
    private String[] resolveProgram()
    {
        final String classPath = userClassPath.after(JvmFlags.classPath());
        if (program.endsWith(".jar"))
        {
            final File jar = new File(program);
            if (!jar.isFile())
            {
                throw new IllegalArgumentException("no such jar: " + program);
            }
            try (JarFile file = new JarFile(jar))
            {
                final String main = null == file.getManifest() ? null :
                    file.getManifest().getMainAttributes().getValue("Main-Class");
                if (null == main)
                {
                    throw new IllegalArgumentException(program + " has no Main-Class in its manifest");
                }
                return new String[]{ main, jar.getAbsolutePath() + File.pathSeparator + classPath };
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("cannot read " + program + " as a jar: " + ex.getMessage(), ex);
            }
        }
        // The user's own class first: their Hello, given with -cp, is the one they mean.
        if (userClassPath.contains(program))
        {
            return new String[]{ program, classPath };
        }
        if (!program.contains(".") && exists(EXAMPLES_PACKAGE + program))
        {
            return new String[]{ EXAMPLES_PACKAGE + program, classPath };
        }
        if (!exists(program))
        {
            throw new IllegalArgumentException("no class " + program + " on the class path (" +
                (userClassPath.isEmpty() ? "give yours with -cp or $CLASSPATH" : userClassPath.describe()) +
                "; examples: Hello, PingPong, Stream, Collectives, ViplPingPong, ViplStream, ViplRdma, ViplHello, PciCommCat)");
        }
        return new String[]{ program, classPath };
    }

    private static boolean exists(final String className)
    {
        try
        {
            Class.forName(className, false, ProgramLauncher.class.getClassLoader());
            return true;
        }
        catch (final ClassNotFoundException ex)
        {
            return false;
        }
    }
}
