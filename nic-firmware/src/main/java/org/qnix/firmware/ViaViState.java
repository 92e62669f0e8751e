package org.qnix.firmware;

/**
 * The NIC's working state for one VI table entry (issue 14), beside the entry the driver writes: the
 * two work queues, the descriptor each queue is working on, and how far the current message has got
 * in each direction. Made the first time the entry is posted to and reused by every later VI of the
 * entry; {@link #reset()} forgets a previous connection's progress.
 */
final class ViaViState
{
    final int vi;
    /** The Process Table entry of the process that last posted to it. */
    int owner = -1;
    final ViaWorkQueue sends = new ViaWorkQueue();
    final ViaWorkQueue receives = new ViaWorkQueue();
    /** The send being put on the wire (the descriptor at {@code sends.transmit}). */
    final ViaDescriptorCopy sending = new ViaDescriptorCopy();
    /** The receive the current message is scattered into (the descriptor at {@code receives.head()}). */
    final ViaDescriptorCopy receiving = new ViaDescriptorCopy();

    /** In its process's list of VIs with sends to transmit (the second level of the round robin). */
    boolean scheduled;

    boolean sendStarted;
    int sendSequence;
    /** Bytes of the current send already on the wire. */
    int sent;

    /** A message is arriving into {@link #receiving}. */
    boolean receiveStarted;
    /** A message is arriving with nowhere to go (Unreliable, no receive posted): its packets are dropped. */
    boolean dropping;
    int receiveSequence;
    int messageLength;
    int received;
    /** The message is an RDMA write into {@link #remoteHandle} at {@link #remoteAddress}. */
    boolean rdma;
    /** The message consumes the head receive descriptor (a Send, or an RDMA write with immediate data). */
    boolean usesReceive;
    int remoteHandle;
    long remoteAddress;
    /** The error bits the receive completes with (LENGTH for a short receive, PROTECTION for a bad page). */
    int receiveError;

    ViaViState(final int vi)
    {
        this.vi = vi;
    }

    /** A new connection, or the end of one: nothing of the message in progress survives. */
    void reset()
    {
        sendStarted = false;
        sent = 0;
        receiveStarted = false;
        dropping = false;
        received = 0;
        receiveError = 0;
        sends.transmit = sends.head();
    }
}
