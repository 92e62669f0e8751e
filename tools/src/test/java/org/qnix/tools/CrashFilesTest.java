package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;

/**
 * The daemon and firmware JVMs write their crash reports and replay data into the cluster directory,
 * not into the working directory of whoever ran {@code cluster up}, and {@code cluster down} removes
 * them with the rest (issue 17, item 7). A firmware JVM is made to crash with SIGSEGV.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CrashFilesTest
{
    @Test
    void crashReportsGoToTheClusterDirectoryAndLeaveWithIt() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("c"), 2, 1, "processes");
        try
        {
            final List<ProcessHandle> jvms = TestClusters.processesOf(dir);
            assertEquals(3, jvms.size(), "the daemon and two firmware JVMs: " + jvms);
            for (final ProcessHandle jvm : jvms)
            {
                final List<String> arguments = arguments(jvm);
                assertTrue(arguments.contains("-XX:ErrorFile=" + dir.path().resolve("hs_err_pid%p.log")), arguments.toString());
                assertTrue(arguments.contains("-XX:ReplayDataFile=" + dir.path().resolve("replay_pid%p.log")),
                    arguments.toString());
            }

            final ProcessHandle firmware = jvms.stream()
                .filter(p -> arguments(p).contains("org.qnix.firmware.FirmwareMain")).findFirst().orElseThrow();
            final ChildCommand.Result kill = ChildCommand.run(List.of("/bin/kill", "-SEGV", Long.toString(firmware.pid())),
                Map.of(), null);
            assertEquals(0, kill.exit(), kill.output());
            final Path report = dir.path().resolve("hs_err_pid" + firmware.pid() + ".log");
            TestClusters.await(report + " written", () -> TestClusters.isGone(firmware) && Files.exists(report));
            assertFalse(Files.exists(Path.of(System.getProperty("user.dir"), "hs_err_pid" + firmware.pid() + ".log")));
        }
        finally
        {
            TestClusters.down(dir);
        }
        assertFalse(Files.exists(dir.path()), "the crash report went with the cluster directory");
    }

    /** @return the JVM's command line from /proc, whole (ProcessHandle.Info may truncate it). */
    private static List<String> arguments(final ProcessHandle process)
    {
        try
        {
            final byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(process.pid()), "cmdline"));
            return List.of(new String(raw, StandardCharsets.UTF_8).split("\0"));
        }
        catch (final IOException ex)
        {
            return List.of();
        }
    }
}
