package org.qnix.tools;

import java.io.PrintStream;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.ClusterDirectory;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code qnix stat}: every counter of every NIC, once or every few seconds with rates, like AeronStat.
 *
 * <pre>{@code
 * qnix stat                       # one reading of every NIC's counters
 * qnix stat --watch 2             # a reading every 2 s with per-second rates, until Ctrl-C
 * qnix stat --json --watch 1 --count 5   # five JSON lines, one per reading
 * }</pre>
 */
@Command(name = "stat", mixinStandardHelpOptions = true,
    description = {
        "Show every counter of every NIC of a cluster, once or every SECONDS.",
        "Packets, data bytes, permission requests, staging, errors and the rest; with --watch, per-second rates " +
            "too. A NIC whose firmware stopped or is silent gets a line saying so; its counters are as it left them." })
public final class StatCommand implements Callable<Integer>
{
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss");
    /** NICs side by side in one block of the table. */
    private static final int COLUMNS = 4;

    @Mixin
    ClusterOption cluster;

    @Option(names = "--watch", paramLabel = "SECONDS",
        description = "Read again every SECONDS (at least 0.1) and show rates, until Ctrl-C or --count readings.")
    Double watch;

    @Option(names = "--count", paramLabel = "N", description = "With --watch: stop after N readings.")
    Integer count;

    @Option(names = "--json", description = "One JSON object per reading (one per line when watching).")
    boolean json;

    public Integer call() throws InterruptedException
    {
        if (null != watch && !(watch >= 0.1 && watch <= 86_400))
        {
            throw new IllegalArgumentException("--watch " + watch + ": give seconds between 0.1 and 86400");
        }
        if (null != count && count < 1)
        {
            throw new IllegalArgumentException("--count " + count + ": give at least 1");
        }
        if (null != count && null == watch)
        {
            throw new IllegalArgumentException("--count needs --watch SECONDS");
        }
        final ClusterDirectory dir = cluster.dir();
        NicStatistics previous = null;
        final int readings = null == watch ? 1 : null == count ? Integer.MAX_VALUE : count;
        for (int i = 0; i < readings; i++)
        {
            if (i > 0)
            {
                TimeUnit.MILLISECONDS.sleep(Math.round(watch * 1000));
            }
            final NicStatistics now = NicStatistics.read(dir);
            if (json)
            {
                System.out.println(json(now, previous));
            }
            else
            {
                print(System.out, now, previous);
            }
            System.out.flush();
            previous = now;
        }
        return QnixCommand.OK;
    }

    /**
     * A table: one row per counter, one column per NIC (blocks of {@link #COLUMNS} NICs for big tori);
     * when watching, each cell also shows the counter's change per second since the last reading.
     */
    static void print(final PrintStream out, final NicStatistics now, final NicStatistics previous)
    {
        print(out, now, previous, null);
    }

    /**
     * @param only the counters to show, in this order, or null for every counter in the firmware's order.
     */
    static void print(final PrintStream out, final NicStatistics now, final NicStatistics previous,
        final List<String> only)
    {
        final List<NicStatistics.Node> nodes = now.nodes();
        out.printf("cluster '%s' at %s: %d NICs%s%n", now.cluster(),
            LocalTime.now().truncatedTo(ChronoUnit.SECONDS).format(CLOCK), nodes.size(),
            null == previous ? "" : ", (+N/s) is the change per second since the last reading");
        for (final NicStatistics.Node node : nodes)
        {
            if (!node.isAlive())
            {
                out.printf("node %s: firmware %s, last heartbeat %d ms ago: nothing posted to this NIC completes; " +
                    "its counters are as it left them%n", node.node(), node.firmwareState(), node.heartbeatAgeMs());
            }
        }
        final double seconds = null == previous ? 0 : (now.readAtNs() - previous.readAtNs()) / 1e9;
        final List<String> labels = new ArrayList<>(null == only ? nodes.get(0).counters().keySet() : only);
        for (int first = 0; first < nodes.size(); first += COLUMNS)
        {
            final int last = Math.min(nodes.size(), first + COLUMNS);
            final String[][] cells = new String[labels.size()][last - first];
            // At least the width of the usual figures, so that readings line up from one run to the next;
            // wider when a count outgrows it (a long stream moves tens of gigabytes), so cells never touch.
            int width = null == previous ? 14 : 26;
            for (int l = 0; l < labels.size(); l++)
            {
                for (int n = first; n < last; n++)
                {
                    final long value = nodes.get(n).counters().getOrDefault(labels.get(l), 0L);
                    String cell = String.format("%,d", value);
                    if (null != previous && seconds > 0)
                    {
                        final long delta = value - previous.nodes().get(n).counters().getOrDefault(labels.get(l), 0L);
                        cell += String.format(" (+%,.0f/s)", delta / seconds);
                    }
                    cells[l][n - first] = cell;
                    width = Math.max(width, cell.length() + 2);
                }
            }
            final StringBuilder header = new StringBuilder();
            for (int n = first; n < last; n++)
            {
                header.append(String.format("%" + width + "s", "node " + nodes.get(n).node()));
            }
            out.println(header.append("  counter"));
            for (int l = 0; l < labels.size(); l++)
            {
                final StringBuilder row = new StringBuilder();
                for (final String cell : cells[l])
                {
                    row.append(String.format("%" + width + "s", cell));
                }
                out.println(row.append("  ").append(labels.get(l)));
            }
        }
    }

    static String json(final NicStatistics now, final NicStatistics previous)
    {
        final double seconds = null == previous ? 0 : (now.readAtNs() - previous.readAtNs()) / 1e9;
        final StringBuilder out = new StringBuilder("{\"cluster\":").append(JsonText.quote(now.cluster()))
            .append(",\"nodes\":[");
        final List<NicStatistics.Node> nodes = now.nodes();
        for (int n = 0; n < nodes.size(); n++)
        {
            final NicStatistics.Node node = nodes.get(n);
            out.append(n > 0 ? "," : "").append("{\"node\":").append(JsonText.quote(node.node().toString()))
                .append(",\"firmware\":").append(JsonText.quote(node.firmwareState()))
                .append(",\"heartbeatAgeMs\":").append(node.heartbeatAgeMs())
                .append(",\"counters\":{");
            appendCounters(out, node.counters(), null, 0);
            out.append('}');
            if (null != previous && seconds > 0)
            {
                out.append(",\"ratesPerSecond\":{");
                appendCounters(out, node.counters(), previous.nodes().get(n).counters(), seconds);
                out.append('}');
            }
            out.append('}');
        }
        return out.append("]}").toString();
    }

    private static void appendCounters(final StringBuilder out, final Map<String, Long> counters,
        final Map<String, Long> before, final double seconds)
    {
        final Iterator<Map.Entry<String, Long>> i = counters.entrySet().iterator();
        while (i.hasNext())
        {
            final Map.Entry<String, Long> counter = i.next();
            out.append(JsonText.quote(counter.getKey())).append(':');
            if (null == before)
            {
                out.append(counter.getValue());
            }
            else
            {
                final long delta = counter.getValue() - before.getOrDefault(counter.getKey(), 0L);
                out.append(String.format(java.util.Locale.ROOT, "%.3f", delta / seconds));
            }
            out.append(i.hasNext() ? "," : "");
        }
    }
}
