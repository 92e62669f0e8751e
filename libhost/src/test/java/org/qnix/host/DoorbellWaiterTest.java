package org.qnix.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.Futex;
import org.qnix.abi.HostClock;
import org.qnix.abi.NicCoordinates;

/**
 * The wait for a doorbell without a cluster: a direct buffer stands in for the Host Process Structures
 * page (a real address, so that the futex sleep is real) and for the NIC's control-program area, and the
 * test plays the NIC: it writes the word with release and wakes a sleeper only if the waiters word says
 * one sleeps (DESIGN.md 5).
 */
@Timeout(60)
class DoorbellWaiterTest
{
    private static final int VALUE = 64;
    private static final int WAITERS = VALUE + Integer.BYTES;
    private static final long LONG_NS = TimeUnit.SECONDS.toNanos(60);

    private final UnsafeBuffer words = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
    private final UnsafeBuffer control = new UnsafeBuffer(ByteBuffer.allocateDirect(ControlProgramLayout.LENGTH));
    private final MappingGuard guard = new MappingGuard();
    private final NicHeartbeat heartbeat = new NicHeartbeat(control, 0, NicCoordinates.parse("1-0"));
    private final DoorbellWaiter waiter = new DoorbellWaiter(words, heartbeat, guard);
    private Thread nic;

    DoorbellWaiterTest()
    {
        beat();
        words.putIntRelease(VALUE, Doorbell.USED);
    }

    @AfterEach
    void stopNic() throws InterruptedException
    {
        if (null != nic)
        {
            nic.interrupt();
            nic.join();
        }
    }

    @ParameterizedTest
    @EnumSource(DoorbellWait.class)
    void aCompletedDoorbellEndsTheWaitAtOnce(final DoorbellWait wait)
    {
        words.putIntRelease(VALUE, Doorbell.PEER_GONE);
        assertEquals(DoorbellWaiter.COMPLETE, waiter.await(VALUE, WAITERS, Doorbell::isComplete, LONG_NS, wait));
        assertEquals(0, words.getIntVolatile(WAITERS), "no sleeper is announced after the wait");
    }

    @ParameterizedTest
    @EnumSource(DoorbellWait.class)
    void theNicsWriteEndsTheWaitAndTheWaitersWordIsClearedAfter(final DoorbellWait wait) throws Exception
    {
        final CountDownLatch waiting = new CountDownLatch(1);
        nic = new Thread(() ->
        {
            try
            {
                waiting.await();
                // Long enough for a SLEEP wait to be past its spins, most of the time; either way it must end.
                Thread.sleep(20);
            }
            catch (final InterruptedException ex)
            {
                return;
            }
            playNicCompletion(Doorbell.DONE);
        }, "nic");
        nic.start();
        waiting.countDown();
        assertEquals(DoorbellWaiter.COMPLETE, waiter.await(VALUE, WAITERS, Doorbell::isComplete, LONG_NS, wait));
        assertEquals(Doorbell.DONE, words.getIntVolatile(VALUE));
        assertEquals(0, words.getIntVolatile(WAITERS));
    }

    @ParameterizedTest
    @EnumSource(DoorbellWait.class)
    void aWordThatNeverCompletesTimesOut(final DoorbellWait wait)
    {
        assertEquals(DoorbellWaiter.TIMED_OUT,
            waiter.await(VALUE, WAITERS, Doorbell::isComplete, TimeUnit.MILLISECONDS.toNanos(30), wait));
        assertEquals(Doorbell.USED, words.getIntVolatile(VALUE));
    }

