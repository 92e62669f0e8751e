package org.qnix.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The guard that keeps a registration's mappings while calls are inside: no call may be inside once
 * the closer is told the memory may go, and every call after the close is refused.
 */
@Timeout(120)
class MappingGuardTest
{
    @Test
    void callsAreCountedAndRefusedOnceClosingBegan()
    {
        final MappingGuard guard = new MappingGuard();
        assertTrue(guard.enter());
        assertTrue(guard.enter());
        assertEquals(2, guard.callsInside());
        assertTrue(guard.beginClose());
        assertFalse(guard.beginClose(), "only the first close begins");
        assertFalse(guard.enter(), "no call enters after the close");
        assertEquals(2, guard.callsInside(), "a refused enter leaves nothing counted");
        assertFalse(guard.awaitQuiescence(TimeUnit.MILLISECONDS.toNanos(20)), "two calls are still inside");
        guard.exit();
        guard.exit();
        assertTrue(guard.awaitQuiescence(0));
        assertTrue(guard.isClosed());
    }

    /**
     * Threads enter and leave as fast as they can while another closes at a random moment and then
     * "unmaps": none may ever be inside after that. 200 rounds; the seed is printed to rerun one.
     */
    @Test
    void noCallIsInsideOnceQuiescenceIsReported() throws Exception
    {
        final long seed = Long.getLong("qnix.guard.seed", 12);
        System.out.println("MappingGuardTest: seed " + seed + " (rerun with -Dqnix.guard.seed=" + seed + ")");
        final Random random = new Random(seed);
        for (int round = 0; round < 200; round++)
        {
            final MappingGuard guard = new MappingGuard();
            final AtomicInteger unmapped = new AtomicInteger();
            final AtomicLong insideAfterUnmap = new AtomicLong();
            final AtomicLong calls = new AtomicLong();
            final CountDownLatch started = new CountDownLatch(3);
            final Thread[] callers = new Thread[3];
            for (int t = 0; t < callers.length; t++)
            {
                callers[t] = new Thread(() ->
                {
                    started.countDown();
                    while (guard.enter())
                    {
                        try
                        {
                            // The "memory" a call touches: it must still be mapped.
                            if (0 != unmapped.get())
                            {
                                insideAfterUnmap.incrementAndGet();
                            }
                            calls.incrementAndGet();
                        }
                        finally
                        {
                            guard.exit();
                        }
                    }
                }, "caller-" + t);
                callers[t].start();
            }
            started.await();
            final long spins = random.nextInt(20_000);
            for (long i = 0; i < spins; i++)
            {
                Thread.onSpinWait();
            }
            assertTrue(guard.beginClose());
            assertTrue(guard.awaitQuiescence(TimeUnit.SECONDS.toNanos(30)), "round " + round);
            unmapped.set(1);
            for (final Thread caller : callers)
            {
                caller.join();
            }
            assertEquals(0, insideAfterUnmap.get(), "round " + round + ": a call was inside after the unmap");
            assertEquals(0, guard.callsInside());
        }
    }
}
