package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ProcessStartTicks;

/**
 * {@link Processes#isAlive}: a zombie has exited, though {@link ProcessHandle#isAlive} counts it alive
 * until its parent reaps it (a killed launcher's ranks, adopted by a first process that never reaps).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ProcessesTest
{
    @Test
    void aZombieIsNotAlive() throws Exception
    {
        assertTrue(Processes.isAlive(ProcessHandle.current().pid()));
        assertFalse(Processes.isAlive(Long.MAX_VALUE));

        // 'sleep 2' exits two seconds after its parent exec'd into 'sleep 30', which never reaps it.
        final Process parent = new ProcessBuilder("sh", "-c", "sleep 2 & echo $!; exec sleep 30").start();
        try
        {
            final long zombie;
            try (BufferedReader out = new BufferedReader(
                new InputStreamReader(parent.getInputStream(), StandardCharsets.US_ASCII)))
            {
                zombie = Long.parseLong(out.readLine().trim());
            }
            final long ticks = ProcessStartTicks.ofLiving(zombie);
            assertTrue(Processes.isAlive(zombie), "two seconds to live");
            assertTrue(ProcessStartTicks.awaitExit(zombie, ticks, TimeUnit.SECONDS.toMillis(30)));
            assertFalse(Processes.isAlive(zombie));
            assertNotEquals(0, ProcessStartTicks.of(zombie), "not reaped: its pid still names it");
            assertTrue(ProcessStartTicks.hasExited(zombie, ticks));
            // What this class is for: the JDK's view (a detail of the JDK, so assumed, not asserted).
            assumeTrue(ProcessHandle.of(zombie).map(ProcessHandle::isAlive).orElse(false),
                "this JDK counts an unreaped zombie alive");
            assertEquals(true, parent.isAlive());
        }
        finally
        {
            parent.destroyForcibly();
        }
    }
}
