package org.qnix.tools;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.concurrent.Callable;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicProcessor;
import org.qnix.abi.ProcessTableLayout;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code qnix ps}: every process registered with a cluster's NICs, one line each, read from the NICs'
 * Process Tables, the processes' doorbells and the Protection Tables, and the CPUs each may run on
 * (from {@code /proc}: where its driver placed it, on or off the NICs' CPU).
 *
 * <pre>{@code
 * qnix ps                 # a table
 * qnix ps --json          # {"cluster":"default","processes":[{"name":"(101,0)",...}]}
 * }</pre>
 */
@Command(name = "ps", mixinStandardHelpOptions = true,
    description = {
        "List every process registered with a cluster's NICs.",
        "For each: name (AI,PI), group, node, NIC PID, OS pid, registration state, Send/Receive Contexts in use " +
            "(doorbell not Free) and host pages held (of which locked), from the NICs' Process Tables and Protection " +
            "Tables; and the CPUs it may run on (on or off the NICs' CPU, as its driver placed it), from /proc." })
public final class PsCommand implements Callable<Integer>
{
    @Mixin
    ClusterOption cluster;

    @Option(names = "--json", description = "One JSON object: {\"cluster\":..., \"processes\":[...]}.")
    boolean json;

    public Integer call()
    {
        final ClusterDirectory dir = cluster.dir();
        final List<ClusterStatus.Process> processes = ClusterStatus.read(dir).processes();
        if (json)
        {
            System.out.println(json(dir.name(), processes));
        }
        else
        {
            print(System.out, dir.name(), processes);
        }
        return QnixCommand.OK;
    }

    static void print(final PrintStream out, final String cluster, final List<ClusterStatus.Process> processes)
    {
        if (processes.isEmpty())
        {
            out.println("cluster '" + cluster + "': no processes registered");
            return;
        }
        out.printf("%-12s %-9s %-5s %-7s %-8s %-5s %-12s %-13s %s%n", "NAME", "GROUP", "NODE", "NIC PID", "OS PID",
            "CPUS", "STATE", "CONTEXTS S/R", "PAGES HELD (LOCKED)");
        for (final ClusterStatus.Process p : processes)
        {
            final SortedSet<Integer> cpus = NicProcessor.allowedCpus(p.osPid());
            out.printf("%-12s %-9s %-5s %-7d %-8d %-5s %-12s %-13s %d (%d)%n", p.name(), p.group() + "/" + p.groupSize(),
                p.node(), p.nicPid(), p.osPid(), cpus.isEmpty() ? "?" : NicProcessor.cpuListText(cpus),
                ProcessTableLayout.stateName(p.state()),
                contexts(p.sendContextsInUse()) + "/" + contexts(p.receiveContextsInUse()), p.pagesHeld(),
                p.pagesLocked());
        }
    }

    private static String contexts(final int inUse)
    {
        return inUse < 0 ? "?" : Integer.toString(inUse);
    }

    static String json(final String cluster, final List<ClusterStatus.Process> processes)
    {
        final List<Object> list = new ArrayList<>();
        for (final ClusterStatus.Process p : processes)
        {
            final Map<String, Object> process = new LinkedHashMap<>();
            process.put("name", p.name().toString());
            process.put("ai", p.name().ai());
            process.put("pi", p.name().pi());
            process.put("group", p.group());
            process.put("groupSize", p.groupSize());
            process.put("node", p.node().toString());
            process.put("nicPid", p.nicPid());
            process.put("osPid", p.osPid());
            process.put("cpus", new ArrayList<Object>(NicProcessor.allowedCpus(p.osPid())));
            process.put("state", ProcessTableLayout.stateName(p.state()));
            process.put("sendContextsInUse", p.sendContextsInUse());
            process.put("receiveContextsInUse", p.receiveContextsInUse());
            process.put("pagesHeld", p.pagesHeld());
            process.put("pagesLocked", p.pagesLocked());
            list.add(process);
        }
        final Map<String, Object> tree = new LinkedHashMap<>();
        tree.put("cluster", cluster);
        tree.put("processes", list);
        return JsonText.write(tree);
    }
}
