package org.qnix.tools;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.HostClock;
import org.qnix.firmware.NicCounters;

/**
 * What {@code qnix demo} does: brings up a 2x2 cluster of its own, runs Hello on 4 processes and shows
 * the cluster status while they are registered, then PingPong, ViplPingPong, Stream and Collectives,
 * prints a table of what they measured (from the machine-readable lines they print) and a few of the
 * NICs' counters, and takes the cluster down, whatever happened.
 *
 * <pre>{@code
 * int exit = DemoScript.run("demo", "shared", System.out);
 * }</pre>
 */
final class DemoScript
{
    /** One row of the demo's table: program, bytes, mode, min us, median us, MB/s. */
    private static final String ROW = "   %-12s %-10s %-10s %12s %12s %12s%n";

    private DemoScript()
    {
    }

    /** The demo's table, from the machine-readable lines PingPong, ViplPingPong, Stream and Collectives print. */
    private static void printResults(final List<String> results, final PrintStream out)
    {
        out.println("== what the demo measured (latency: one way, half the round trip; bandwidth: payload MB/s;");
        out.println("   collectives: mean time of one operation on 4 processes, broadcast MB/s counts every receiver)");
        out.printf(ROW, "program", "bytes", "mode", "min us", "median us", "MB/s");
        for (final String line : results)
        {
            final Map<String, String> fields = new HashMap<>();
            for (final String part : line.split(" "))
            {
                final int eq = part.indexOf('=');
                if (eq > 0)
                {
                    fields.put(part.substring(0, eq), part.substring(eq + 1));
                }
            }
            if (line.startsWith("VIPL_PINGPONG"))
            {
                out.printf(ROW, "ViplPingPong", fields.get("size"),
                    "VIA " + fields.get("op"), fields.get("min_us"), fields.get("median_us"), "");
            }
            else if (line.startsWith("PINGPONG"))
            {
                out.printf(ROW, "PingPong", fields.get("size"), fields.get("mode"),
                    fields.get("min_us"), fields.get("median_us"), "");
            }
            else if (line.startsWith("STREAM"))
            {
                out.printf(ROW, "Stream", fields.get("size"),
                    "window " + fields.get("window"), "", "", fields.get("MB_per_s"));
            }
            else
            {
                final String kind = fields.get("kind");
                final String bytes = "allreduce".equals(kind) ? Integer.parseInt(fields.get("longs")) * Long.BYTES + "" :
                    fields.getOrDefault("size", "0");
                out.printf(ROW, "Collectives", bytes, kind, "",
                    "mean " + fields.get("mean_us"), fields.getOrDefault("MB_per_s", ""));
            }
        }
        out.println("   These are each program's first few hundred messages, on JVMs and NICs started seconds ago, most");
        out.println("   of them before the JIT has compiled their path (qnix run starts programs with C1 only, for start-up).");
        out.println("   For scale: the thesis' QNIX NIC (2001) was estimated at about 3 us one way for an empty message");
        out.println("   and measured 180 MB/s from 4 KB (seed 003); here a message crosses three busy parties on this");
        out.println("   machine's cores. Measure it warmed up, beside TCP and Aeron IPC: ./qnix bench latency --baselines,");
        out.println("   ./qnix bench bandwidth --baselines (docs/PERFORMANCE.md: one run, with its noise).");
    }

    /**
     * @return {@link QnixCommand#OK} if every program of the demo ran, else {@link QnixCommand#FAILED}
     * (what failed is printed); the cluster is down either way.
     */
    static int run(final String name, final String firmware, final PrintStream out) throws Exception
    {
        final ClusterParameters params = ClusterParameters.builder().torus(2, 2).build();
        final ClusterControl.Settings settings = new ClusterControl.Settings(name, params).firmware(firmware);
        out.println("== bringing up cluster '" + name + "': 2x2 torus, firmware as " + firmware);
        try (OwnedCluster cluster = OwnedCluster.up(settings, out, out))
        {
            return run(cluster.directory(), out);
        }
    }

