package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The NIC's read of a CQ table entry ({@link CqTableEntry#ringOf}) while the driver destroys CQs and
 * makes others in the entry: it takes a CQ's ring whole, or not at all.
 */
class CqTableEntryTest
{
    private static final int OWNER = 3;
    private static final int SMALL_RING = 4096;
    private static final int SMALL_ENTRIES = 16;
    private static final int LARGE_RING = 8192;
    private static final int LARGE_ENTRIES = 16_384;

    @Test
    void aCqOfTheOwnerIsTakenWithItsRingAndNoOtherIs()
    {
        final UnsafeBuffer sdram = new UnsafeBuffer(new byte[CqTableEntry.LENGTH]);
        final UnsafeBuffer host = new UnsafeBuffer(new byte[64]);
        final CqTableEntry entry = new CqTableEntry().wrap(sdram, 0);
        final CqRing view = new CqRing();
        assertNull(entry.ringOf(OWNER, host, view), "a free entry");

        entry.publish(OWNER, SMALL_ENTRIES, SMALL_RING, 1);
        assertSame(view, entry.ringOf(OWNER, host, view));
        assertEquals(SMALL_RING, view.offset());
        assertEquals(SMALL_ENTRIES, view.entries());
        assertNull(entry.ringOf(OWNER + 1, host, view), "another owner's");
        assertNull(entry.ringOf(-1, host, view), "no owner");

        entry.clear();
        assertNull(entry.ringOf(OWNER, host, view), "destroyed");
    }

    /**
     * A driver thread destroys the owner's CQ and makes another of the same owner in the entry, over
     * and over, its ring alternately small at one address and large at another; the NIC's thread reads
     * the entry meanwhile. Every ring it takes is one the driver made: never one address with the other's
     * Entries, which would let a completion land past a small ring. With the Owner-only check that came
     * before ringOf, this test took 3,321 such rings in its 2 s here.
     */
    @Test
    @Timeout(value = 1, unit = TimeUnit.MINUTES)
    void aRingIsTakenWholeWhileTheDriverMakesTheCqAgain() throws InterruptedException
    {
        final UnsafeBuffer sdram = new UnsafeBuffer(ByteBuffer.allocateDirect(CqTableEntry.LENGTH));
        final UnsafeBuffer host = new UnsafeBuffer(new byte[64]);
        final CqTableEntry driver = new CqTableEntry().wrap(sdram, 0);
        driver.publish(OWNER, SMALL_ENTRIES, SMALL_RING, 1);
        final AtomicBoolean running = new AtomicBoolean(true);
        final Thread remaking = new Thread(() ->
        {
            for (int generation = 2; running.get(); generation++)
            {
                final boolean large = 0 == (generation & 1);
                driver.clear();
                driver.publish(OWNER, large ? LARGE_ENTRIES : SMALL_ENTRIES, large ? LARGE_RING : SMALL_RING, generation);
            }
        }, "driver");
        remaking.start();

        final CqTableEntry nic = new CqTableEntry().wrap(sdram, 0);
        final CqRing view = new CqRing();
        long reads = 0;
        long taken = 0;
        long torn = 0;
        try
        {
            final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() - end < 0)
            {
                for (int i = 0; i < 10_000; i++)
                {
                    reads++;
                    final CqRing ring = nic.ringOf(OWNER, host, view);
                    if (null != ring)
                    {
                        taken++;
                        if ((SMALL_RING == ring.offset()) != (SMALL_ENTRIES == ring.entries()))
                        {
                            torn++;
                        }
                    }
                }
            }
        }
        finally
        {
            running.set(false);
            remaking.join();
        }

        System.out.println("CqTableEntryTest: " + reads + " reads, " + taken + " rings taken, " + torn + " torn");
        assertTrue(taken > 0, "the NIC took rings while the driver made the CQ again");
        assertEquals(0, torn, "rings taken with one CQ's address and the other's Entries, of " + taken);
        assertFalse(remaking.isAlive());
    }
}
