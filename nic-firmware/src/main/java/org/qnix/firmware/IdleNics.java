package org.qnix.firmware;

import java.nio.ByteBuffer;
import java.util.List;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.qnix.abi.Futex;
import org.qnix.abi.NicWakeLayout;

/**
 * The NICs one firmware thread runs, as its idle strategy puts them to rest: it counts each park in
 * every NIC's counters and, once they have been idle long enough, puts them to sleep until someone
 * gives one of them work ({@link org.qnix.abi.NicWakeUp}) or a heartbeat is due.
 *
 * <p>Going to sleep is two steps, so that no wake-up is lost between the last look for work and the
 * futex wait: {@link #arm()} reads each NIC's Wake Sequence and then sets its Asleep flag; the runner
 * then runs one more duty cycle, which sees any work published before a waker could have read Asleep;
 * {@link #sleep} waits while every Wake Sequence still holds what {@code arm} read, so a waker that
 * bumped one after that returns it at once. One thread, several NICs: their words are waited on
 * together with futex_waitv (Linux 5.16); where that is missing a thread of several NICs only parks.
 *
 * <pre>{@code
 * IdleNics nics = IdleNics.of(List.of(program));
 * IdleStrategy idle = new HotWindowIdleStrategy(hotNs, nics);
 * }</pre>
 *
 * <p>Not thread safe: the one thread that runs the NICs uses it.
 */
public final class IdleNics
{
    private final AtomicCounter[] parks;
    private final AtomicCounter[] sleeps;
    private final AtomicBuffer[] wake;
    private final UnsafeBuffer waiters;
    private final boolean canSleep;
    private boolean armed;
    private int watched0;

    private IdleNics(final AtomicCounter[] parks, final AtomicCounter[] sleeps, final AtomicBuffer[] wake)
    {
        this.parks = parks;
        this.sleeps = sleeps;
        this.wake = wake;
        this.waiters = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(1, wake.length) * Futex.WAITV_ENTRY_LENGTH));
        this.canSleep = 1 == wake.length ? Futex.available() : wake.length > 1 && Futex.waitvAvailable();
    }

    /** The NICs of these control programs, which run on one thread. */
    public static IdleNics of(final List<NicControlProgram> programs)
    {
        final int n = programs.size();
        final AtomicCounter[] parks = new AtomicCounter[n];
        final AtomicCounter[] sleeps = new AtomicCounter[n];
        final NodeImage[] images = new NodeImage[n];
        for (int i = 0; i < n; i++)
        {
            parks[i] = programs.get(i).idleParks();
            sleeps[i] = programs.get(i).sleeps();
            images[i] = programs.get(i).image();
        }
        return of(images, parks, sleeps);
    }

    /** The NICs of these node images, counting in these counters (one of each per image). */
    static IdleNics of(final NodeImage[] images, final AtomicCounter[] parks, final AtomicCounter[] sleeps)
    {
        final int n = images.length;
        final AtomicBuffer[] wake = new AtomicBuffer[n];
        for (int i = 0; i < n; i++)
        {
            wake[i] = images[i].wake();
        }
        return new IdleNics(parks.clone(), sleeps.clone(), wake);
    }

    /** NICs that only count their parks and never sleep (tests of the strategy, other idle strategies). */
    public static IdleNics parksOnly(final AtomicCounter... parks)
    {
        return new IdleNics(parks.clone(), new AtomicCounter[0], new AtomicBuffer[0]);
    }

    /** @return true if this platform lets these NICs sleep until woken. */
    public boolean canSleep()
    {
        return canSleep;
    }

    public boolean isArmed()
    {
        return armed;
    }

    void countPark()
    {
        for (final AtomicCounter counter : parks)
        {
            counter.increment();
        }
    }

    /** Step one of going to sleep: the runner must look for work once more before {@link #sleep}. */
    void arm()
    {
        watchWakeSequences();
        for (int i = 0; i < wake.length; i++)
        {
            // Readers: the wakers, after they published work. A volatile store: the duty cycle's looks for
            // work that follow come after it (Dekker with NicWakeUp.ring).
            wake[i].putIntVolatile(NicWakeLayout.ASLEEP_OFFSET, NicWakeLayout.ASLEEP);
        }
        armed = true;
    }

    /**
     * Sleeps until a Wake Sequence moves or {@code timeoutNs} passes, then reads the sequences again for
     * the next sleep: the runner looks for work between two sleeps.
     */
    void sleep(final long timeoutNs)
    {
        for (final AtomicCounter counter : sleeps)
        {
            counter.increment();
        }
        if (1 == wake.length)
        {
            Futex.await(wake[0].addressOffset() + NicWakeLayout.WAKE_SEQUENCE_OFFSET, watched0, timeoutNs);
        }
        else
        {
            Futex.awaitAny(waiters, wake.length, timeoutNs);
        }
        watchWakeSequences();
    }

    /** Notes each Wake Sequence as it is now: the next sleep lasts only while none has moved from it. */
    private void watchWakeSequences()
    {
        for (int i = 0; i < wake.length; i++)
        {
            // Writers: the NICs' wakers (NicWakeUp), who bump it when they find the NIC asleep.
            final int sequence = wake[i].getIntVolatile(NicWakeLayout.WAKE_SEQUENCE_OFFSET);
            Futex.putWaiter(waiters, i, wake[i].addressOffset() + NicWakeLayout.WAKE_SEQUENCE_OFFSET, sequence);
            if (0 == i)
            {
                watched0 = sequence;
            }
        }
    }

    /** Awake again: wakers stop making the system call. */
    void disarm()
    {
        if (!armed)
        {
            return;
        }
        armed = false;
        for (int i = 0; i < wake.length; i++)
        {
            // Readers: the wakers; a late one that still saw ASLEEP only bumps the sequence for nothing.
            wake[i].putIntRelease(NicWakeLayout.ASLEEP_OFFSET, NicWakeLayout.AWAKE);
        }
    }
}
