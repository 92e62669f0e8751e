package org.qnix.firmware;

import java.util.Arrays;

import org.qnix.abi.Doorbell;
import org.qnix.abi.ProcessCommand;

/**
 * A Broadcast, Broadcast_Short, Multicast or Multicast_Short in progress (thesis 3.5.2): the data to
 * send, once, in NIC memory (a copy in managed memory, or the Context Region for the short forms), the
 * destinations, and the counter associated with that local buffer, decremented as each destination's
 * send completes. The Send Doorbell of its context rings when the counter reaches zero. One per Send
 * Context, made with the Process Table entry and reused.
 */
final class CastOperation
{
    final int processIndex;
    final int context;
    final PageList buffer;

    boolean active;
    /** Waiting for Scheduling Queue entries of the NIC's pool to start ({@link CastSender}). */
    boolean waitingToStart;
    /** ProcessCommand.BROADCAST, BROADCAST_SHORT, MULTICAST or MULTICAST_SHORT. */
    int command;
    boolean doorbellFlag;
    int tag;
    int length;
    int firstPacketLength;
    int packets;
    /** SDRAM address the data packets are read from. */
    long dataAddress;
    /** No room for the copy: every destination reads the sender's pages, as a Send does. */
    boolean fromHost;
    /** Bytes reserved in managed memory for the copy; 0 for the short forms and empty messages. */
    int copyLength;
    /** The counter of thesis 3.5.2, Broadcast step 2: destinations whose send has not completed. */
    int remaining;
    /** Done, or the first error a destination completed with. */
    int status;

    int destinations;
    int[] destinationNode = new int[8];
    int[] destinationPid = new int[8];
    int[] destinationIncarnation = new int[8];
    int[] destinationAi = new int[8];
    int[] destinationPi = new int[8];

    CastOperation previousWaiting;
    CastOperation nextWaiting;

    CastOperation(final int processIndex, final int context, final int descriptors)
    {
        this.processIndex = processIndex;
        this.context = context;
        this.buffer = new PageList(Math.max(1, descriptors));
    }

    /**
     * Broadcast step 2: the fields of the Send Context, and no destinations yet (the message itself is
     * read into {@link #buffer}).
     */
    void describe(final int command, final boolean doorbellFlag, final int tag)
    {
        this.command = command;
        this.doorbellFlag = doorbellFlag;
        this.tag = tag;
        status = Doorbell.DONE;
        copyLength = 0;
        waitingToStart = false;
        clearDestinations();
    }

    /**
     * The message's geometry; for the short forms the data is already in NIC memory, at
     * {@code shortDataAddress} in the Context Region (step 1 is not executed).
     */
    void message(final int length, final int firstPacketLength, final int packets, final long shortDataAddress)
    {
        this.length = length;
        this.firstPacketLength = firstPacketLength;
        this.packets = packets;
        this.dataAddress = isShort() ? shortDataAddress : 0;
    }

    /** The one copy of the data in managed memory (Broadcast step 1). */
    void copied(final long address)
    {
        dataAddress = address;
        copyLength = length;
    }

    /**
     * One destination's send ended (Broadcast step 3: the counter goes down); the first error is the
     * cast's status.
     *
     * @return true if that was the last one: the cast completes with {@link #status}.
     */
    boolean destinationDone(final int destinationStatus)
    {
        if (Doorbell.DONE != destinationStatus && Doorbell.DONE == status)
        {
            status = destinationStatus;
        }
        return --remaining == 0;
    }

    boolean isShort()
    {
        return ProcessCommand.BROADCAST_SHORT == command || ProcessCommand.MULTICAST_SHORT == command;
    }

    void clearDestinations()
    {
        destinations = 0;
    }

    void addDestination(final int node, final int nicPid, final int incarnation, final int ai, final int pi)
    {
        if (destinations == destinationNode.length)
        {
            final int grown = destinations * 2;
            destinationNode = Arrays.copyOf(destinationNode, grown);
            destinationPid = Arrays.copyOf(destinationPid, grown);
            destinationIncarnation = Arrays.copyOf(destinationIncarnation, grown);
            destinationAi = Arrays.copyOf(destinationAi, grown);
            destinationPi = Arrays.copyOf(destinationPi, grown);
        }
        destinationNode[destinations] = node;
        destinationPid[destinations] = nicPid;
        destinationIncarnation[destinations] = incarnation;
        destinationAi[destinations] = ai;
        destinationPi[destinations] = pi;
        destinations++;
    }

    public String toString()
    {
        return ProcessCommand.name(command) + "{process " + processIndex + " context " + context +
            " tag " + tag + " len " + length + " to " + destinations + " processes, " + remaining + " pending" +
            (waitingToStart ? ", waiting for scheduling entries" : "") + (fromHost ? ", from host memory" : "") + "}";
    }
}
