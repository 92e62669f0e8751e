package org.qnix.firmware;

/**
 * The NIC's working state for one VI table entry (issue 14), beside the entry the driver writes: the
 * two work queues, the descriptor each queue is working on, how far the current message has got in
 * each direction, and the RDMA reads in flight both ways (those this VI asked, those its peer asked of
 * it). Made the first time the entry is posted to and reused by every later VI of the entry;
 * {@link #reset()} forgets a previous connection's progress.
 */
final class ViaViState
{
    final int vi;
    /** The Process Table entry of the process that last posted to it. */
    int owner = -1;
    /**
     * The VI entry's Generation when this work began: a VI destroyed while Idle and made again for the
     * same process has the same owner and connection id (0), and only this tells the two apart.
     */
    int generation;
    /**
     * The connection the work belongs to (0 while Idle): a completion is written only while the table
     * entry still holds it, since the driver may destroy the VI and make another in the entry meanwhile.
     */
    int connectionId;
    final ViaWorkQueue sends = new ViaWorkQueue();
    final ViaWorkQueue receives = new ViaWorkQueue();
    /** The send being put on the wire (the descriptor at {@code sends.transmit}). */
    final ViaDescriptorCopy sending = new ViaDescriptorCopy();
    /** The receive the current message is scattered into (the descriptor at {@code receives.head()}). */
    final ViaDescriptorCopy receiving = new ViaDescriptorCopy();
    /** The RDMA read whose response is arriving (the oldest read in flight on {@code sends}). */
    final ViaDescriptorCopy reading = new ViaDescriptorCopy();
    /** The RDMA reads the peer asked of this VI, answered in order by {@link ViaReadResponder}. */
    final ViaReadRequests readRequests = new ViaReadRequests();

    /** In its process's list of VIs with packets to send (the second level of the round robin). */
    boolean scheduled;

    boolean sendStarted;
    int sendSequence;
    /** Bytes of the current send already on the wire. */
    int sent;
    /** RDMA reads of {@code sends} whose request went and whose response has not ended. */
    int readsInFlight;
    /** The descriptor at the transmit cursor has QFENCE and waits for {@link #readsInFlight} to reach 0. */
    boolean fenced;

    /** A response to the head of {@link #readRequests} is on the wire. */
    boolean responseStarted;
    int responseSequence;
    /** Bytes of the current response already on the wire. */
    int responded;

    /** A message is arriving into {@link #receiving}, into an RDMA write's region or into {@link #reading}. */
    boolean receiveStarted;
    /** A message is arriving with nowhere to go (Unreliable, no receive posted): its packets are dropped. */
    boolean dropping;
    int receiveSequence;
    int messageLength;
    int received;
    /** The message is an RDMA write into {@link #remoteHandle} at {@link #remoteAddress}. */
    boolean rdma;
    /** The message is the response to the RDMA read at {@link #readPosition} of {@code sends}. */
    boolean readResponse;
    long readPosition;
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

    /** A new connection, or the end of one: nothing of the messages in progress survives. */
    void reset()
    {
        sendStarted = false;
        sent = 0;
        readsInFlight = 0;
        fenced = false;
        responseStarted = false;
        responded = 0;
        readRequests.clear();
        receiveStarted = false;
        dropping = false;
        readResponse = false;
        received = 0;
        receiveError = 0;
        sends.transmit = sends.head();
    }

    /** @return true if the VI has a packet to put on the wire: a send to go on or start, or a read response. */
    boolean hasPacketToSend()
    {
        return sendStarted || responseStarted || !readRequests.isEmpty() || !fenced && sends.hasUntransmitted();
    }
}
