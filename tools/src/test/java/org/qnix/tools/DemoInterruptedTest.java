package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.daemon.ClusterState;

/**
 * Ctrl-C (here SIGTERM, which runs the same shutdown hooks) on {@code qnix demo}: the cluster the demo
 * brought up goes down with it. Its daemon runs in a session of its own, so nothing else would stop it,
 * and the next {@code qnix demo} would find the name taken.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DemoInterruptedTest
{
    @Test
    void anInterruptedDemoTakesItsClusterDown() throws Exception
    {
        final String name = TestClusters.uniqueName("m");
        final ClusterDirectory dir = ClusterDirectory.of(name);
        final Path output = Files.createTempFile("qnix-demo", ".out");
        Process demo = null;
        try
        {
            demo = new ProcessBuilder(ChildCommand.qnix("demo", "--name", name, "--firmware", "threads"))
                .redirectErrorStream(true).redirectOutput(output.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            final Process running = demo;
            TestClusters.await("the demo's cluster up and its Hello running", () ->
                !running.isAlive() || TestClusters.read(output).contains("== running Hello"));
            assertTrue(demo.isAlive(), Files.readString(output));
            assertTrue(ClusterState.inspect(dir).isLive(), Files.readString(output));

            demo.destroy();
            assertTrue(demo.waitFor(2, TimeUnit.MINUTES), "the demo ends");
            assertFalse(Files.exists(dir.path()), dir.path() + " still exists:\n" + Files.readString(output));
            assertFalse(Files.exists(dir.lockFile()), dir.lockFile() + " still exists:\n" + Files.readString(output));
            assertEquals(List.of(), TestClusters.processesOf(dir), "no daemon, firmware or program left");
        }
        finally
        {
            if (null != demo && demo.isAlive())
            {
                demo.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
            TestClusters.down(dir);
            Files.deleteIfExists(output);
        }
    }
}
