package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The heartbeat is stamped by one process and judged by others, so {@link HostClock} must read alike
 * in every JVM of the host: a reading taken in another JVM lies between two taken here around it.
 * A per-JVM origin (what Java itself promises for {@code System.nanoTime}) would put it hours or
 * seconds off, and every NIC would look dead, or alive for ever.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class HostClockTest
{
    private static final long CHILD_TIMEOUT_S = 60;
    private static final long ORIGIN_GAP_MS = 1_000;

    /** The child JVM: prints its reading of the clock. */
    public static void main(final String[] args)
    {
        System.out.println(HostClock.millis());
    }

    @Test
    void anotherJvmReadsTheSameClock() throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // A clock that counted from each JVM's first reading would read about 0 in the child, 1 s here.
        HostClock.millis();
        Thread.sleep(ORIGIN_GAP_MS);
        final long before = HostClock.millis();
        final ProcessBuilder builder = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
            HostClockTest.class.getName()).redirectError(ProcessBuilder.Redirect.DISCARD);
        // Its "Picked up JAVA_TOOL_OPTIONS" notice would come first.
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        final Process child = builder.start();
        try
        {
            String line = null;
            try (BufferedReader out = new BufferedReader(
                new InputStreamReader(child.getInputStream(), StandardCharsets.US_ASCII)))
            {
                for (String read = out.readLine(); null != read; read = out.readLine())
                {
                    line = read;
                }
            }
            assertTrue(child.waitFor(CHILD_TIMEOUT_S, TimeUnit.SECONDS), "the child JVM ended");
            assertEquals(0, child.exitValue(), "the child JVM printed: " + line);
            final long after = HostClock.millis();
            final long theirs = Long.parseLong(line.trim());
            assertTrue(before <= theirs && theirs <= after,
                "the other JVM read " + theirs + " ms between " + before + " and " + after + " ms here");
        }
        finally
        {
            child.destroyForcibly();
        }
    }

    @Test
    void neverGoesBack()
    {
        long last = HostClock.millis();
        for (int i = 0; i < 100_000; i++)
        {
            final long now = HostClock.INSTANCE.time();
            assertTrue(now >= last, "read " + now + " after " + last);
            last = now;
        }
    }
}
