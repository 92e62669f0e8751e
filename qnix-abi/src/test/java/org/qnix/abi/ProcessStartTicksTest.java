package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

        final Process parent = zombieParent();
        try
        {
            final long zombie = zombiePid(parent);
            final long ticks = ProcessStartTicks.ofLiving(zombie);
            assertNotEquals(0, ticks, "two seconds to live");
            assertFalse(ProcessStartTicks.hasExited(zombie, ticks));
            assertTrue(ProcessStartTicks.awaitExit(zombie, ticks, TimeUnit.SECONDS.toMillis(30)), "its exit, unreaped");
            assertEquals(0, ProcessStartTicks.ofLiving(zombie));
            assertNotEquals(0, ProcessStartTicks.of(zombie), "its pid still names it");
            assertTrue(ProcessStartTicks.hasExited(zombie, ticks));
            assertTrue(parent.isAlive());

            // A process that lives is waited for, then reported as living; its start names it alone.
            final long parentTicks = ProcessStartTicks.ofLiving(parent.pid());
            assertFalse(ProcessStartTicks.awaitExit(parent.pid(), parentTicks, 50));
            assertTrue(ProcessStartTicks.hasExited(parent.pid(), parentTicks + 1), "another start: another process");
            assertTrue(ProcessStartTicks.hasExited(parent.pid(), 0), "no start: none to wait for");
        }
        finally
        {
            parent.destroyForcibly();
        }
        assertEquals(0, ProcessStartTicks.of(Long.MAX_VALUE));
        assertEquals(0, ProcessStartTicks.ofLiving(Long.MAX_VALUE));
    }

    /**
     * 'sleep 2' exits two seconds after its parent exec'd into 'sleep 30', which never reaps it: a zombie
     * for the rest of the 30 s. (A 'sleep 0' may be reaped by the shell before its exec.)
     */
    static Process zombieParent() throws java.io.IOException
    {
        return new ProcessBuilder("sh", "-c", "sleep 2 & echo $!; exec sleep 30").start();
    }

    /** @return the pid of the child {@link #zombieParent} printed. */
    static long zombiePid(final Process parent) throws java.io.IOException
    {
        try (BufferedReader out = new BufferedReader(
            new InputStreamReader(parent.getInputStream(), StandardCharsets.US_ASCII)))
        {
            return Long.parseLong(out.readLine().trim());
        }
    }
}
