package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.agrona.CloseHelper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.NicProcessor;
import org.qnix.lib.Qnix;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplNic;

/**
 * The NICs' processor on a real cluster: with the shared placement the firmware JVM runs on the
 * cluster's NIC CPU alone, a process keeps off it while it holds a QNIX or VIPL registration and gets
 * its CPUs back when it closes the last; {@code --firmware processes} and {@code --nic-cpu none} bind
 * nothing; a CPU that is not online is refused before anything is made.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class NicProcessorClusterTest
{
    @Test
    void theFirmwareRunsOnTheNicCpuAndARegisteredProcessKeepsOffItUntilItsLastRegistrationCloses() throws Exception
    {
        final int cpu = NicProcessor.resolve("auto", ClusterProperties.FIRMWARE_SHARED);
        assumeTrue(cpu >= 1, "needs two CPUs");
        final SortedSet<Integer> mine = NicProcessor.allowedCpus(ProcessHandle.current().pid());
        assumeTrue(mine.contains(cpu) && mine.size() > 1, "this JVM may run on CPU " + cpu + " and another: " + mine);

        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("cpu"), 2, 1, "shared");
        try
        {
            assertEquals(cpu, ClusterProperties.read(dir.propertiesFile()).orElseThrow().nicCpu());
            final long firmware = ClusterStatus.read(dir).nodes().get(0).firmwarePid();
            assertEquals(new TreeSet<>(List.of(cpu)), NicProcessor.allowedCpus(firmware), "every thread of the firmware JVM");
            final CliResult status = CliResult.run("cluster", "status", "--name", dir.name());
            assertTrue(status.out.contains("firmware as shared on CPU " + cpu), status.out);

            // Closed on failure too: a registration left open would keep this JVM, and every cluster the
            // later tests of this JVM bring up, off the NICs' CPU.
            Qnix qnix = null;
            ViplNic nic = null;
            try
            {
                qnix = TestClusters.registerAlone(dir, 811, "0-0");
                final SortedSet<Integer> registered = NicProcessor.allowedCpus(ProcessHandle.current().pid());
                assertFalse(registered.contains(cpu), "registered: " + registered);
                nic = Vipl.openNic("1-0", dir.name());
                qnix.close();
                assertFalse(NicProcessor.allowedCpus(ProcessHandle.current().pid()).contains(cpu),
                    "the VIPL NIC is still open");
                nic.close();
                assertEquals(mine, NicProcessor.allowedCpus(ProcessHandle.current().pid()), "every registration closed");
            }
            finally
            {
                CloseHelper.quietCloseAll(nic, qnix);
            }
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void processesPlacementAndNoneBindNothingAndAnOfflineCpuIsRefused() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("cpu"), 2, 1, "processes");
        try
        {
            assertEquals(NicProcessor.NONE, ClusterProperties.read(dir.propertiesFile()).orElseThrow().nicCpu());
            for (final ClusterStatus.Node node : ClusterStatus.read(dir).nodes())
            {
                assertNotEquals(1, NicProcessor.allowedCpus(node.firmwarePid()).size(), "unbound: the firmware JVM of " + node.node());
            }
        }
        finally
        {
            TestClusters.down(dir);
        }

        final String name = TestClusters.uniqueName("cpu");
        final CliResult none = CliResult.run("cluster", "up", "--name", name, "--torus", "1x1", "--nic-cpu", "none",
            "--sdram", "64M", "--host-mem", "64M");
        try
        {
            assertEquals(QnixCommand.OK, none.exit, none.err);
            assertFalse(none.out.contains(" on CPU "), none.out);
            assertEquals(NicProcessor.NONE,
                ClusterProperties.read(ClusterDirectory.of(name).propertiesFile()).orElseThrow().nicCpu());
        }
        finally
        {
            TestClusters.down(ClusterDirectory.of(name));
        }

        final String refused = TestClusters.uniqueName("cpu");
        final CliResult offline = CliResult.run("cluster", "up", "--name", refused, "--nic-cpu", "4096");
        assertNotEquals(QnixCommand.OK, offline.exit);
        assertTrue(offline.err.contains("--nic-cpu 4096: CPU 4096 is not online"), offline.err);
        assertFalse(Files.exists(ClusterDirectory.of(refused).path()), "nothing made");
    }
}
