package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The VIPL examples run by {@code qnix run} as a user runs them, two JVMs on two nodes: each checks every
 * byte it receives (and exits non-zero otherwise), so exit 0 and the rows it prints are the test. Bad
 * arguments are refused before any JVM starts.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ViplExamplesTest extends ViplClusterTest
{
    @ParameterizedTest(name = "ViplPingPong --op send --reliability {0}")
    @CsvSource({"unreliable", "reliable-delivery", "reliable-reception"})
    void pingPongChecksEveryByteAtEverySize(final String reliability) throws Exception
    {
        pingPong("send", reliability);
    }

    @ParameterizedTest(name = "ViplPingPong --op rdma-imm --reliability {0}")
    @CsvSource({"reliable-delivery", "reliable-reception"})
    void rdmaPingPongChecksEveryByteAtEverySize(final String reliability) throws Exception
    {
        pingPong("rdma-imm", reliability);
    }

    private static void pingPong(final String op, final String reliability) throws Exception
    {
        final String out = run("ViplPingPong", "--op", op, "--reliability", reliability, "--sizes", "0,1,7,8,4097,70000",
            "--iterations", "30");
        for (final String size : new String[] {"0", "1", "7", "8", "4097", "70000"})
        {
            assertEquals(1, out.lines().filter(l -> l.startsWith("[0] VIPL_PINGPONG size=" + size + " op=" + op +
                " reliability=" + reliability + " min_us=")).count(), size + " in:\n" + out);
        }
    }

    @ParameterizedTest(name = "ViplStream --window {0} --reliability {1}")
    @CsvSource({
        "1, reliable-delivery",
        "4, reliable-reception",
        "8, unreliable",
    })
    void streamChecksEveryByteWithAWindowOfCredits(final int window, final String reliability) throws Exception
    {
        final String out = run("ViplStream", "--window", Integer.toString(window), "--reliability", reliability,
            "--sizes", "100,4096,65537,2097152", "--bytes", "2097152");
        for (final String size : new String[] {"100", "4096", "65537", "2097152"})
        {
            assertEquals(1, out.lines().filter(l -> l.startsWith("[0] VIPL_STREAM size=" + size + " ") &&
                l.contains(" window=" + window + " reliability=" + reliability + " MB_per_s=")).count(),
                size + " in:\n" + out);
        }
    }

    @ParameterizedTest(name = "ViplRdma --reliability {0}")
    @CsvSource({"reliable-reception", "reliable-delivery"})
    void rdmaWritesAndReadsLandWhereAsked(final String reliability) throws Exception
    {
        rdma(reliability, List.of("write", "write-imm", "read"));
    }

    @Test
    void rdmaWritesAloneOnUnreliableVis() throws Exception
    {
        rdma("unreliable", List.of("write", "write-imm"));
    }

    @Test
    void rdmaReadAlone() throws Exception
    {
        final String out = run("ViplRdma", "--op", "read", "--reliability", "reliable-delivery", "--sizes", "0,7",
            "--iterations", "3");
        assertEquals(2, out.lines().filter(l -> l.startsWith("[0] VIPL_RDMA ")).count(), out);
        assertEquals(1, out.lines().filter(l -> l.startsWith("[0] VIPL_RDMA size=0 op=read count=3 ")).count(), out);
        assertEquals(1, out.lines().filter(l -> l.startsWith("[0] VIPL_RDMA size=7 op=read count=3 ")).count(), out);
    }

    /** The default {@code --op all}: a row for each operation {@code ops} at each size, and no other. */
    private static void rdma(final String reliability, final List<String> ops) throws Exception
    {
        final String out = run("ViplRdma", "--reliability", reliability, "--sizes", "1,4096,100001",
            "--iterations", "10");
        assertEquals(3 * ops.size(), out.lines().filter(l -> l.startsWith("[0] VIPL_RDMA ")).count(), out);
        for (final String size : new String[] {"1", "4096", "100001"})
        {
            for (final String op : ops)
            {
                assertEquals(1, out.lines().filter(l -> l.startsWith("[0] VIPL_RDMA size=" + size + " op=" + op +
                    " count=10 reliability=" + reliability + " mean_us=")).count(), size + " in:\n" + out);
            }
        }
    }

    @Test
    void theReadmeClientGreetsTheServerAndHearsBack() throws Exception
    {
        final String out = run("ViplHello");
        assertTrue(out.contains("[1] hello, client on 1-0"), out);
    }

    @Test
    void badArgumentsAreRefusedBeforeAnyJvmStarts()
    {
        for (final List<String> bad : List.of(
            List.of("ViplPingPong", "--op", "read", "|one of send, rdma-imm"),
            List.of("ViplPingPong", "--reliability", "sure", "|one of unreliable, reliable-delivery, reliable-reception"),
            List.of("ViplPingPong", "--sizes", "4194304", "|2 MiB"),
            List.of("ViplStream", "--window", "65", "|at most 64"),
            List.of("ViplStream", "--sizes", "0", "|each size at least 1"),
            List.of("ViplRdma", "--iterations", "0", "|at least 1"),
            List.of("ViplRdma", "--read", "|unknown option; usage: ViplRdma"),
            List.of("ViplRdma", "--op", "fetch", "|one of write, write-imm, read, all"),
            List.of("ViplRdma", "--op", "read", "--reliability", "unreliable", "|RDMA read on reliable VIs only"),
            List.of("ViplRdma", "--sizes", "2097152", "|less the guards")))
        {
            final List<String> args = new java.util.ArrayList<>(List.of("run", "-n", "2", "--cluster", dir.name(), "--"));
            args.addAll(bad.subList(0, bad.size() - 1));
            final CliResult result = CliResult.run(args.toArray(new String[0]));
            final String detail = bad.get(bad.size() - 1).substring(1);
            assertEquals(QnixCommand.BAD_ARGUMENT, result.exit, bad + ": " + result.out + result.err);
            assertTrue(result.err.contains(detail), bad + ": " + result.err);
            assertFalse(result.out.contains("[qnix run] rank"), "no rank started: " + result.out);
        }
    }

    /** Runs an example on 2 processes (nodes 0-0 and 1-0) through the launcher; @return what it printed. */
    private static String run(final String program, final String... args) throws Exception
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final int exit;
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8))
        {
            exit = new ProgramLauncher(dir, 2, program, List.of(args)).run(out);
        }
        final String text = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, exit, text);
        return text;
    }
}
