package org.qnix.firmware;

import org.agrona.collections.Int2IntHashMap;

/**
 * The NIC's working state for one Process Table entry (thesis 3.3.3, Figure 4): where its Command
 * Queue is read, its second-level Packet Scheduling Queue of pending sends, and its Receive Table
 * (receives it posted that wait for a message, and messages staged for it that wait for a receive).
 * The Send and Receive operation objects, one per Context, are made the first time the entry is used
 * and reused by every later process in it.
 */
final class ProcessSlot
{
    final int index;
    final int nicPid;
    final SendOperation[] sends;
    final ReceiveOperation[] receives;
    /** Join_Group and Barrier operations, by the Send Context whose doorbell they complete. */
    final GroupWait[] groupWaits;
    /** Broadcast and Multicast operations, by Send Context. */
    final CastOperation[] casts;
    /** The sequence number of this process's next Barrier on each group (DESIGN.md 8, item 9). */
    final Int2IntHashMap barrierSequences = new Int2IntHashMap(0);

    boolean active;
    /**
     * How many processes the entry has held, QNIX or VIA, counting the one in it now: a request for an
     * earlier one is not for this one (SystemMessage, "Receiver incarnation").
     */
    int incarnation;
    /** A VIA process's entry (issue 14): no QNIX name, and only VIA posts are its commands. */
    boolean via;
    int aiName;
    int piName;
    long sendDoorbells;
    long receiveDoorbells;
    long commandQueueHeadAddress;
    int commandHead;
    int commandHeadPublished;
    int commandsSinceHeadUpdate;

    /** Second-level Scheduling Queue: a circular order kept as a list rotated head to tail. */
    private SendOperation sendHead;
    private SendOperation sendTail;
    private int sendCount;
    /** Receives posted and not yet matched, in posting order. */
    private ReceiveOperation postedHead;
    private ReceiveOperation postedTail;
    /** Staged messages, in order of their Permission_Request. */
    private Transfer stagedHead;
    private Transfer stagedTail;
    /** How many messages are staged, and their bytes: what the per-process staging quota bounds. */
    private int stagedCount;
    private long stagedBytes;

    /**
     * @return the slot of Process Table entry {@code index} if it is active and holds the process of
     * {@code incarnation}, else null: that process is gone, was never there, or was followed by another
     * in its entry (a message about it from another NIC may arrive after the entry was given again).
     */
    static ProcessSlot holding(final ProcessSlot[] slots, final int index, final int incarnation)
    {
        final ProcessSlot slot = index >= 0 && index < slots.length ? slots[index] : null;
        return null != slot && slot.active && slot.incarnation == incarnation ? slot : null;
    }

    /**
     * The Process Table entry after {@code index} in a round robin over {@code entries} of them. It wraps
     * by comparison: a division per Process Table entry, every duty cycle, was a third of an idle
     * cycle's cost with the default 64 entries.
     */
    static int nextInRoundRobin(final int index, final int entries)
    {
        return index + 1 == entries ? 0 : index + 1;
    }

    ProcessSlot(final int index, final int contexts, final int descriptors, final int firstSendSlot)
    {
        this.index = index;
        this.nicPid = index + 1;
        sends = new SendOperation[contexts];
        receives = new ReceiveOperation[contexts];
        groupWaits = new GroupWait[contexts];
        casts = new CastOperation[contexts];
        for (int c = 0; c < contexts; c++)
        {
            sends[c] = new SendOperation(index, c, firstSendSlot + c, descriptors);
            receives[c] = new ReceiveOperation(index, c, descriptors);
            groupWaits[c] = new GroupWait(index, c);
            casts[c] = new CastOperation(index, c, descriptors);
        }
    }

    /**
     * @return true if an operation still holds Send Context {@code c}; a new command on it is refused
     * and the doorbell stays with the earlier operation.
     */
    boolean sendContextBusy(final int c)
    {
        return sends[c].active || casts[c].active || groupWaits[c].active;
    }

    int peekBarrierSequence(final int group)
    {
        return barrierSequences.get(group);
    }

    /** @return the sequence number for this process's next Barrier on {@code group}, counting it. */
    int nextBarrierSequence(final int group)
    {
        final int sequence = barrierSequences.get(group);
        barrierSequences.put(group, sequence + 1);
        return sequence;
    }

    // Scheduling Queue ----------------------------------------------------------------------------

    boolean hasSends()
    {
        return null != sendHead;
    }

    int sendCount()
    {
        return sendCount;
    }

    SendOperation firstSend()
    {
        return sendHead;
    }

    void enqueue(final SendOperation op)
    {
        op.next = null;
        op.previous = sendTail;
        if (null == sendTail)
        {
            sendHead = op;
        }
        else
        {
            sendTail.next = op;
        }
        sendTail = op;
        sendCount++;
    }

    void dequeue(final SendOperation op)
    {
        if (null == op.previous)
        {
            sendHead = op.next;
        }
        else
        {
            op.previous.next = op.next;
        }
        if (null == op.next)
        {
            sendTail = op.previous;
        }
        else
        {
            op.next.previous = op.previous;
        }
        op.next = null;
        op.previous = null;
        sendCount--;
    }

    /** Second-level round robin: the head goes to the tail. */
    void rotate()
    {
        if (sendHead != sendTail)
        {
            final SendOperation op = sendHead;
            dequeue(op);
            enqueue(op);
        }
    }

    // Posted receives -----------------------------------------------------------------------------

    ReceiveOperation firstPosted()
    {
        return postedHead;
    }

    void post(final ReceiveOperation op)
    {
        op.next = null;
        op.previous = postedTail;
        if (null == postedTail)
        {
            postedHead = op;
        }
        else
        {
            postedTail.next = op;
        }
        postedTail = op;
    }

    void unpost(final ReceiveOperation op)
    {
        if (null == op.previous)
        {
            postedHead = op.next;
        }
        else
        {
            op.previous.next = op.next;
        }
        if (null == op.next)
        {
            postedTail = op.previous;
        }
        else
        {
            op.next.previous = op.previous;
        }
        op.next = null;
        op.previous = null;
    }

    // Staged messages -----------------------------------------------------------------------------

    Transfer firstStaged()
    {
        return stagedHead;
    }

    int stagedCount()
    {
        return stagedCount;
    }

    long stagedBytes()
    {
        return stagedBytes;
    }

    void stage(final Transfer transfer)
    {
        stagedCount++;
        stagedBytes += transfer.quotaBytes;
        transfer.next = null;
        transfer.previous = stagedTail;
        if (null == stagedTail)
        {
            stagedHead = transfer;
        }
        else
        {
            stagedTail.next = transfer;
        }
        stagedTail = transfer;
    }

    void unstage(final Transfer transfer)
    {
        stagedCount--;
        stagedBytes -= transfer.quotaBytes;
        if (null == transfer.previous)
        {
            stagedHead = transfer.next;
        }
        else
        {
            transfer.previous.next = transfer.next;
        }
        if (null == transfer.next)
        {
            stagedTail = transfer.previous;
        }
        else
        {
            transfer.next.previous = transfer.previous;
        }
        transfer.next = null;
        transfer.previous = null;
    }

    public String toString()
    {
        return "Process{index " + index + (active ? " (" + aiName + "," + piName + ")" : " free") + ", " + sendCount +
            " sends scheduled}";
    }
}
