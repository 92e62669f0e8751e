package org.qnix.firmware;

import org.qnix.abi.ContextLayout;
import org.qnix.abi.Doorbell;

/**
 * A receive posted by a process (the Receive Info and Match Info of thesis 3.3.3, Figure 6, for a
 * process-posted Receive Table entry). One per Receive Context, reused. {@link ContextLayout#ANY} in
 * the name or tag matches anything.
 */
final class ReceiveOperation
{
    final int processIndex;
    final int context;
    final PageList buffer;
    final DescriptorMap map;

    boolean active;
    boolean doorbellFlag;
    int senderAi;
    int senderPi;
    int tag;
    /** The message being delivered into this receive, once matched. */
    Transfer transfer;

    ReceiveOperation previous;
    ReceiveOperation next;

    ReceiveOperation(final int processIndex, final int context, final int descriptors)
    {
        this.processIndex = processIndex;
        this.context = context;
        this.buffer = new PageList(Math.max(1, descriptors));
        this.map = new DescriptorMap(Math.max(1, descriptors));
    }

    /** Receive step 2.1: the Match Info and Doorbell Flag from the Receive Context. */
    void describe(final boolean doorbellFlag, final int senderAi, final int senderPi, final int tag)
    {
        this.doorbellFlag = doorbellFlag;
        this.senderAi = senderAi;
        this.senderPi = senderPi;
        this.tag = tag;
        transfer = null;
    }

    /** A name is both ANY or neither. */
    boolean hasValidMatch()
    {
        return (ContextLayout.ANY == senderAi) == (ContextLayout.ANY == senderPi);
    }

    boolean matches(final int ai, final int pi, final int messageTag)
    {
        final boolean anyProcess = ContextLayout.ANY == senderAi && ContextLayout.ANY == senderPi;
        return (anyProcess || senderAi == ai && senderPi == pi) && (ContextLayout.ANY == tag || tag == messageTag);
    }

    /**
     * The message {@code t} goes into this receive: its Descriptor Map says where each packet lands in
     * the buffer (thesis 3.3.3, the Descriptor Map of a matched receive).
     */
    void attach(final Transfer t, final int pageSize)
    {
        map.build(buffer, t.length, t.firstPacketLength, t.packets, pageSize);
        transfer = t;
        t.attach(this);
    }

    /**
     * @return the doorbell a receive ending with {@code status} rings: a refused page makes a delivered
     * message Protection, one longer than the buffer Truncated (its prefix delivered).
     */
    int completionStatus(final int status)
    {
        final Transfer t = transfer;
        if (null != t && Doorbell.DONE == status)
        {
            if (t.refused)
            {
                return Doorbell.PROTECTION;
            }
            if (t.length > buffer.length)
            {
                return Doorbell.TRUNCATED;
            }
        }
        return status;
    }

    public String toString()
    {
        return "Receive{process " + processIndex + " context " + context + " from (" + senderAi + "," + senderPi +
            ") tag " + tag + " capacity " + buffer.length + (null != transfer ? " delivering " + transfer : "") + "}";
    }
}
