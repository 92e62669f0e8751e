package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A process's start in clock ticks names it for good; {@link ProcessStartTicks#ofLiving} also tells an
 * exited process that waits to be reaped (a zombie, which maps nothing any more) from a living one.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ProcessStartTicksTest
{
    @Test
    void aLivingProcessHasItsStartAndAZombieOnlyItsPid() throws Exception
    {
        final long self = ProcessHandle.current().pid();
        assertNotEquals(0, ProcessStartTicks.of(self));
        assertEquals(ProcessStartTicks.of(self), ProcessStartTicks.ofLiving(self));

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
            while (0 != ProcessStartTicks.ofLiving(zombie))
            {
                Thread.sleep(1);
            }
            assertNotEquals(0, ProcessStartTicks.of(zombie), "its pid still names it");
            assertTrue(parent.isAlive());
        }
        finally
        {
            parent.destroyForcibly();
        }
        assertEquals(0, ProcessStartTicks.of(Long.MAX_VALUE));
        assertEquals(0, ProcessStartTicks.ofLiving(Long.MAX_VALUE));
    }
}