    @ParameterizedTest
    @EnumSource(DoorbellWait.class)
    void aStoppedNicEndsTheWaitBeforeItsTimeout(final DoorbellWait wait)
    {
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_STOPPED);
        assertEquals(DoorbellWaiter.NIC_DEAD, waiter.await(VALUE, WAITERS, Doorbell::isComplete, LONG_NS, wait));
    }

    @ParameterizedTest
    @EnumSource(DoorbellWait.class)
    void aSilentNicIsDeadToo(final DoorbellWait wait)
    {
        control.putLongVolatile(ControlProgramLayout.HEARTBEAT_TIME_OFFSET,
            HostClock.millis() - 2 * ControlProgramLayout.HEARTBEAT_TIMEOUT_MS);
        assertEquals(DoorbellWaiter.NIC_DEAD, waiter.await(VALUE, WAITERS, Doorbell::isComplete, LONG_NS, wait));
        assertEquals(true, heartbeat.describeStopped().contains("node 1-0"), heartbeat.describeStopped());
    }

    @ParameterizedTest
    @EnumSource(DoorbellWait.class)
    void aWaitOnAClosedGuardEndsClosed(final DoorbellWait wait)
    {
        guard.beginClose();
        assertEquals(DoorbellWaiter.CLOSED, waiter.await(VALUE, WAITERS, Doorbell::isComplete, LONG_NS, wait));
    }

    @ParameterizedTest
    @EnumSource(DoorbellWait.class)
    void aCloseFromAnotherThreadEndsAWaitInProgress(final DoorbellWait wait) throws Exception
    {
        final AtomicInteger code = new AtomicInteger(-1);
        final CountDownLatch entered = new CountDownLatch(1);
        final Thread waiting = new Thread(() ->
        {
            if (!guard.enter())
            {
                return;
            }
            try
            {
                entered.countDown();
                code.set(waiter.await(VALUE, WAITERS, Doorbell::isComplete, LONG_NS, wait));
            }
            finally
            {
                guard.exit();
            }
        }, "waiter");
        waiting.start();
        entered.await();
        Thread.sleep(5);
        assertEquals(true, guard.beginClose());
        waiter.wakeAll(VALUE);
        // The hang guard of a real close is seconds; here it is the test's timeout.
        while (!guard.awaitQuiescence(TimeUnit.SECONDS.toNanos(1)))
        {
            Thread.onSpinWait();
        }
        waiting.join();
        assertEquals(DoorbellWaiter.CLOSED, code.get());
        assertEquals(0, guard.callsInside());
    }

    @Test
    void aWordTestedByAnotherConditionEndsWhenTheConditionHolds() throws Exception
    {
        // A completion counter, as libvipl waits on: any value past 3 completes.
        words.putIntRelease(VALUE, 3);
        nic = new Thread(() ->
        {
            for (int i = 4; i <= 5; i++)
            {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                words.putIntRelease(VALUE, i);
                if (0 != words.getIntVolatile(WAITERS))
                {
                    Futex.wakeAll(words.addressOffset() + VALUE);
                }
            }
        }, "nic");
        nic.start();
        assertEquals(DoorbellWaiter.COMPLETE, waiter.await(VALUE, WAITERS, v -> v >= 5, LONG_NS, DoorbellWait.SLEEP));
        assertEquals(5, words.getIntVolatile(VALUE));
    }

    /**
     * Two threads of a process asleep on one word (two waits on one CQ): the waiters word counts them,
     * so when the first leaves the NIC still sees the second and wakes it at its completion, instead
     * of leaving it to the end of its sleep slice.
     */
    @Test
    void twoSleepersOnOneWordAreCountedAndTheSecondStaysAnnouncedWhenTheFirstLeaves() throws Exception
    {
        if (!Futex.available())
        {
            return;
        }
        final DoorbellWaiter cold = new DoorbellWaiter(words, heartbeat, guard, 0);
        words.putIntRelease(VALUE, 0);
        final AtomicInteger first = new AtomicInteger(-1);
        final AtomicInteger second = new AtomicInteger(-1);
        final Thread one = new Thread(() -> first.set(cold.await(VALUE, WAITERS, v -> v >= 1, LONG_NS,
            DoorbellWait.SLEEP)), "sleeper-1");
        final Thread two = new Thread(() -> second.set(cold.await(VALUE, WAITERS, v -> v >= 2, LONG_NS,
            DoorbellWait.SLEEP)), "sleeper-2");
        one.start();
        two.start();
        while (2 != words.getIntVolatile(WAITERS))
        {
            Thread.yield();
        }
        playNicCompletion(1);
        one.join();
        assertEquals(DoorbellWaiter.COMPLETE, first.get());
        assertEquals(1, words.getIntVolatile(WAITERS), "the second sleeper is still announced to the NIC");
        playNicCompletion(2);
        two.join();
        assertEquals(DoorbellWaiter.COMPLETE, second.get());
        assertEquals(0, words.getIntVolatile(WAITERS));
    }

    private void beat()
    {
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
        control.putLongVolatile(ControlProgramLayout.HEARTBEAT_TIME_OFFSET, HostClock.millis());
    }

    /** What the firmware does at completion: the word with release, then a wake-up if someone sleeps. */
    private void playNicCompletion(final int value)
    {
        words.putIntRelease(VALUE, value);
        if (0 != words.getIntVolatile(WAITERS))
        {
            Futex.wakeAll(words.addressOffset() + VALUE);
        }
    }
}
