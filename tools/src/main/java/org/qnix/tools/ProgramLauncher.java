package org.qnix.tools;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.jar.JarFile;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.NicCoordinates;
import org.qnix.daemon.ClusterState;

/**
 * {@code qnix run}: launches a parallel program of K JVMs on a cluster, process i named (AI, i) in
 * group AI of size K (thesis 3.2), placed on nodes by a node map, each output line prefixed with its
 * rank. Returns the first non-zero exit code and stops the other processes when one fails.
 *
 * <pre>{@code
 * int exit = new ProgramLauncher(ClusterDirectory.of("t"), 8, "Hello", List.of()).run(System.out);
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
    private static final long STOP_GRACE_MS = 5_000;

    private final ClusterDirectory dir;
    private final int processes;
    private final String program;
    private final List<String> args;
    private NodeMap nodeMap = NodeMap.ROUND_ROBIN;
    private int applicationId = (int)(ProcessHandle.current().pid() & 0x7FFF_FFFF);
    private final List<String> jvmOptions = new ArrayList<>();
    private Consumer<String> lineListener = line -> {};

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
        this.applicationId = ai;
        return this;
    }

    public ProgramLauncher jvmOption(final String option)
    {
        jvmOptions.add(option);
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
        final String[] mainAndClassPath = resolveProgram();

        final List<Process> children = new ArrayList<>();
        final List<Thread> pumps = new ArrayList<>();
        final Thread stopper = new Thread(() -> stopAll(children), "qnix-run-stop");
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
                command.add(mainAndClassPath[0]);
                command.addAll(args);
                final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
                builder.environment().put("QNIX_DIR", dir.path().getParent().toString());
                builder.environment().put("QNIX_CLUSTER", dir.name());
                builder.environment().put("QNIX_NODE", placement.get(rank).toString());
                builder.environment().put("QNIX_AI", Integer.toString(applicationId));
                builder.environment().put("QNIX_PI", Integer.toString(rank));
                builder.environment().put("QNIX_GROUP_SIZE", Integer.toString(processes));
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
                final int r = rank;
                final Thread pump = new Thread(() -> pump(child, r, out, lineListener), "qnix-run-output-" + rank);
                pump.setDaemon(true);
                pump.start();
                pumps.add(pump);
            }

            int firstFailure = 0;
            int remaining = processes;
            final boolean[] done = new boolean[processes];
            while (remaining > 0)
            {
                for (int rank = 0; rank < processes; rank++)
                {
                    final Process child = children.get(rank);
                    if (done[rank] || child.isAlive())
                    {
                        continue;
                    }
                    done[rank] = true;
                    remaining--;
                    final int exit = child.exitValue();
                    if (0 != exit && 0 == firstFailure)
                    {
                        firstFailure = exit;
                        out.println("[qnix run] rank " + rank + " exited with code " + exit + "; stopping the others");
                        stopAll(children);
                    }
                }
                Thread.sleep(10);
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

    /** @return main class and class path for the program: a jar, a class, or an example's short name. */
    private String[] resolveProgram()
    {
        final String classPath = JvmFlags.classPath();
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
                throw new UncheckedIOException("cannot read " + program, ex);
            }
        }
        if (!program.contains(".") && exists(EXAMPLES_PACKAGE + program))
        {
            return new String[]{ EXAMPLES_PACKAGE + program, classPath };
        }
        if (!exists(program))
        {
            throw new IllegalArgumentException("no class " + program +
                " on the class path (examples: Hello, PingPong, Stream, Collectives)");
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
