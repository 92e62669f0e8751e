package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RankMain}'s watch of its launcher, with no cluster: a stand-in launcher (a {@code sleep}) whose
 * pid the rank is given, and a standard input that is already at its end.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RankMainTest
{
    @TempDir
    Path temp;

    /**
     * The kernel closes a dying launcher's end of the pipe before its pid goes (a JVM of many threads
     * can take milliseconds between the two): a rank that saw end-of-file while the pid still lived
     * kept running for ever. Here the gap is stretched to a second and more: the rank's standard input
     * is at its end from the start, and its launcher goes once the program runs.
     */
    @Test
    void aRankWhoseEndOfFileComesBeforeItsLauncherGoesStillExits() throws Exception
    {
        final Process launcher = new ProcessBuilder("sleep", "600").start();
        final Path output = temp.resolve("rank.out");
        Process rank = null;
        try
        {
            final List<String> command = ChildCommand.java(RankMain.class.getName());
            command.add(Sleeper.class.getName());
            final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(output.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            builder.environment().put(RankMain.LAUNCHER_PID, Long.toString(launcher.pid()));
            rank = builder.start();
            TestClusters.await("the rank's program to run", () -> TestClusters.read(output).contains(Sleeper.STARTED));
            // Well past the rank's first look at its live launcher, and well within RankMain.LAUNCHER_EXIT_MS.
            Thread.sleep(1_000);
            assertTrue(rank.isAlive(), TestClusters.read(output));
            launcher.destroyForcibly();

            assertTrue(rank.waitFor(2, TimeUnit.MINUTES), "the rank exits once its launcher is gone");
            final String printed = TestClusters.read(output);
            assertEquals(RankMain.LAUNCHER_GONE, rank.exitValue(), printed);
            assertTrue(printed.contains("the launcher of this rank is gone"), printed);
        }
        finally
        {
            launcher.destroyForcibly();
            if (null != rank)
            {
                rank.destroyForcibly();
            }
        }
    }

    /** A program that runs until it is stopped. */
    public static final class Sleeper
    {
        static final String STARTED = "sleeper started";

        public static void main(final String[] args) throws InterruptedException
        {
            System.out.println(STARTED);
            Thread.sleep(TimeUnit.MINUTES.toMillis(10));
        }
    }
}
