package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import jdk.jfr.FlightRecorder;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.Doorbell;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.ProcessCommand;

/**
 * The first messages through new NICs run on code the JVM already has: no invokedynamic call site is
 * linked and the Flight Recorder is not started while the control programs register a group and move
 * a short and a long message, unless a recording runs. Each link bootstraps java.lang.invoke, which
 * spins classes with ASM: in a shared firmware JVM it stalled the duty cycle of every NIC and had the
 * JIT compile ASM on the NICs' CPU during a run's first streams (docs/performance/first-traffic.txt).
 *
 * <p>Watched in a JVM of its own, whose linkage the JDK prints
 * ({@code -Djava.lang.invoke.MethodHandle.TRACE_METHOD_LINKAGE=true}), so that nothing this test JVM
 * linked before hides a link.
 */
class FirstTrafficTest
{
    private static final String BEGIN = "FIRST TRAFFIC BEGINS";
    private static final String END = "FIRST TRAFFIC ENDS";
    private static final String RECORDER = "flight recorder initialized: ";
    private static final int GROUP = 7;
    private static final int LONG_MESSAGE = 3000;

    @TempDir
    Path base;

    @Test
    void theFirstRegistrationAndMessagesLinkNoCallSiteAndStartNoFlightRecorder() throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(JvmFlags.javaExecutable());
        command.addAll(JvmFlags.flags());
        command.add("-Djava.lang.invoke.MethodHandle.TRACE_METHOD_LINKAGE=true");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Traffic.class.getName());
        command.add(base.resolve("nodes").toString());
        final Path output = base.resolve("traffic.out");
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
            .start();
        final List<String> lines;
        try
        {
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), "the traffic JVM ends");
            lines = Files.readAllLines(output, StandardCharsets.UTF_8);
            assertEquals(0, process.exitValue(), String.join(System.lineSeparator(), lines));
        }
        finally
        {
            process.destroyForcibly();
        }

        final int begin = lines.indexOf(BEGIN);
        final int end = lines.indexOf(END);
        assertTrue(begin >= 0 && end > begin, String.join(System.lineSeparator(), lines));
        final List<String> linked = lines.subList(begin, end).stream()
            .filter(line -> line.startsWith("linkCallSite ") && !line.startsWith("linkCallSite =>")).toList();
        assertEquals(List.of(), linked, "call sites linked by the first traffic");
        assertTrue(lines.contains(RECORDER + false),
            "no recording, no Flight Recorder: " + lines.subList(end, lines.size()));
    }

    /** The traffic, in the watched JVM: args[0] is a directory for the node images. */
    static final class Traffic
    {
        public static void main(final String[] args) throws IOException
        {
            try (SteppedCluster cluster = new SteppedCluster(Files.createDirectories(Path.of(args[0])), 2, 1))
            {
                System.out.println(BEGIN);
                final SteppedProcess[] p = cluster.registerGroup(GROUP, 0, 1);
                final SteppedProcess sender = p[0];
                final SteppedProcess receiver = p[1];

                receiver.receiveContext(0, GROUP, 0, 1, 0, 64);
                receiver.post(ProcessCommand.RECEIVE, 0);
                sender.shortContext(0, receiver.name, 1, new byte[64]);
                sender.post(ProcessCommand.SEND_SHORT, 0);
                cluster.settle();
                check("short", sender.sendDoorbell(0), receiver.receiveDoorbell(0));

                sender.fill(0, LONG_MESSAGE, 2);
                receiver.receiveContext(1, GROUP, 0, 2, 0, LONG_MESSAGE);
                receiver.post(ProcessCommand.RECEIVE, 1);
                sender.sendContext(1, receiver.name, 2, 0, LONG_MESSAGE);
                sender.post(ProcessCommand.SEND, 1);
                cluster.settle();
                check("long", sender.sendDoorbell(1), receiver.receiveDoorbell(1));
                for (int i = 0; i < LONG_MESSAGE; i++)
                {
                    if (SteppedProcess.pattern(2, i) != receiver.areaByte(i))
                    {
                        throw new AssertionError("long message: byte " + i + " differs");
                    }
                }
                System.out.println(END);
            }
            System.out.println(RECORDER + FlightRecorder.isInitialized());
        }

        private static void check(final String what, final int send, final int receive)
        {
            if (Doorbell.DONE != send || Doorbell.DONE != receive)
            {
                throw new AssertionError(what + " message: Send Doorbell " + Doorbell.name(send) +
                    ", Receive Doorbell " + Doorbell.name(receive));
            }
        }
    }
}
