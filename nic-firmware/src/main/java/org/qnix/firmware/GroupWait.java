package org.qnix.firmware;

import java.util.Arrays;

/**
 * The internal structure a Join_Group or Barrier command creates (thesis 3.5.2, step 1 of each): the
 * operation waiting on a group, holding the Send Context whose doorbell it completes. There is one per
 * Send Context, made with the Process Table entry and reused.
 */
final class GroupWait
{
    static final int JOIN = 1;
    static final int BARRIER = 2;

    final int processIndex;
    final int context;

    boolean active;
    /** {@link #JOIN} or {@link #BARRIER}. */
    int kind;
    int group;
    /** Barrier: the sequence number of this barrier on the group (DESIGN.md 8, item 9). */
    int sequence;
    /** Join_Group: which NICs have acknowledged the complete group (New_Group_Ack), by node index. */
    private boolean[] acks;
    private int ackCount;

    /** Links in the list of barriers waiting on one group ({@link BarrierRounds}). */
    GroupWait previous;
    GroupWait next;

    GroupWait(final int processIndex, final int context)
    {
        this.processIndex = processIndex;
        this.context = context;
    }

    void startJoin(final int group, final int nodes)
    {
        if (null == acks || acks.length != nodes)
        {
            acks = new boolean[nodes];
        }
        Arrays.fill(acks, false);
        ackCount = 0;
        this.kind = JOIN;
        this.group = group;
        this.active = true;
    }

    void startBarrier(final int group, final int sequence)
    {
        this.kind = BARRIER;
        this.group = group;
        this.sequence = sequence;
        this.active = true;
    }

    /** A New_Group_Ack from NIC {@code node}; a repeated one counts once. @return true when every NIC has. */
    boolean ack(final int node)
    {
        if (node >= 0 && node < acks.length && !acks[node])
        {
            acks[node] = true;
            ackCount++;
        }
        return ackCount == acks.length;
    }

    public String toString()
    {
        return (JOIN == kind ? "Join_Group" : "Barrier") + "{process " + processIndex + " context " + context +
            " group " + group + (JOIN == kind ? " acks " + ackCount : " sequence " + sequence) +
            (active ? "" : " idle") + "}";
    }
}
