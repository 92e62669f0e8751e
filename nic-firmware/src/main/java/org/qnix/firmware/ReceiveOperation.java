package org.qnix.firmware;

/**
 * A receive posted by a process (the Receive Info and Match Info of thesis 3.3.3, Figure 6, for a
 * process-posted Receive Table entry). One per Receive Context, reused. {@link org.qnix.abi.ContextLayout#ANY}
 * in the name or tag matches anything.
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

    boolean matches(final int ai, final int pi, final int messageTag)
    {
        final boolean anyProcess = org.qnix.abi.ContextLayout.ANY == senderAi && org.qnix.abi.ContextLayout.ANY == senderPi;
        return (anyProcess || senderAi == ai && senderPi == pi) &&
            (org.qnix.abi.ContextLayout.ANY == tag || tag == messageTag);
    }

    public String toString()
    {
        return "Receive{process " + processIndex + " context " + context + " from (" + senderAi + "," + senderPi +
            ") tag " + tag + " capacity " + buffer.length + (null != transfer ? " delivering " + transfer : "") + "}";
    }
}
