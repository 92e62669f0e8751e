package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Processes#isAlive}: a zombie has exited, though {@link ProcessHandle#isAlive} counts it alive
 * until its parent reaps it (a killed launcher's ranks, adopted by a first process that never reaps).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ProcessesTest
{
    @Test
    void aZombieIsNotAliveAndItsExitIsSeen() throws Exception
    {
        assertTrue(Processes.isAlive(ProcessHandle.current().pid()));
        assertFalse(Processes.isAlive(Long.MAX_VALUE));

        // 'sleep 0' exits at once; its parent, exec'd into 'sleep 30', never reaps it: a zombie for 30 s.
        final Process parent = new ProcessBuilder("sh", "-c", "sleep 0 & echo $!; exec sleep 30").start();
        try
        {
            final long zombie;
            try (BufferedReader out = new BufferedReader(
                new InputStreamReader(parent.getInputStream(), StandardCharsets.US_ASCII)))
            {
                zombie = Long.parseLong(out.readLine().trim());
            }
            assertTrue(Processes.awaitExit(zombie, TimeUnit.SECONDS.toMillis(20)), "the exit is seen before the reap");
            assertFalse(Processes.isAlive(zombie));
            assertTrue(ProcessHandle.of(zombie).map(ProcessHandle::isAlive).orElse(false),
                "ProcessHandle still counts the unreaped zombie alive");
            assertTrue(parent.isAlive());
            assertFalse(Processes.awaitExit(parent.pid(), 50), "a living process is waited for, then not taken for gone");
        }
        finally
        {
            parent.destroyForcibly();
        }
    }
}
