package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.Test;

/** The firmware's idle strategy: no park inside the hot window, every park counted for every NIC after it. */
class HotWindowIdleStrategyTest
{
    private final CountersManager manager = new CountersManager(
        new UnsafeBuffer(new byte[64 * CountersManager.METADATA_LENGTH]), new UnsafeBuffer(new byte[64 * 128]));
    private final AtomicCounter nic0 = manager.newCounter("idle parks 0-0");
    private final AtomicCounter nic1 = manager.newCounter("idle parks 1-0");

    @Test
    void insideTheWindowItNeverParks()
    {
        final HotWindowIdleStrategy strategy = new HotWindowIdleStrategy(TimeUnit.SECONDS.toNanos(30), nic0, nic1);
        for (int i = 0; i < 10_000; i++)
        {
            strategy.idle(0);
        }
        assertEquals(0, nic0.get());
        assertEquals(0, nic1.get());
    }

    @Test
    void afterTheWindowEachIdleCallParksOnceAndCountsItForEveryNic()
    {
        final HotWindowIdleStrategy strategy = new HotWindowIdleStrategy(0, nic0, nic1);
        for (int i = 0; i < 20; i++)
        {
            strategy.idle(0);
        }
        assertEquals(20, nic0.get());
        assertEquals(20, nic1.get());
        // Work makes it hot again: with a long window, no more parks.
        final HotWindowIdleStrategy hot = new HotWindowIdleStrategy(TimeUnit.SECONDS.toNanos(30), nic0);
        hot.idle(1);
        hot.idle(0);
        assertEquals(20, nic0.get());
    }

    @Test
    void aNegativeWindowIsRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> new HotWindowIdleStrategy(-1));
        assertThrows(IllegalArgumentException.class, () -> IdleStrategies.parse(IdleStrategies.BACKOFF, 2_000_000));
    }
}
