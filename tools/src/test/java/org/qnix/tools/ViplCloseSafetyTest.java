package org.qnix.tools;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;

/**
 * {@code ViplNic.close()} is safe from any thread, as {@code Qnix.close()} is ({@link CloseSafetyTest}):
 * waits ({@code recvWait}, {@code sendWait}, {@code cq.await}), polls ({@code recvDone}, {@code sendDone},
 * {@code cq.done}) and posts that were running when another thread closed the NIC, and every such call
 * after it, end with a {@code ViplException} {@code INVALID_STATE}: never a JVM crash in memory the close
 * unmapped, never an exception of another kind, never a poll that answers NOT_DONE for ever. The racy
 * part runs in a child JVM ({@link ViplCloseSafetyWorker}), so that a crash is an exit code and a crash
 * file here rather than the end of the test JVM.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ViplCloseSafetyTest
{
    @TempDir
    Path workingDirectory;

    @Test
    void closingWhileThreadsWaitPollAndPostNeverCrashesAndEveryCallEndsInvalidState() throws Exception
    {
        final long seed = Long.getLong("qnix.close.seed", 20_261_124);
        final int iterations = 40;
        System.out.println("vipl-close-safety: seed " + seed + " (rerun with -Dqnix.close.seed=" + seed + ")");
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("vc"), 1, 1, "threads");
        try
        {
            final List<String> worker = ChildCommand.java(ViplCloseSafetyWorker.class.getName());
            worker.addAll(List.of(dir.name(), Integer.toString(iterations), Long.toString(seed)));
            CloseRace.assertEveryCallEndedClosed(worker, dir, workingDirectory, iterations,
                ViplCloseSafetyWorker.THREADS.length + ViplCloseSafetyWorker.CALLS_AFTER_CLOSE);
            TestClusters.await("the worker's VIA processes gone", () -> ClusterStatus.read(dir).vipl().isEmpty());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
