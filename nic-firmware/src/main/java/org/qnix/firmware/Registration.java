package org.qnix.firmware;

import org.qnix.abi.ProcessName;

/**
 * The internal structure a New_Process driver command creates (thesis 3.5.3, step 1): which NICs
 * have acknowledged the process (New_Process_Ack) and which have seen its whole group (New_Group_Ack).
 * Sets of node indexes rather than counters, so a repeated acknowledgement counts once. The
 * registration completes when both sets hold every NIC of the cluster: the NIC then sets the Process
 * Table entry's Registration State to registered. The Driver Command Queue position of the command is
 * released when the command is taken, not then (issue 17, item 5): registrations waiting for their
 * group would otherwise hold the whole queue.
 */
final class Registration
{
    final int index;
    final ProcessName name;
    final int osPid;
    final int group;
    final int groupSize;
    private final boolean[] processAcks;
    private final boolean[] groupAcks;
    private int processAckCount;
    private int groupAckCount;

    Registration(final int index, final ProcessName name, final int osPid,
        final int group, final int groupSize, final int nodes)
    {
        this.index = index;
        this.name = name;
        this.osPid = osPid;
        this.group = group;
        this.groupSize = groupSize;
        processAcks = new boolean[nodes];
        groupAcks = new boolean[nodes];
    }

    void processAck(final int node)
    {
        if (!processAcks[node])
        {
            processAcks[node] = true;
            processAckCount++;
        }
    }

    void groupAck(final int node)
    {
        if (!groupAcks[node])
        {
            groupAcks[node] = true;
            groupAckCount++;
        }
    }

    boolean isComplete()
    {
        return processAckCount == processAcks.length && groupAckCount == groupAcks.length;
    }

    public String toString()
    {
        return "Registration{" + name + " index=" + index + " group=" + group + "/" + groupSize +
            " processAcks=" + processAckCount + " groupAcks=" + groupAckCount + "}";
    }
}
