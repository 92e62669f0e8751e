package org.qnix.tools;

import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.Callable;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ProcessTableLayout;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code qnix ps}: every process registered with a cluster's NICs, one line each, read from the NICs'
 * Process Tables, the processes' doorbells and the Protection Tables.
 *
 * <pre>{@code
 * qnix ps                 # a table
 * qnix ps --json          # {"cluster":"default","processes":[{"name":"(101,0)",...}]}
 * }</pre>
 */
@Command(name = "ps", mixinStandardHelpOptions = true,
    description = {
        "List every process registered with a cluster's NICs: name (AI,PI), group, node, NIC PID, OS pid,",
        "registration state, Send/Receive Contexts in use (doorbell not Free) and host pages held",
        "(of which locked), from the NICs' Process Tables and Protection Tables." })
public final class PsCommand implements Callable<Integer>
{
    @Option(names = {"--cluster", "--name"}, paramLabel = "C",
        description = "Cluster name (default: $QNIX_CLUSTER or 'default').")
    String cluster;

    @Option(names = "--json", description = "One JSON object: {\"cluster\":..., \"processes\":[...]}.")
    boolean json;

    public Integer call()
    {
        final ClusterDirectory dir = ClusterDirectory.of(QnixCommand.clusterName(cluster));
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
        out.printf("%-12s %-9s %-5s %-7s %-8s %-12s %-13s %s%n", "NAME", "GROUP", "NODE", "NIC PID", "OS PID", "STATE",
            "CONTEXTS S/R", "PAGES HELD (LOCKED)");
        for (final ClusterStatus.Process p : processes)
        {
            out.printf("%-12s %-9s %-5s %-7d %-8d %-12s %-13s %d (%d)%n", p.name(), p.group() + "/" + p.groupSize(),
                p.node(), p.nicPid(), p.osPid(), ProcessTableLayout.stateName(p.state()),
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
        final StringBuilder out = new StringBuilder("{\"cluster\":").append(JsonText.quote(cluster))
            .append(",\"processes\":[");
        for (int i = 0; i < processes.size(); i++)
        {
            final ClusterStatus.Process p = processes.get(i);
            out.append(i > 0 ? "," : "").append('{')
                .append("\"name\":").append(JsonText.quote(p.name().toString()))
                .append(",\"ai\":").append(p.name().ai())
                .append(",\"pi\":").append(p.name().pi())
                .append(",\"group\":").append(p.group())
                .append(",\"groupSize\":").append(p.groupSize())
                .append(",\"node\":").append(JsonText.quote(p.node().toString()))
                .append(",\"nicPid\":").append(p.nicPid())
                .append(",\"osPid\":").append(p.osPid())
                .append(",\"state\":").append(JsonText.quote(ProcessTableLayout.stateName(p.state())))
                .append(",\"sendContextsInUse\":").append(p.sendContextsInUse())
                .append(",\"receiveContextsInUse\":").append(p.receiveContextsInUse())
                .append(",\"pagesHeld\":").append(p.pagesHeld())
                .append(",\"pagesLocked\":").append(p.pagesLocked())
                .append('}');
        }
        return out.append("]}").toString();
    }
}
