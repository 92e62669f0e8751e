package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.google.gson.JsonParser;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixNicDeadException;

/**
 * Issue 17, item 9, against a real daemon and firmware JVMs: with one NIC's firmware dead, a
 * registration anywhere fails with {@link QnixNicDeadException} naming that node instead of waiting
 * for its whole timeout, and a process whose own NIC died can still close.
 */
class DeadNicTest
{
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aDeadNicFailsRegistrationsNamingItsNodeAndCloseStillReturns() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("n"), 2, 1, "processes");
        try
        {
            final Qnix survivor = TestClusters.registerAlone(dir, 801, "0-0");
            TestClusters.killFirmware(dir, "1-0");
            final QnixNicDeadException dead =
                assertThrows(QnixNicDeadException.class, () -> TestClusters.registerAlone(dir, 802, "0-0"));
            assertTrue(dead.getMessage().contains("node 1-0"), dead.getMessage());
            assertThrows(QnixNicDeadException.class, () -> TestClusters.registerAlone(dir, 803, "0-0"),
                "and at once for the next one");

            // qnix stat says which NIC is not running, in both its forms.
            final CliResult json = CliResult.run("stat", "--cluster", dir.name(), "--json");
            assertEquals(QnixCommand.OK, json.exit, json.err);
            final Map<String, String> states = new HashMap<>();
            JsonParser.parseString(json.out).getAsJsonObject().getAsJsonArray("nodes").forEach(n ->
                states.put(n.getAsJsonObject().get("node").getAsString(), n.getAsJsonObject().get("firmware").getAsString()));
            // Killed: its process is gone (a firmware at a breakpoint would be "stalled").
            assertEquals(Map.of("0-0", "running", "1-0", "gone"), states);
            final CliResult text = CliResult.run("stat", "--cluster", dir.name());
            assertTrue(text.out.contains("node 1-0: firmware gone, last heartbeat") &&
                text.out.contains("nothing posted to this NIC completes"), text.out);
            assertFalse(text.out.contains("node 0-0: firmware"), "the running NIC gets no such line:\n" + text.out);

            TestClusters.killFirmware(dir, "0-0");
            final long start = System.nanoTime();
            survivor.close();
            System.out.println("close with its own NIC dead took " +
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
