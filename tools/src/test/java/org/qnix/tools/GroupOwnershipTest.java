package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Doorbell;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixCompletionException;
import org.qnix.lib.QnixDriverException;
import org.qnix.lib.QnixPeerGoneException;

/**
 * Issue 17, item 4, against a real daemon and firmware JVMs: a process that joins the group of a
 * {@code qnix run} before its ranks register no longer breaks the run (it is put out of the group), a
 * process joins a limited number of groups, and a registration refused because the Group Table is full
 * says so.
 */
class GroupOwnershipTest
{
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aSquatterCannotTakeAnApplicationsGroupNorFillTheGroupTable() throws Exception
    {
        final ClusterParameters params = TestClusters.small(2, 1).groupTableEntries(12).build();
        final ClusterDirectory dir =
            TestClusters.up(new ClusterControl.Settings(TestClusters.uniqueName("g"), params).firmware("threads"));
        try (Qnix squatter = TestClusters.registerAlone(dir, 70_001, "0-0"))
        {
            final int application = 70_002;
            final int join = squatter.groupContext();
            squatter.joinGroup(join, application, 2);

            final String output = TestClusters.run(
                new ProgramLauncher(dir, 2, "Hello", List.of()).applicationId(application));
            assertEquals(2, output.lines().filter(l -> l.contains("(" + application + ",")).count(), output);
            assertThrows(QnixPeerGoneException.class, () -> squatter.waitForSend(join, 60, TimeUnit.SECONDS));

            // Joined groups: up to the limit, then NoResources.
            final int limit = ClusterParameters.MAX_JOINED_GROUPS_PER_PROCESS;
            for (int g = 0; g < limit; g++)
            {
                squatter.awaitJoinGroup(80_000 + g, 1, 60, TimeUnit.SECONDS);
            }
            final QnixCompletionException full = assertThrows(QnixCompletionException.class,
                () -> squatter.awaitJoinGroup(80_000 + limit, 1, 60, TimeUnit.SECONDS));
            assertEquals(Doorbell.NO_RESOURCES, full.status(), full.getMessage());
            assertTrue(full.getMessage().contains("the most it may"), full.getMessage());

            // 1 + 8 groups of the squatter; two more processes take the rest of the 12 entries.
            try (Qnix other = TestClusters.registerAlone(dir, 70_003, "0-0");
                 Qnix third = TestClusters.registerAlone(dir, 70_004, "0-0"))
            {
                other.awaitJoinGroup(90_000, 1, 60, TimeUnit.SECONDS);
                final QnixDriverException refused =
                    assertThrows(QnixDriverException.class, () -> TestClusters.registerAlone(dir, 70_005, "0-0"));
                assertEquals(Doorbell.NO_RESOURCES, refused.code(), refused.getMessage());
                assertTrue(refused.getMessage().contains("Group Table is full"), refused.getMessage());
            }
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
