package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.agrona.MutableDirectBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ProcessName;
import org.qnix.lib.BufferPool;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixClosedException;
import org.qnix.lib.ReceiveStatus;

/**
 * {@code Qnix.close()} is safe from any thread (issue 12): polls, sends and receives after it, and calls
 * that were waiting when another thread closed, end with {@link QnixClosedException}, never with a JVM
 * crash in unmapped memory. The racy part runs 200 times in a child JVM ({@link CloseSafetyWorker}), so
 * that a crash is an exit code and a crash file here rather than the end of the test JVM.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CloseSafetyTest
{
    @TempDir
    Path workingDirectory;

    @Test
    void aWaitInProgressAndEveryLaterCallEndClosed() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("c"), 1, 1, "threads");
        try
        {
            final Qnix qnix = TestClusters.registerAlone(dir, 7601, "0-0");
            final QnixBuffer buffer = qnix.allocateBuffer(64);
            buffer.lock();
            final int rx = qnix.recvContext(Qnix.ANY_PROC, 1, true, buffer, 0, 64);
            qnix.receive(rx);
            final CountDownLatch waiting = new CountDownLatch(1);
            final CompletableFuture<Void> receiver = CompletableFuture.runAsync(() ->
            {
                waiting.countDown();
                qnix.waitForReceive(rx, new ReceiveStatus(), 1, TimeUnit.HOURS);
            });
            waiting.await();
            qnix.close();
            final ExecutionException ended = assertThrows(ExecutionException.class, () -> receiver.get(60, TimeUnit.SECONDS));
            assertEquals(QnixClosedException.class, ended.getCause().getClass(), String.valueOf(ended.getCause()));
            assertTrue(qnix.isClosed());

            assertThrows(QnixClosedException.class, () -> qnix.pollForReceive(rx, new ReceiveStatus()));
            assertThrows(QnixClosedException.class, () -> qnix.pollForSend(0));
            assertThrows(QnixClosedException.class, () -> qnix.waitForSend(0, 1, TimeUnit.SECONDS));
            assertThrows(QnixClosedException.class, () -> qnix.send(0));
            assertThrows(QnixClosedException.class, () -> qnix.trySend(0));
            assertThrows(QnixClosedException.class, () -> qnix.receive(rx));
            assertThrows(QnixClosedException.class, () -> qnix.tryReceive(rx));
            assertThrows(QnixClosedException.class,
                () -> qnix.sendContext(new ProcessName(7601, 1), 1, true, buffer, 0, 64));
            assertThrows(QnixClosedException.class, () -> qnix.recvContext(Qnix.ANY_PROC, 1, true, buffer, 0, 64));
            assertThrows(QnixClosedException.class, () -> qnix.groupMembers(7601));
            assertThrows(QnixClosedException.class, () -> qnix.allocateBuffer(64));
            assertTrue(buffer.isClosed(), "close() unmapped the buffer");
            qnix.close();
            TestClusters.await("the process de-registered", () -> ClusterStatus.read(dir).processes().isEmpty());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    /**
     * Views a program keeps past {@code close()} read zeros (RetiredMemory): the pages went back to the
     * driver, which may give them to another process, so they neither fault nor show its data. And a
     * buffer or pool of another instance is refused when a context names it.
     */
    @Test
    void viewsKeptPastCloseReadZerosAndAnotherInstancesMemoryIsRefused() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("v"), 1, 1, "threads");
        try
        {
            final Qnix first = TestClusters.registerAlone(dir, 7603, "0-0");
            final Qnix second = TestClusters.registerAlone(dir, 7604, "0-0");
            final ProcessName peer = second.name();
            final BufferPool pool = first.bufferPool(2);
            final MutableDirectBuffer slice = pool.slice(1, 100);
            slice.putLong(0, 42);
            final QnixBuffer buffer = first.allocateBuffer(64);
            buffer.lock();
            final ByteBuffer kept = buffer.byteBuffer();
            kept.put(0, (byte)7);

            assertThrows(IllegalArgumentException.class, () -> second.sendContext(peer, 1, true, pool, 1, 100));
            assertThrows(IllegalArgumentException.class, () -> second.recvContext(peer, 1, true, buffer, 0, 64));

            first.close();
            assertEquals(0, slice.getLong(0), "a kept Buffer Pool slice");
            assertEquals(0, kept.get(0), "a kept ByteBuffer of a buffer");
            slice.putLong(8, 1);
            assertEquals(1, slice.getLong(8), "its own writes, where nobody else reads them");
            second.close();
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void closingFromAnotherThreadWhileThreadsWaitPollAndSendNeverCrashes() throws Exception
    {
        final long seed = Long.getLong("qnix.close.seed", 20_261_123);
        final int iterations = 200;
        System.out.println("close-safety: seed " + seed + " (rerun with -Dqnix.close.seed=" + seed + ")");
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("c"), 1, 1, "threads");
        try
        {
            final List<String> worker = ChildCommand.java(CloseSafetyWorker.class.getName());
            worker.addAll(List.of(dir.name(), "7602", Integer.toString(iterations), Long.toString(seed)));
            // Six racing threads and nineteen calls after the close, every iteration.
            CloseRace.assertEveryCallEndedClosed(worker, dir, workingDirectory, iterations, 6 + 19);
            TestClusters.await("the worker de-registered", () -> ClusterStatus.read(dir).processes().isEmpty());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
