package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.firmware.NicCounters;
import org.qnix.lib.Qnix;

/**
 * Issue 17, item 5, against a real daemon and firmware: registrations waiting for their group do not
 * hold the node's Driver Command Queue. With a queue of 4 entries, 8 members of an incomplete group
 * wait on one node while another process registers there at once; then the ninth member arrives and
 * all nine complete.
 */
class PendingRegistrationsTest
{
    private static final int GROUP = 910;
    private static final int WAITING = 8;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void registrationsWaitingForTheirGroupLeaveTheDriverCommandQueueFree() throws Exception
    {
        final ClusterParameters params = TestClusters.small(2, 1).processes(16).driverCommandQueueEntries(4).build();
        final ClusterDirectory dir =
            TestClusters.up(new ClusterControl.Settings(TestClusters.uniqueName("r"), params).firmware("threads"));
        final ExecutorService members = Executors.newFixedThreadPool(WAITING);
        final List<Future<Qnix>> waiting = new ArrayList<>();
        final List<Qnix> registered = new ArrayList<>();
        try
        {
            final NicCoordinates node = NicCoordinates.parse("0-0");
            for (int pi = 0; pi < WAITING; pi++)
            {
                final int member = pi;
                waiting.add(members.submit(() -> init(dir, new ProcessName(GROUP, member), GROUP, WAITING + 1, "0-0")));
            }
            TestClusters.await(WAITING + " New_Process commands taken by node 0-0",
                () -> TestClusters.counters(dir, node).get(NicCounters.DRIVER_COMMANDS) >= WAITING);

            // Twice the queue's length is waiting: an unrelated process still registers on the node.
            try (Qnix other = init(dir, new ProcessName(GROUP + 1, 0), GROUP + 1, 1, "0-0"))
            {
                assertEquals(node, other.node());
            }

            registered.add(init(dir, new ProcessName(GROUP, WAITING), GROUP, WAITING + 1, "1-0"));
            for (final Future<Qnix> member : waiting)
            {
                registered.add(member.get(120, TimeUnit.SECONDS));
            }
            assertEquals(WAITING + 1, registered.get(0).groupMembers(GROUP).size());
        }
        finally
        {
            for (final Qnix qnix : registered)
            {
                qnix.close();
            }
            members.shutdownNow();
            TestClusters.down(dir);
        }
    }

    private static Qnix init(final ClusterDirectory dir, final ProcessName name, final int group, final int size,
        final String node)
    {
        return Qnix.options().name(name).group(group, size).cluster(dir.name()).node(node)
            .timeout(Duration.ofSeconds(120)).init();
    }
}
