package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Futex;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicWakeLayout;

/**
 * An idle firmware thread sleeps, and whoever gives one of its NICs work wakes it ({@link IdleNics},
 * {@link org.qnix.abi.NicWakeUp}). The sleeps here are a minute long: only the wake-up can end them
 * within the test's timeout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NicSleepTest
{
    private static final long MINUTE_NS = TimeUnit.MINUTES.toNanos(1);

    @TempDir
    Path base;

    private final CountersManager manager = new CountersManager(
        new UnsafeBuffer(new byte[64 * CountersManager.METADATA_LENGTH]), new UnsafeBuffer(new byte[64 * 128]));
    private final NodeImage[] images = new NodeImage[2];
    private Thread firmware;
    private final AtomicBoolean running = new AtomicBoolean(true);

    @AfterEach
    void stop() throws InterruptedException
    {
        running.set(false);
        if (null != firmware)
        {
            for (final NodeImage image : images)
            {
                image.wakeUp().ring();
            }
            firmware.join(TimeUnit.SECONDS.toMillis(10));
        }
        CloseHelper.closeAll(images);
    }

    @Test
    void oneThreadOfTwoNicsSleepsUntilTheSecondIsGivenWork() throws Exception
    {
        assumeTrue(Futex.waitvAvailable(), "no futex_waitv here: a thread of several NICs parks instead");
        final ClusterParameters params = SteppedCluster.smallParameters(2, 1).build();
        final ClusterDirectory dir = new ClusterDirectory(base, "sleep");
        images[0] = NodeImage.create(dir, params, new NicCoordinates(0, 0));
        images[1] = NodeImage.create(dir, params, new NicCoordinates(1, 0));
        final AtomicCounter[] parks = {manager.newCounter("parks 0-0"), manager.newCounter("parks 1-0")};
        final AtomicCounter[] sleeps = {manager.newCounter("sleeps 0-0"), manager.newCounter("sleeps 1-0")};
        final IdleNics nics = IdleNics.of(images, parks, sleeps);
        final HotWindowIdleStrategy idle = new HotWindowIdleStrategy(0, nics, MINUTE_NS);

        // The duty cycle of this test: work is a word another thread publishes, as a Command Queue entry.
        final AtomicInteger work = new AtomicInteger();
        final AtomicInteger done = new AtomicInteger();
        firmware = new Thread(() ->
        {
            while (running.get())
            {
                final int taken = work.getAndSet(0);
                done.addAndGet(taken);
                idle.idle(taken);
            }
        }, "firmware");
        firmware.start();

        awaitAsleep(sleeps[1], 1);
        assertEquals(NicWakeLayout.ASLEEP, asleep(0));
        assertEquals(NicWakeLayout.ASLEEP, asleep(1));
        final int sequenceBefore = sequence(1);

        work.set(1);
        images[1].wakeUp().ring();

        while (1 != done.get())
        {
            Thread.sleep(1);
        }
        assertNotEquals(sequenceBefore, sequence(1), "the waker found the NIC asleep and moved its Wake Sequence");
        assertEquals(sleeps[0].get(), sleeps[1].get(), "one thread: both NICs slept the same sleeps");

        // Awake again after work: a ring costs no system call and leaves the sequence alone, until it
        // has been idle long enough to sleep once more.
        final long sleepsAfterWork = sleeps[1].get();
        awaitAsleep(sleeps[1], sleepsAfterWork + 1);
        work.set(1);
        images[0].wakeUp().ring();
        while (2 != done.get())
        {
            Thread.sleep(1);
        }
    }

    @Test
    void aRingOfAnAwakeNicChangesNothing()
    {
        final ClusterParameters params = SteppedCluster.smallParameters(1, 1).build();
        images[0] = NodeImage.create(new ClusterDirectory(base, "awake"), params, new NicCoordinates(0, 0));
        images[1] = images[0];
        final int before = sequence(0);
        images[0].wakeUp().ring();
        assertEquals(before, sequence(0));
        assertEquals(NicWakeLayout.AWAKE, asleep(0));
        images[1] = null;
    }

    private void awaitAsleep(final AtomicCounter sleeps, final long count) throws InterruptedException
    {
        // The strategy counts a sleep as it starts the futex wait; Asleep was set one duty cycle before.
        while (sleeps.get() < count)
        {
            Thread.sleep(1);
        }
        assertTrue(firmware.isAlive());
    }

    private int asleep(final int node)
    {
        return images[node].wake().getIntVolatile(NicWakeLayout.ASLEEP_OFFSET);
    }

    private int sequence(final int node)
    {
        return images[node].wake().getIntVolatile(NicWakeLayout.WAKE_SEQUENCE_OFFSET);
    }
}
