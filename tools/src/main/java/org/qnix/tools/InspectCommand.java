package org.qnix.tools;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code qnix inspect}: a process's Virtual Network Interface or a NIC's tables, decoded read-only from
 * the cluster's shared memory ({@link ClusterInspector}).
 *
 * <pre>{@code
 * qnix inspect 101,0            # process (101,0): Command Queue, contexts in use, page tables
 * qnix inspect 1-0 --json       # node 1-0: Process, Name and Group Tables, staging, input FIFO
 * }</pre>
 */
@Command(name = "inspect", mixinStandardHelpOptions = true,
    description = {
        "Decode, read-only, a process's Virtual Network Interface or a NIC's tables.",
        "A process: its Command Queue with head, tail and pending entries, and each Send/Receive Context in use " +
            "with its doorbell and page table. A NIC: its Process, Name and Group Tables, staging use and input FIFO " +
            "fill. Values a process could not have meant are shown as \"impossible: ...\". Nothing is stopped or " +
            "written." })
public final class InspectCommand implements Callable<Integer>
{
    private static final Pattern NODE = Pattern.compile("[0-9]+-[0-9]+");
    /** (AI,PI), AI,PI or AI:PI: parentheses both or neither. */
    private static final Pattern PROCESS =
        Pattern.compile("(?:\\(\\s*(-?[0-9]+)\\s*[,:]\\s*(-?[0-9]+)\\s*\\)|(-?[0-9]+)\\s*[,:]\\s*(-?[0-9]+))");

    @Parameters(index = "0", paramLabel = "PROCESS|NODE",
        description = "A process name AI,PI (or (AI,PI)), or a node X-Y.")
    String target;

    @Mixin
    ClusterOption cluster;

    @Option(names = "--json", description = "One JSON object instead of indented text.")
    boolean json;

    public Integer call()
    {
        final ClusterDirectory dir = cluster.dir();
        final String text = target.trim();
        final Map<String, Object> tree;
        final Matcher process = PROCESS.matcher(text);
        if (NODE.matcher(text).matches())
        {
            tree = ClusterInspector.node(dir, NicCoordinates.parse(text));
        }
        else if (process.matches())
        {
            final int ai;
            final int pi;
            try
            {
                final int first = null != process.group(1) ? 1 : 3;
                ai = Integer.parseInt(process.group(first));
                pi = Integer.parseInt(process.group(first + 1));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("inspect " + target + ": AI and PI are at most " +
                    Integer.MAX_VALUE);
            }
            tree = ClusterInspector.process(dir, new ProcessName(ai, pi));
        }
        else
        {
            throw new IllegalArgumentException("inspect " + target + ": give a process as AI,PI (e.g. 101,0) or a " +
                "node as X-Y (e.g. 1-0)");
        }
        if (json)
        {
            System.out.println(JsonText.write(tree));
        }
        else
        {
            print(System.out, tree, "");
        }
        return QnixCommand.OK;
    }

    /** Indented text: a map's entries as "key: value", a list's items as "- item". */
    static void print(final PrintStream out, final Map<String, Object> tree, final String indent)
    {
        for (final Map.Entry<String, Object> entry : tree.entrySet())
        {
            final Object value = entry.getValue();
            if (value instanceof Map<?, ?> map)
            {
                out.println(indent + entry.getKey() + ":");
                print(out, cast(map), indent + "  ");
            }
            else if (value instanceof List<?> list)
            {
                out.println(indent + entry.getKey() + ":" + (list.isEmpty() ? " none" : ""));
                for (final Object item : list)
                {
                    if (item instanceof Map<?, ?> map)
                    {
                        final String inline = inline(cast(map));
                        if (null != inline)
                        {
                            out.println(indent + "  - " + inline);
                        }
                        else
                        {
                            out.println(indent + "  -");
                            print(out, cast(map), indent + "    ");
                        }
                    }
                    else
                    {
                        out.println(indent + "  - " + item);
                    }
                }
            }
            else
            {
                out.println(indent + entry.getKey() + ": " + value);
            }
        }
    }

    /** @return a map of plain values on one line, or null if it holds a list or map. */
    private static String inline(final Map<String, Object> map)
    {
        final StringBuilder line = new StringBuilder();
        for (final Map.Entry<String, Object> entry : map.entrySet())
        {
            if (entry.getValue() instanceof Map || entry.getValue() instanceof List)
            {
                return null;
            }
            line.append(line.length() > 0 ? ", " : "").append(entry.getKey()).append(' ').append(entry.getValue());
        }
        return line.toString();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(final Map<?, ?> map)
    {
        return (Map<String, Object>)map;
    }
}
