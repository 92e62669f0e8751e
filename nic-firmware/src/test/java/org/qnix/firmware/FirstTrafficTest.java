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

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.Doorbell;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.ProcessCommand;

/**
 * The first messages through new NICs run on code the JVM already has: while the control programs
 * register a group and move a short and a long message, no invokedynamic call site, method handle
 * invoker or dynamic constant is linked, and none of the Flight Recorder's machinery is loaded, as
 * nobody asked for it. Each link bootstraps java.lang.invoke, which spins classes with ASM, and JFR
 * spins its own: in a shared firmware JVM they stalled the duty cycle of every NIC and had the JIT
 * compile ASM on the NICs' CPU during a run's first streams (docs/performance/first-traffic.txt).
 *
 * <p>Watched in a JVM of its own, whose linkage and class loading the JDK prints
 * ({@code -Djava.lang.invoke.MethodHandle.TRACE_METHOD_LINKAGE=true}, {@code -Xlog:class+load}), so
 * that nothing this test JVM linked or loaded before hides one. A lambda linked before the traffic
 * shows that the trace is on.
 */
class FirstTrafficTest
{
    private static final String BEGIN = "FIRST TRAFFIC BEGINS";
    private static final String END = "FIRST TRAFFIC ENDS";
    private static final String TRACE_CHECK = "the linkage trace is on";
    /** What the JDK prints as it links (java.lang.invoke.MethodHandleNatives); its "=>" lines are results. */
    private static final List<String> LINKS = List.of("linkCallSite ", "linkMethod ", "linkDynamicConstant ");
    private static final int GROUP = 7;
    private static final int LONG_MESSAGE = 3000;

    @TempDir
    Path base;

    @Test
    void theFirstRegistrationAndMessagesLinkNothingAndLoadNoFlightRecorder() throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(JvmFlags.javaExecutable());
        command.addAll(JvmFlags.flags());
        command.add("-Djava.lang.invoke.MethodHandle.TRACE_METHOD_LINKAGE=true");
        command.add("-Xlog:class+load=info:stdout");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Traffic.class.getName());
        command.add(base.resolve("nodes").toString());
        final Path output = base.resolve("traffic.out");
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(output.toFile());
        // An agent or a recording asked for by the environment would link and load for its own reasons.
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        builder.environment().remove("JDK_JAVA_OPTIONS");
        final Process process = builder.start();
        List<String> lines = List.of();
        try
        {
            final boolean ended = process.waitFor(120, TimeUnit.SECONDS);
            lines = Files.readAllLines(output, StandardCharsets.ISO_8859_1);
            assertTrue(ended, "the traffic JVM ends: " + String.join(System.lineSeparator(), lines));
            assertEquals(0, process.exitValue(), String.join(System.lineSeparator(), lines));
        }
        finally
        {
            process.destroyForcibly().waitFor();
        }

        final int begin = lines.indexOf(BEGIN);
        final int end = lines.indexOf(END);
        assertTrue(begin >= 0 && end > begin, String.join(System.lineSeparator(), lines));
        assertTrue(lines.subList(0, begin).stream().anyMatch(line -> line.startsWith("linkCallSite " +
            Traffic.class.getName())), "the trace shows the lambda linked before the traffic");
        final List<String> traffic = lines.subList(begin, end);
        assertEquals(List.of(), traffic.stream().filter(FirstTrafficTest::isLink).toList(),
            "linked by the first traffic");
        assertEquals(List.of(), traffic.stream().filter(line -> line.contains(" jdk.jfr.internal.")).toList(),
            "Flight Recorder classes loaded by the first traffic, with no recording asked for");
    }

    private static boolean isLink(final String line)
    {
        for (final String link : LINKS)
        {
            if (line.startsWith(link) && !line.startsWith(link + "=>"))
            {
                return true;
            }
        }
        return false;
    }

    /** The traffic, in the watched JVM: args[0] is a directory for the node images. */
    static final class Traffic
    {
        public static void main(final String[] args) throws IOException
        {
            final Runnable traceCheck = () -> System.out.println(TRACE_CHECK);
            traceCheck.run();
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
