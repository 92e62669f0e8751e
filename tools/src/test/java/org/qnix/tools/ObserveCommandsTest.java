package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicProcessor;
import org.qnix.firmware.NicCounters;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.ReceiveStatus;

/**
 * {@code qnix ps} and {@code qnix stat} on a known exchange, checked through their {@code --json}
 * outputs: the processes and what they hold, and counters that moved by exactly the exchange.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ObserveCommandsTest
{
    private static final int MESSAGES = 3;
    private static final int LENGTH = 10_000;

    @Test
    void psAndStatShowAKnownExchange() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("o"), 2, 1, "threads");
        try (Qnix sender = TestClusters.registerAlone(dir, 701, "0-0");
             Qnix receiver = TestClusters.registerAlone(dir, 702, "1-0"))
        {
            final Map<String, Map<String, Long>> before = stat(dir);
            final QnixBuffer out = sender.allocateBuffer(LENGTH);
            out.lock();
            final QnixBuffer in = receiver.allocateBuffer(LENGTH);
            in.lock();
            final ReceiveStatus status = new ReceiveStatus();
            for (int m = 0; m < MESSAGES; m++)
            {
                final int rx = receiver.recvContext(sender.name(), m, true, in, 0, LENGTH);
                receiver.receive(rx);
                final int tx = sender.sendContext(receiver.name(), m, true, out, 0, LENGTH);
                sender.send(tx);
                sender.waitForSend(tx, 60, TimeUnit.SECONDS);
                receiver.waitForReceive(rx, status, 60, TimeUnit.SECONDS);
            }
            // One receive left posted: ps shows its Receive Context in use.
            final int waiting = receiver.recvContext(sender.name(), 99, true, in, 0, LENGTH);
            final long commands = TestClusters.counters(dir, NicCoordinates.parse("1-0")).get(NicCounters.COMMANDS);
            receiver.receive(waiting);
            // inspect shows its Command Queue empty only once the NIC has taken the command.
            TestClusters.await("the NIC to take the Receive command", () ->
                TestClusters.counters(dir, NicCoordinates.parse("1-0")).get(NicCounters.COMMANDS) > commands);

            final Map<String, Map<String, Long>> after = stat(dir);
            assertEquals(MESSAGES * (long)LENGTH, delta(before, after, "0-0", NicCounters.DATA_BYTES_SENT));
            assertEquals(MESSAGES * (long)LENGTH, delta(before, after, "1-0", NicCounters.DATA_BYTES_RECEIVED));
            assertEquals(MESSAGES, delta(before, after, "0-0", NicCounters.SENDS_COMPLETED));
            assertEquals(MESSAGES, delta(before, after, "1-0", NicCounters.RECEIVES_COMPLETED));
            assertEquals(0, delta(before, after, "0-0", NicCounters.RECEIVES_COMPLETED));

            final CliResult ps = CliResult.run("ps", "--cluster", dir.name(), "--json");
            assertEquals(QnixCommand.OK, ps.exit, ps.err);
            final JsonArray processes = JsonParser.parseString(ps.out).getAsJsonObject().getAsJsonArray("processes");
            assertEquals(2, processes.size(), ps.out);
            final Map<String, JsonObject> byName = new HashMap<>();
            processes.forEach(p -> byName.put(p.getAsJsonObject().get("name").getAsString(), p.getAsJsonObject()));
            final JsonObject a = byName.get(sender.name().toString());
            final JsonObject b = byName.get(receiver.name().toString());
            assertEquals("0-0", a.get("node").getAsString());
            assertEquals("1-0", b.get("node").getAsString());
            for (final JsonObject p : List.of(a, b))
            {
                assertEquals("registered", p.get("state").getAsString());
                assertEquals(ProcessHandle.current().pid(), p.get("osPid").getAsLong());
                final List<Integer> cpus = new ArrayList<>();
                p.getAsJsonArray("cpus").forEach(cpu -> cpus.add(cpu.getAsInt()));
                assertEquals(List.copyOf(NicProcessor.allowedCpus(ProcessHandle.current().pid())), cpus, p.toString());
                assertEquals(1, p.get("groupSize").getAsInt());
                final int hpsPages = HostProcessStructuresLayout.pages(
                    sender.parameters().contextsPerProcess(), sender.parameters().pageSize());
                final long bufferPages = TestClusters.pages(out).size();
                assertTrue(p.get("pagesHeld").getAsLong() >= hpsPages + bufferPages, p.toString());
                assertTrue(p.get("pagesLocked").getAsLong() >= hpsPages + bufferPages, p.toString());
            }
            assertEquals(0, a.get("receiveContextsInUse").getAsInt(), a.toString());
            assertEquals(1, b.get("receiveContextsInUse").getAsInt(), "the posted receive: " + b);

            final CliResult table = CliResult.run("ps", "--cluster", dir.name());
            assertEquals(QnixCommand.OK, table.exit, table.err);
            assertEquals(3, table.out.lines().count(), "a header and one line per process:\n" + table.out);
            assertTrue(table.out.lines().findFirst().orElseThrow().contains(" CPUS "), table.out);

            // A thread blocked in the posted receive: inspect shows its context as posted, page by page.
            final ReceiveStatus late = new ReceiveStatus();
            final Thread blocked = new Thread(() -> receiver.waitForReceive(waiting, late, 60, TimeUnit.SECONDS));
            blocked.start();
            final CliResult inspect = CliResult.run("inspect", receiver.name().ai() + ",0", "--cluster", dir.name(),
                "--json");
            assertEquals(QnixCommand.OK, inspect.exit, inspect.err);
            final JsonObject vni = JsonParser.parseString(inspect.out).getAsJsonObject();
            assertEquals(0, vni.getAsJsonArray("sendContextsInUse").size(), inspect.out);
            final JsonArray posted = vni.getAsJsonArray("receiveContextsInUse");
            assertEquals(1, posted.size(), inspect.out);
            final JsonObject context = posted.get(0).getAsJsonObject();
            assertEquals(waiting, context.get("context").getAsInt());
            assertEquals("Used", context.get("doorbell").getAsString());
            assertEquals(sender.name().toString(), context.get("sender").getAsString());
            assertEquals(99, context.get("tag").getAsInt());
            assertEquals(LENGTH, context.get("length").getAsInt());
            final JsonArray pageTable = context.getAsJsonArray("pageTable");
            final List<Long> pages = TestClusters.pages(in);
            assertEquals(pages.size(), pageTable.size(), inspect.out);
            long described = 0;
            for (int d = 0; d < pages.size(); d++)
            {
                assertEquals(pages.get(d), pageTable.get(d).getAsJsonObject().get("page").getAsLong());
                described += pageTable.get(d).getAsJsonObject().get("length").getAsLong();
            }
            assertEquals(LENGTH, described);
            assertEquals(0, vni.getAsJsonObject("commandQueue").getAsJsonArray("pending").size(),
                "the NIC took the Receive command");
            final CliResult text = CliResult.run("inspect", receiver.name().toString(), "--cluster", dir.name());
            assertEquals(QnixCommand.OK, text.exit, text.err);
            assertTrue(text.out.contains("doorbell: Used"), text.out);

            final CliResult node = CliResult.run("inspect", "1-0", "--cluster", dir.name(), "--json");
            assertEquals(QnixCommand.OK, node.exit, node.err);
            final JsonObject nic = JsonParser.parseString(node.out).getAsJsonObject();
            assertEquals("running", nic.get("firmware").getAsString());
            assertEquals(1, nic.getAsJsonArray("processTable").size(), node.out);
            assertEquals(receiver.name().toString(),
                nic.getAsJsonArray("processTable").get(0).getAsJsonObject().get("name").getAsString());
            assertEquals(2, nic.getAsJsonArray("nameTable").size(), "both processes, cluster-wide: " + node.out);
            assertEquals(0, nic.getAsJsonObject("staging").get("bytesInUse").getAsLong());

            for (final String absent : List.of("9,9", "5-5"))
            {
                final CliResult missing = CliResult.run("inspect", absent, "--cluster", dir.name());
                assertEquals(QnixCommand.BAD_ARGUMENT, missing.exit, absent);
                assertEquals(1, missing.err.lines().count(), missing.err);
            }

            // The message it waits for: the blocked thread gets it, and the context is free again.
            final int last = sender.sendContext(receiver.name(), 99, true, out, 0, LENGTH);
            sender.send(last);
            sender.waitForSend(last, 60, TimeUnit.SECONDS);
            blocked.join(TimeUnit.SECONDS.toMillis(60));
            assertEquals(99, late.tag());
            final JsonObject after2 = JsonParser.parseString(CliResult.run("inspect", receiver.name().ai() + ",0",
                "--cluster", dir.name(), "--json").out).getAsJsonObject();
            assertEquals(0, after2.getAsJsonArray("receiveContextsInUse").size(), after2.toString());

            final CliResult watch = CliResult.run("stat", "--cluster", dir.name(), "--json", "--watch", "0.2",
                "--count", "2");
            assertEquals(QnixCommand.OK, watch.exit, watch.err);
            final List<String> lines = watch.out.lines().toList();
            assertEquals(2, lines.size(), watch.out);
            final JsonObject second = JsonParser.parseString(lines.get(1)).getAsJsonObject();
            for (final JsonElement reading : second.getAsJsonArray("nodes"))
            {
                assertEquals("running", reading.getAsJsonObject().get("firmware").getAsString());
                assertTrue(reading.getAsJsonObject().getAsJsonObject("ratesPerSecond").has(NicCounters.HEARTBEATS));
            }
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void badArgumentsGetAOneLineError()
    {
        for (final String[] args : List.of(new String[] {"stat", "--watch", "0"},
            new String[] {"stat", "--count", "2"}, new String[] {"stat", "--watch", "1", "--count", "0"},
            new String[] {"ps", "--cluster", "no-such-cluster-here"},
            new String[] {"stat", "--cluster", "no-such-cluster-here"}, new String[] {"ps", "--frobnicate"},
            new String[] {"inspect", "frob"}, new String[] {"inspect"},
            new String[] {"inspect", "1,0", "--cluster", "no-such-cluster-here"}))
        {
            final CliResult result = CliResult.run(args);
            assertTrue(result.exit != QnixCommand.OK, String.join(" ", args));
            assertEquals(1, result.err.lines().count(), String.join(" ", args) + ":\n" + result.err);
            assertTrue(result.err.startsWith("qnix: "), result.err);
        }
    }

    /** @return counters by node, then label, from {@code qnix stat --json}. */
    private static Map<String, Map<String, Long>> stat(final ClusterDirectory dir)
    {
        final CliResult result = CliResult.run("stat", "--cluster", dir.name(), "--json");
        assertEquals(QnixCommand.OK, result.exit, result.err);
        final Map<String, Map<String, Long>> values = new HashMap<>();
        for (final JsonElement element : JsonParser.parseString(result.out).getAsJsonObject().getAsJsonArray("nodes"))
        {
            final JsonObject node = element.getAsJsonObject();
            final Map<String, Long> counters = new HashMap<>();
            node.getAsJsonObject("counters").entrySet().forEach(e -> counters.put(e.getKey(), e.getValue().getAsLong()));
            values.put(node.get("node").getAsString(), counters);
        }
        return values;
    }

    private static long delta(final Map<String, Map<String, Long>> before, final Map<String, Map<String, Long>> after,
        final String node, final String counter)
    {
        return after.get(node).get(counter) - before.get(node).get(counter);
    }
}