    private static int run(final ClusterDirectory dir, final PrintStream out) throws Exception
    {
        final String name = dir.name();
        final Path hold = Files.createTempFile("qnix-demo-hold", ".flag");
        try
        {
            out.println("== running Hello on 4 processes (qnix run -n 4 -- Hello)");
            final AtomicInteger greetings = new AtomicInteger();
            final ProgramLauncher launcher = new ProgramLauncher(dir, 4, "Hello", List.of("--hold-while", hold.toString()))
                .onLine(line -> greetings.addAndGet(line.startsWith("Hello from") ? 1 : 0));
            final int[] exit = { -1 };
            final Thread run = new Thread(() ->
            {
                try
                {
                    exit[0] = launcher.run(out);
                }
                catch (final Exception ex)
                {
                    out.println("qnix run failed: " + ex.getMessage());
                    exit[0] = QnixCommand.FAILED;
                }
            }, "demo-run");
            run.start();

            // Each Hello prints after its group query, so 4 greetings mean all 4 are registered and done asking.
            final long deadline = HostClock.millis() + 120_000;
            while (run.isAlive() && greetings.get() < 4 && HostClock.millis() < deadline)
            {
                Thread.sleep(20);
            }
            final ClusterStatus status = run.isAlive() ? ClusterStatus.read(dir) : null;
            synchronized (out)
            {
                out.println("== cluster status while the 4 processes are registered (qnix cluster status)");
                if (null != status)
                {
                    status.print(out);
                }
            }
            Files.deleteIfExists(hold);
            run.join();
            if (0 != exit[0])
            {
                out.println("== Hello failed with exit code " + exit[0]);
                return QnixCommand.FAILED;
            }
            out.println("== after the program ended: " + ClusterStatus.read(dir).processes().size() + " processes registered");

            final List<String> results = new ArrayList<>();
            for (final List<String> program : List.of(
                List.of("PingPong", "--sizes", "0,64,1024,4096,65536", "--iterations", "300"),
                List.of("ViplPingPong", "--sizes", "0,64,4096,65536", "--iterations", "300"),
                List.of("Stream", "--sizes", "4096,65536,1048576", "--bytes", "16777216"),
                List.of("Collectives", "--barriers", "300", "--sizes", "4096,1048576", "--repeats", "20")))
            {
                final int processes = "Collectives".equals(program.get(0)) ? 4 : 2;
                out.println("== running " + program.get(0) + " on " + processes + " processes, " +
                    (4 == processes ? "one per node" : "nodes 0-0 and 1-0") + " (qnix run -n " + processes + " -- " +
                    String.join(" ", program) + ")");
                final int code = new ProgramLauncher(dir, processes, program.get(0), program.subList(1, program.size()))
                    .onLine(line ->
                    {
                        int at = -1;
                        for (final String tag : List.of("VIPL_PINGPONG ", "PINGPONG ", "STREAM ", "COLLECTIVES "))
                        {
                            at = at >= 0 ? at : line.indexOf(tag);
                        }
                        if (at >= 0)
                        {
                            synchronized (results)
                            {
                                results.add(line.substring(at));
                            }
                        }
                    }).run(out);
                if (0 != code)
                {
                    out.println("== " + program.get(0) + " failed with exit code " + code);
                    return QnixCommand.FAILED;
                }
            }
            printResults(results, out);
            out.println("== what the NICs counted (qnix stat --name " + name + ", a few of its counters)");
            StatCommand.print(out, NicStatistics.read(dir), null, List.of(NicCounters.COMMANDS,
                NicCounters.PERMISSION_REQUESTS_SENT, NicCounters.MESSAGES_STAGED, NicCounters.DATA_PACKETS_SENT,
                NicCounters.DATA_BYTES_SENT, NicCounters.DATA_BYTES_RECEIVED, NicCounters.SENDS_COMPLETED,
                NicCounters.RECEIVES_COMPLETED, NicCounters.CASTS_COMPLETED, NicCounters.BARRIERS_COMPLETED,
                NicCounters.DOORBELL_WAKEUPS));
            return QnixCommand.OK;
        }
        finally
        {
            Files.deleteIfExists(hold);
            out.println("== tearing down cluster '" + name + "'");
        }
    }
}
