package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterProperties;

/**
 * Bad input is refused before anything starts (issue 17, item 10), with exactly one line on stderr
 * naming the offending value and a non-zero exit: {@code cluster up} creates no cluster directory,
 * {@code run} starts no JVM, {@code bench} measures nothing.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BadParametersTest
{
    @ParameterizedTest(name = "cluster up {0} -> {2}")
    @CsvSource(delimiter = '|', value = {
        "--torus 0x3               | --torus | 0x3",
        "--torus 3                 | --torus | expected WxH",
        "--torus 300x1             | --torus | 300x1",
        "--sdram 8M                | --sdram | 8388608 bytes is too small for P=64",
        "--processes 64 --sdram 16M| --sdram | P=64",
        "--host-mem 64K            | --host-mem | 65536 bytes is too small",
        "--contexts 32 --command-queue 32 | N (command queue entries) = 32 | at least 2M = 64",
        "--sdram lots              | --sdram lots | not a size",
        "--firmware gpus           | --firmware gpus | shared, processes, threads",
        "--debug-firmware 5-5      | --debug-firmware 5-5 | no such node",
        "--idle bogus              | --idle bogus | backoff, yield or busy",
        "--hot-us 2000000          | --hot-us | out of range [0, 1000000]",
        "--hot-us -1               | --hot-us | out of range [0, 1000000]",
        "--firmware threads --debug-firmware 0-0 | --debug-firmware needs --firmware shared or processes | threads",
        "--short-flow lazy         | --short-flow lazy | eager or permission",
        "--debug-firmware 0-0:abc  | --debug-firmware 0-0:abc | PORT abc is not a number",
        "--debug-firmware zero     | --debug-firmware zero | expected X-Y[:PORT]",
        "--processes many          | --processes | 'many' is not an int",
    })
    void clusterUpRefusedNamingTheValue(final String options, final String option, final String detail)
    {
        final String name = TestClusters.uniqueName("f");
        final CliResult result = CliResult.run(("cluster up --name " + name + " " + options.trim()).split("\\s+"));
        assertRefused(result, option, detail);
        assertFalse(Files.exists(ClusterDirectory.of(name).path()), "nothing created");
    }

    /**
     * Against a cluster that does not exist: the refusal names the argument, not the missing cluster,
     * so it came before the cluster was looked at, let alone a JVM started.
     */
    @ParameterizedTest(name = "run {0} -> {2}")
    @CsvSource(delimiter = '|', value = {
        "-n 2 --ai -1 -- Hello                         | --ai -1 | wildcard",
        "-n 0 -- Hello                                 | -n 0 | at least one process",
        "-n many -- Hello                              | -n | 'many' is not an int",
        "-n 2 -cp /no/such/classes -- UserMain         | -cp /no/such/classes | no such directory or jar",
        "-n 2 -- NoSuchProgram                         | NoSuchProgram | examples: Hello",
        "-n 2 -- PingPong --sizes abc                  | PingPong --sizes abc | comma-separated list",
        "-n 2 -- PingPong --iterations -1              | PingPong --iterations -1 | at least 1",
        "-n 2 -- PingPong --wait nap                   | PingPong --wait nap | busy, yield, backoff or sleep",
        "-n 2 -- Stream --window 0                     | Stream --window 0 | at least 1",
        "-n 2 -- Stream --sizes 0                      | Stream --sizes 0 | each size at least 1",
        "-n 4 -- Collectives --longs -1                | Collectives --longs -1 | at least 1",
        "-n 4 -- Collectives --repeats                 | Collectives --repeats | needs a value",
        "-n 2 -- Hello --bogus                         | Hello --bogus | unknown option",
        "-n 1 -- PingPong                              | -n 1 | PingPong takes at least 2 processes",
        "-n 1 -- PciCommCat --file /etc/services       | -n 1 | PciCommCat takes at least 2 processes",
        "-n 3 -- ViplHello                             | -n 3 | ViplHello takes exactly 2 processes",
        "-n 2 -- ViplHello foo                         | ViplHello foo | expected the server's node X-Y",
        "-n 2 -- ViplHello 0-0 1-0                     | ViplHello 0-0 1-0 | one argument at most",
        "-n 2 -- PciCommCat --file /tmp                | PciCommCat --file /tmp | not a readable file",
        "-n 2 -- PciCommCat --file /etc/services --out /no/such/x | --out /no/such/x | no such directory /no/such",
        "-n 2 -- PciCommCat --file /etc/services --listener-node foo | --listener-node foo | expected a node X-Y",
        "-n 2 -- PciCommCat --file /etc/services --out /tmp | PciCommCat --out /tmp | is a directory",
    })
    void runRefusedBeforeLookingAtTheCluster(final String options, final String option, final String detail)
    {
        final String name = TestClusters.uniqueName("r");
        final CliResult result = CliResult.run(("run --cluster " + name + " " + options.trim()).split("\\s+"));
        assertRefused(result, option, detail);
        assertFalse(result.err.contains("no cluster"), result.err);
        assertFalse(result.out.contains("[qnix run] rank"), "no rank started: " + result.out);
        assertFalse(Files.exists(ClusterDirectory.of(name).path()), "nothing created");
    }

    @ParameterizedTest(name = "bench {0}")
    @CsvSource(delimiter = '|', value = {
        "latency --json /no/such/dir/x.json     | --json /no/such/dir/x.json | no such directory /no/such/dir",
        "bandwidth --chart /no/such/dir/x.svg   | --chart /no/such/dir/x.svg | no such directory /no/such/dir",
        "strategies --json /no/such/dir/x.json  | --json /no/such/dir/x.json | no such directory /no/such/dir",
    })
    void benchOutputInAMissingDirectoryIsRefusedBeforeMeasuring(final String options, final String option,
        final String detail)
    {
        // Short settings and a name of its own, so that a regression costs seconds and no other cluster.
        final String name = TestClusters.uniqueName("j");
        final String command = options.trim().startsWith("strategies") ?
            options.trim() + " --name " + name + " --firmware threads --idle backoff --wait sleep --iterations 1 " +
                "--warmup 0 --warmup-ms 0 --idle-seconds 0" :
            options.trim() + " --name " + name + " --firmware threads --warmup-ms 0 --passes 1";
        final CliResult result = CliResult.run(("bench " + command).split("\\s+"));
        assertRefused(result, option, detail);
        assertFalse(result.out.contains("== measuring") || result.out.contains("== bringing up"),
            "nothing measured: " + result.out);
        assertFalse(Files.exists(ClusterDirectory.of(name).path()), "no cluster brought up");
    }

    /** Refused before JMH starts a fork; the benchmark named last makes a regression fail fast, not run 20 minutes. */
    @ParameterizedTest(name = "bench jmh {0}")
    @CsvSource(delimiter = '|', value = {
        "--compare /tmp -- NoSuchBench                   | --compare /tmp | not a readable file",
        "--compare /no/such.json -- NoSuchBench          | --compare /no/such.json | no such file",
        "-- NoSuchBench                                  | NoSuchBench | ./qnix bench jmh -- -l lists them",
    })
    void benchJmhRefusedBeforeRunning(final String options, final String option, final String detail)
    {
        final CliResult result = CliResult.run(("bench jmh " + options.trim()).split("\\s+"));
        assertRefused(result, option, detail);
    }

    @ParameterizedTest(name = "inspect {0}")
    @CsvSource(delimiter = '|', value = {
        "99999999999,0   | inspect 99999999999,0 | at most 2147483647",
        "nothing         | inspect nothing | give a process as AI,PI",
        "(1,0            | inspect (1,0 | give a process as AI,PI",
    })
    void inspectRefusesWhatIsNeitherAProcessNorANode(final String target, final String option, final String detail)
    {
        final CliResult result = CliResult.run("inspect", "--name", TestClusters.uniqueName("i"), target.trim());
        assertRefused(result, option, detail);
    }

    @Test
    void benchJmhListsItsBenchmarksWithoutRunningThem()
    {
        final CliResult result = CliResult.run("bench", "jmh", "--", "-l");
        assertEquals(QnixCommand.OK, result.exit, result.out + result.err);
        assertTrue(result.out.contains("org.qnix.bench.jmh.LatencyBenchmark.oneWay") &&
            result.out.contains("org.qnix.bench.jmh.BarrierBenchmark.barrier"), result.out);
        assertFalse(result.out.contains("# Run progress"), "nothing ran: " + result.out);
    }

    /**
     * A cluster name with nothing behind it is one error line like any other, whichever command looks;
     * only {@code cluster down} takes it calmly, so that a script can always clean up.
     */
    @ParameterizedTest(name = "{0} of a cluster that is not there")
    @CsvSource(delimiter = '|', value = {
        "cluster status --name NAME     | start one with ./qnix cluster up --name NAME",
        "stat --name NAME               | no cluster directory",
        "ps --name NAME                 | no cluster directory",
        "trace --name NAME              | no cluster directory",
        "run -n 2 --cluster NAME Hello  | start one with ./qnix cluster up --name NAME",
    })
    void aClusterThatIsNotThereIsOneErrorLine(final String command, final String detail)
    {
        final String name = TestClusters.uniqueName("n");
        final CliResult result = CliResult.run(command.trim().replace("NAME", name).split("\\s+"));
        assertEquals(QnixCommand.FAILED, result.exit, result.out + result.err);
        assertOneLine(result, "no cluster '" + name + "'", detail.trim().replace("NAME", name));
        assertEquals("", result.out);

        final CliResult down = CliResult.run("cluster", "down", "--name", name);
        assertEquals(QnixCommand.OK, down.exit, down.out + down.err);
        assertEquals("no cluster '" + name + "': nothing to do", down.out.strip());
        assertFalse(Files.exists(ClusterDirectory.of(name).path()), "nothing created");
    }

    /**
     * "run -n 60 on 8 slots": a cluster takes at most P x nodes processes, and each node only as many
     * as its Process Table has free entries; either is refused before a JVM starts.
     */
    @Test
    void runRefusesMoreRanksThanTheClusterHasRoomFor(@TempDir final Path temp) throws Exception
    {
        final String name = TestClusters.uniqueName("p");
        final ClusterDirectory dir = ClusterDirectory.of(name);
        try
        {
            TestClusters.up(new ClusterControl.Settings(name, TestClusters.small(2, 1).processes(2).build())
                .firmware("threads"));
            final Set<Long> childrenBefore = children();
            final CliResult tooMany = CliResult.run("run", "-n", "60", "--cluster", name, "--", "Hello");
            assertRefused(tooMany, "-n 60", "takes at most 4 processes (P = 2 per NIC x 2 NICs)");
            assertEquals(childrenBefore, children(), "no JVM started");
            // What an example's arguments name, against this cluster and where the ranks go.
            assertRefused(CliResult.run("run", "-n", "2", "--cluster", name, "--", "ViplHello", "9-9"),
                "ViplHello 9-9", "cluster '" + name + "' has no such node, it is a 2x1 torus");
            assertRefused(CliResult.run("run", "-n", "2", "--cluster", name, "--", "PciCommCat", "--file",
                "/etc/services", "--listener-node", "1-0"), "PciCommCat --listener-node 1-0", "rank 0 listens on " +
                "its own node, 0-0 here");
            final int largest = ClusterProperties.read(dir.propertiesFile()).orElseThrow().parameters().maxMessageBytes();
            final int tooLarge = largest + 1;
            assertRefused(CliResult.run("run", "-n", "2", "--cluster", name, "--", "PingPong", "--sizes",
                "0," + tooLarge), "PingPong --sizes", tooLarge + " is more than " + largest + " bytes, the largest " +
                "message of cluster '" + name + "'");
            assertRefused(CliResult.run("run", "-n", "2", "--cluster", name, "--", "Stream", "--sizes",
                Integer.toString(tooLarge)), "Stream --sizes", tooLarge + " is more than " + largest);
            assertRefused(CliResult.run("run", "-n", "2", "--cluster", name, "--", "Collectives", "--sizes",
                Integer.toString(tooLarge)), "Collectives --sizes", tooLarge + " is more than " + largest);
            assertRefused(CliResult.run("run", "-n", "2", "--cluster", name, "--", "Collectives", "--longs",
                Integer.toString(largest / Long.BYTES + 1)), "Collectives --longs", "is more than " + largest);
            assertEquals(childrenBefore, children(), "no JVM started");

            // One rank registered on each node: each has one free entry left, so 3 ranks do not fit.
            try (HeldHellos held = HeldHellos.start(dir, 701, temp))
            {
                final Set<Long> holding = children();
                final CliResult noRoom = CliResult.run("run", "-n", "3", "--cluster", name, "--", "Hello");
                assertNotEquals(0, noRoom.exit, noRoom.out + noRoom.err);
                assertOneLine(noRoom, "node 0-0 would get 2 ranks but has 1 free Process Table entries of 2");
                assertTrue(holding.containsAll(children()), "no JVM started");
                assertEquals(2, ClusterStatus.read(dir).processes().size());
            }
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    /** A damaged cluster.properties is named as such, not taken for a bad option of the user's. */
    @Test
    void aDamagedClusterPropertiesFileIsNamed() throws Exception
    {
        final String name = TestClusters.uniqueName("d");
        final ClusterDirectory dir = ClusterDirectory.of(name);
        try
        {
            TestClusters.up(name, 2, 1, "threads");
            final String good = Files.readString(dir.propertiesFile());
            Files.writeString(dir.propertiesFile(), good.replaceAll("(?m)^torus=.*$", "torus=abc"));
            for (final String[] args : List.of(new String[] {"cluster", "status", "--name", name},
                new String[] {"ps", "--name", name}, new String[] {"run", "-n", "2", "--cluster", name, "--", "Hello"}))
            {
                final CliResult result = CliResult.run(args);
                assertEquals(QnixCommand.FAILED, result.exit, String.join(" ", args) + ": " + result.out + result.err);
                assertOneLine(result, "cluster.properties is damaged (torus=abc is not a torus WxH): `qnix cluster " +
                    "down` removes the cluster");
            }
            // A damaged daemon pid made every command fail, `cluster down` too: now the cluster is stale, and
            // the down stops its daemon, found by the cluster's marker, and removes everything.
            Files.writeString(dir.propertiesFile(), good.replaceAll("(?m)^daemon.pid=.*$", "daemon.pid=abc"));
            final CliResult status = CliResult.run("cluster", "status", "--name", name);
            assertTrue(status.out.contains("cluster '" + name + "' is STALE: " + dir.propertiesFile() +
                " names no daemon pid"), status.out + status.err);
            final CliResult down = CliResult.run("cluster", "down", "--name", name);
            assertEquals(QnixCommand.OK, down.exit, down.out + down.err);
            assertTrue(down.out.contains("stopped daemon pid"), down.out);
            assertFalse(Files.exists(dir.path()), down.out);
            assertFalse(Files.exists(dir.lockFile()), down.out);
            assertEquals(List.of(), TestClusters.processesOf(dir), "no daemon left");
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    /** $QNIX_DIR naming a file: said so, not "cannot lock" a path under it. */
    @Test
    void aQnixDirThatIsAFileIsRefused(@TempDir final Path temp) throws Exception
    {
        final Path file = Files.createFile(temp.resolve("qfile"));
        final ChildCommand.Result up =
            ChildCommand.run(ChildCommand.qnix("cluster", "up", "--name", "q"), Map.of("QNIX_DIR", file.toString()), temp);
        assertEquals(QnixCommand.BAD_ARGUMENT, up.exit(), up.output());
        assertTrue(up.output().contains("qnix: $QNIX_DIR " + file + " is not a directory"), up.output());
        assertEquals(0, Files.size(file), "nothing written");
    }

    /** The bench's own JVM is a program of the cluster: the library's refusal is one line, not a stack trace. */
    @Test
    void aBenchTheClusterHasNoRoomForFailsInOneLine(@TempDir final Path temp) throws Exception
    {
        final String name = TestClusters.uniqueName("q");
        final ClusterDirectory dir = ClusterDirectory.of(name);
        try
        {
            TestClusters.up(new ClusterControl.Settings(name, TestClusters.small(2, 1).processes(1).build())
                .firmware("threads"));
            try (HeldHellos held = HeldHellos.start(dir, 702, temp))
            {
                final CliResult bench = CliResult.run("bench", "latency", "--cluster", name, "--api", "qnix",
                    "--sizes", "0", "--warmup-ms", "0");
                assertEquals(QnixCommand.FAILED, bench.exit, bench.out + bench.err);
                assertOneLine(bench, "qnix: QnixDriverException", "no free Virtual Network Interface");
            }
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    /** Two Hello processes of application {@code ai}, one on each node of a 2x1 cluster, registered until closed. */
    private static final class HeldHellos implements AutoCloseable
    {
        private final Path hold;
        private final Thread holders;

        private HeldHellos(final Path hold, final Thread holders)
        {
            this.hold = hold;
            this.holders = holders;
        }

        static HeldHellos start(final ClusterDirectory dir, final int ai, final Path temp) throws Exception
        {
            final Path hold = Files.createFile(temp.resolve("hold-" + ai));
            final ProgramLauncher launcher =
                new ProgramLauncher(dir, 2, "Hello", List.of("--hold-while", hold.toString())).applicationId(ai);
            final Thread holders = new Thread(() ->
            {
                try
                {
                    launcher.run(TestClusters.quiet());
                }
                catch (final InterruptedException ignore)
                {
                    Thread.currentThread().interrupt();
                }
            }, "holders");
            holders.start();
            final HeldHellos held = new HeldHellos(hold, holders);
            try
            {
                TestClusters.await("2 processes registered", () -> ClusterStatus.read(dir).registered().size() == 2);
            }
            catch (final RuntimeException | Error | InterruptedException ex)
            {
                held.close();
                throw ex;
            }
            return held;
        }

        public void close() throws InterruptedException
        {
            try
            {
                Files.deleteIfExists(hold);
            }
            catch (final java.io.IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
            finally
            {
                holders.join(60_000);
            }
        }
    }

    private static Set<Long> children()
    {
        return ProcessHandle.current().children().filter(ProcessHandle::isAlive).map(ProcessHandle::pid)
            .collect(Collectors.toSet());
    }

    private static void assertRefused(final CliResult result, final String option, final String detail)
    {
        assertEquals(QnixCommand.BAD_ARGUMENT, result.exit, result.out + result.err);
        assertOneLine(result, option, detail);
    }

    /** Exactly one line on stderr, naming what was wrong; no stack trace. */
    private static void assertOneLine(final CliResult result, final String... naming)
    {
        final List<String> lines = result.err.lines().toList();
        assertEquals(1, lines.size(), "one line on stderr: " + result.err);
        assertTrue(lines.get(0).startsWith("qnix: "), result.err);
        for (final String part : naming)
        {
            assertTrue(lines.get(0).contains(part), "'" + part + "' in: " + result.err);
        }
        assertFalse(result.err.contains("\tat ") || result.err.contains("Caused by"), "no stack trace: " + result.err);
    }
}
