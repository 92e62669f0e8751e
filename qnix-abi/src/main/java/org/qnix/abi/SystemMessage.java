package org.qnix.abi;

/**
 * System message codes, carried in the Context Tag of a header whose PIDs are both zero (thesis
 * 3.5.1), and the payload layout of each. Payload offsets are relative to the end of the
 * {@link PacketHeader}. The sending NIC is the header's Source NIC Coordinates.
 *
 * <pre>
 *  New_Process        | Name AI | Name PI | NIC PID | OS pid | Group | Group size | Incarnation |
 *  New_Process_Ack    | Name AI | Name PI | NIC PID (on the destination NIC) | Incarnation |
 *  New_Group          | Group | Group size | Member AI | Member PI | Member NIC PID | Member incarnation |
 *  New_Group_Ack      | Group | NIC PID of the member being acknowledged | Its incarnation |
 *  Barrier            | Group | Group size | Sequence | Member AI | Member PI | Member NIC PID |
 *  Delete_Process     | Name AI | Name PI | NIC PID |
 *  Permission_Request | Receiver PID | Sender PID | Context Tag | Message length | First packet length |
 *                     | Packets | Operation id (64 bits) | Sender AI | Sender PI | Receiver incarnation |
 *                     | Retry interval (ms) |
 *  Permission_Reply   | Receiver PID | Sender PID | Operation id (64 bits) | Status | Transfer handle |
 *  Transfer_Abort     | Receiver PID | Sender PID | Operation id (64 bits) | Status | Transfer handle |
 *  Eager_Short        | the Permission_Request's fields | Data (Message length bytes) |
 *  Eager_Short_Reply  | Receiver PID | Sender PID | Operation id (64 bits) | Status | Transfer handle |
 * </pre>
 *
 * <p>Eager_Short (thesis 3.7, "Different Short Message Flow Control"; not in 3.5.1) carries a
 * Send_Short, or one destination of a Broadcast_Short or Multicast_Short, with its data: the
 * Permission_Request's fields, then the message, at most the short threshold (one packet, at most a
 * page). It is the one system message whose length varies: {@link #eagerShortLength(int)}.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |          Packet header (16 bytes, PIDs 0, Context Tag 10)     |
 *  +---------------------------------------------------------------+  payload offset 0
 *  |                      Receiver NIC PID                         |
 *  +---------------------------------------------------------------+  4
 *  |                       Sender NIC PID                          |
 *  +---------------------------------------------------------------+  8
 *  |                        Context Tag                            |
 *  +---------------------------------------------------------------+  12
 *  |                      Message length (L)                       |
 *  +---------------------------------------------------------------+  16
 *  |              First packet length (L, or 0 if L = 0)           |
 *  +---------------------------------------------------------------+  20
 *  |                    Packets (1, or 0 if L = 0)                 |
 *  +---------------------------------------------------------------+  24
 *  |                   Operation id (64 bits)                      |
 *  +---------------------------------------------------------------+  32
 *  |                         Sender AI                             |
 *  +---------------------------------------------------------------+  36
 *  |                         Sender PI                             |
 *  +---------------------------------------------------------------+  40
 *  |                    Receiver incarnation                       |
 *  +---------------------------------------------------------------+  44
 *  |                  Retry interval (ms; unused here)             |
 *  +---------------------------------------------------------------+  48 = EAGER_SHORT_DATA_OFFSET
 *  |                      Data: L bytes ...                        |
 *  +---------------------------------------------------------------+  48 + L = eagerShortLength(L)
 * </pre>
 *
 * <p>Eager_Short_Reply has the Permission_Reply's layout and answers every Eager_Short: status
 * {@link Doorbell#DONE} when the receiving NIC delivered the message into a posted receive or staged it
 * (the sender's Send Doorbell rings then), an error doorbell code when the receiver is gone, or
 * {@link #STATUS_ASK_PERMISSION} when it could do neither: the sending NIC, which still holds the data
 * in the Context Region, sends a Permission_Request for the same operation and carries on as in 3.5.1.
 * Its transfer handle is unused (0).
 *
 * <p>Permission_Request carries what thesis 3.5.1 lists plus the per-sender operation id that makes
 * it idempotent (DESIGN.md 8, item 2) and the sender's name, which the receiver writes into the
 * Receive Context at completion (item 3). Permission_Reply's status is {@link Doorbell#DONE} for a
 * granted transfer or an error doorbell code (the receiver is gone); its transfer handle is what the
 * data packets of the message carry in their Context Tag field, so that concurrent messages with the
 * same sender and tag are told apart.
 *
 * <p>Permission_Request also carries its retry interval, which the thesis does not have: the sending
 * NIC asks again within that many milliseconds while it has no answer (thesis 3.2, Reliability), and
 * lengthens the interval the longer it waits, so that a Send blocked for long on a receiver that posts
 * nothing does not keep both NICs busy. The receiving NIC keeps a request it could not answer for room
 * only as long as its sender may still ask again ({@code DeferredRequests} in the firmware).
 *
 * <p>A NIC PID names a Process Table entry, which the driver hands to another process once the NIC
 * has taken the Delete_Process of the last one; other NICs may still be on their way to reading that
 * Delete_Process. So New_Process carries the entry's incarnation (how many processes it has held on
 * this NIC, counting this one) and every Permission_Request and Eager_Short the incarnation of the
 * receiver the sending NIC's Name Table named: a receiving NIC whose entry now holds a later
 * incarnation answers Peer Gone, as the thesis' Destination PID (an OS pid, 3.5.1 step 2.4) would have
 * told the new process from the old (DESIGN.md 8, item 7 made it the entry's index).
 *
 * <p>Transfer_Abort is not in the thesis: the sending NIC sends it when it ends a granted message
 * part-way because a page of the sender's buffer is no longer locked by the sender at the moment of
 * its DMA read (DESIGN.md 8, item 10). It has the Permission_Reply's layout; its status is the error
 * the sender's Send completed with. The receiving NIC ends the transfer: a receive attached to it
 * completes {@link Doorbell#SEND_ABORTED}, a staged one is dropped. The wire keeps one NIC's packets
 * in order, so it arrives after every data packet that was sent before it.
 *
 * <p>Barrier carries what thesis 3.5.1 lists plus the sequence number of the barrier on that group
 * (DESIGN.md 8, item 9): the k-th Barrier a member enters on a group has sequence k, so an arrival
 * for the next barrier is never counted for the current one.
 *
 * <p>The offsets here are what the flyweights read and write with: {@link PermissionRequestFlyweight},
 * {@link PermissionReplyFlyweight} (also Transfer_Abort), {@link NewProcessFlyweight} (also
 * New_Process_Ack and Delete_Process), {@link NewGroupFlyweight} (also New_Group_Ack) and
 * {@link BarrierFlyweight}. Code outside this package encodes and decodes system messages only through
 * them.
 */
public final class SystemMessage
{
    public static final int PERMISSION_REQUEST = 1;
    public static final int PERMISSION_REPLY = 2;
    public static final int NEW_PROCESS = 3;
    public static final int NEW_PROCESS_ACK = 4;
    public static final int NEW_GROUP = 5;
    public static final int NEW_GROUP_ACK = 6;
    public static final int BARRIER = 7;
    public static final int DELETE_PROCESS = 8;
    public static final int TRANSFER_ABORT = 9;
    public static final int EAGER_SHORT = 10;
    public static final int EAGER_SHORT_REPLY = 11;
    /** The highest system message code. */
    public static final int LAST_CODE = EAGER_SHORT_REPLY;

    public static final int NAME_AI_OFFSET = 0;
    public static final int NAME_PI_OFFSET = NAME_AI_OFFSET + Integer.BYTES;
    public static final int NAME_NIC_PID_OFFSET = NAME_PI_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_OS_PID_OFFSET = NAME_NIC_PID_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_GROUP_OFFSET = NEW_PROCESS_OS_PID_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_GROUP_SIZE_OFFSET = NEW_PROCESS_GROUP_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_INCARNATION_OFFSET = NEW_PROCESS_GROUP_SIZE_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_LENGTH = NEW_PROCESS_INCARNATION_OFFSET + Integer.BYTES;
    /**
     * New_Process_Ack's echo of the New_Process's incarnation: the registering NIC counts an
     * acknowledgement only for the process its entry holds now, not for the one before it (a process of
     * the same name, say, whose acknowledgement was late).
     */
    public static final int NEW_PROCESS_ACK_INCARNATION_OFFSET = NAME_NIC_PID_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_ACK_LENGTH = NEW_PROCESS_ACK_INCARNATION_OFFSET + Integer.BYTES;
    public static final int DELETE_PROCESS_LENGTH = NAME_NIC_PID_OFFSET + Integer.BYTES;

    public static final int GROUP_OFFSET = 0;
    public static final int GROUP_SIZE_OFFSET = GROUP_OFFSET + Integer.BYTES;
    public static final int GROUP_MEMBER_AI_OFFSET = GROUP_SIZE_OFFSET + Integer.BYTES;
    public static final int GROUP_MEMBER_PI_OFFSET = GROUP_MEMBER_AI_OFFSET + Integer.BYTES;
    public static final int GROUP_MEMBER_NIC_PID_OFFSET = GROUP_MEMBER_PI_OFFSET + Integer.BYTES;
    /** The member's incarnation on its NIC, as its New_Process carried it; New_Group_Ack echoes it. */
    public static final int GROUP_MEMBER_INCARNATION_OFFSET = GROUP_MEMBER_NIC_PID_OFFSET + Integer.BYTES;
    public static final int NEW_GROUP_LENGTH = GROUP_MEMBER_INCARNATION_OFFSET + Integer.BYTES;
    public static final int GROUP_ACK_NIC_PID_OFFSET = GROUP_OFFSET + Integer.BYTES;
    public static final int GROUP_ACK_INCARNATION_OFFSET = GROUP_ACK_NIC_PID_OFFSET + Integer.BYTES;
    public static final int NEW_GROUP_ACK_LENGTH = GROUP_ACK_INCARNATION_OFFSET + Integer.BYTES;
    public static final int BARRIER_SEQUENCE_OFFSET = GROUP_SIZE_OFFSET + Integer.BYTES;
    public static final int BARRIER_MEMBER_AI_OFFSET = BARRIER_SEQUENCE_OFFSET + Integer.BYTES;
    public static final int BARRIER_MEMBER_PI_OFFSET = BARRIER_MEMBER_AI_OFFSET + Integer.BYTES;
    public static final int BARRIER_MEMBER_NIC_PID_OFFSET = BARRIER_MEMBER_PI_OFFSET + Integer.BYTES;
    public static final int BARRIER_LENGTH = BARRIER_MEMBER_NIC_PID_OFFSET + Integer.BYTES;

    public static final int REQUEST_RECEIVER_PID_OFFSET = 0;
    public static final int REQUEST_SENDER_PID_OFFSET = REQUEST_RECEIVER_PID_OFFSET + Integer.BYTES;
    public static final int REQUEST_TAG_OFFSET = REQUEST_SENDER_PID_OFFSET + Integer.BYTES;
    public static final int REQUEST_MESSAGE_LENGTH_OFFSET = REQUEST_TAG_OFFSET + Integer.BYTES;
    public static final int REQUEST_FIRST_PACKET_LENGTH_OFFSET = REQUEST_MESSAGE_LENGTH_OFFSET + Integer.BYTES;
    public static final int REQUEST_PACKETS_OFFSET = REQUEST_FIRST_PACKET_LENGTH_OFFSET + Integer.BYTES;
    public static final int REQUEST_OPERATION_OFFSET = REQUEST_PACKETS_OFFSET + Integer.BYTES;
    public static final int REQUEST_SENDER_AI_OFFSET = REQUEST_OPERATION_OFFSET + Long.BYTES;
    public static final int REQUEST_SENDER_PI_OFFSET = REQUEST_SENDER_AI_OFFSET + Integer.BYTES;
    public static final int REQUEST_RECEIVER_INCARNATION_OFFSET = REQUEST_SENDER_PI_OFFSET + Integer.BYTES;
    public static final int REQUEST_RETRY_MS_OFFSET = REQUEST_RECEIVER_INCARNATION_OFFSET + Integer.BYTES;
    public static final int PERMISSION_REQUEST_LENGTH = REQUEST_RETRY_MS_OFFSET + Integer.BYTES;

    public static final int REPLY_RECEIVER_PID_OFFSET = 0;
    public static final int REPLY_SENDER_PID_OFFSET = REPLY_RECEIVER_PID_OFFSET + Integer.BYTES;
    public static final int REPLY_OPERATION_OFFSET = REPLY_SENDER_PID_OFFSET + Integer.BYTES;
    public static final int REPLY_STATUS_OFFSET = REPLY_OPERATION_OFFSET + Long.BYTES;
    public static final int REPLY_HANDLE_OFFSET = REPLY_STATUS_OFFSET + Integer.BYTES;
    public static final int PERMISSION_REPLY_LENGTH = REPLY_HANDLE_OFFSET + Integer.BYTES;
    /** Transfer_Abort has the layout of Permission_Reply. */
    public static final int TRANSFER_ABORT_LENGTH = PERMISSION_REPLY_LENGTH;

    /** Eager_Short: the Permission_Request's fields, then the data. */
    public static final int EAGER_SHORT_DATA_OFFSET = PERMISSION_REQUEST_LENGTH;
    /** Eager_Short_Reply has the layout of Permission_Reply. */
    public static final int EAGER_SHORT_REPLY_LENGTH = PERMISSION_REPLY_LENGTH;
    /**
     * Eager_Short_Reply's status when the receiving NIC could neither deliver nor stage the message: ask
     * for permission. Not a {@link Doorbell} code (those are 0-2 and 16 up).
     */
    public static final int STATUS_ASK_PERMISSION = Doorbell.DONE + 1;

    /** Room for the largest system message payload but Eager_Short's, whose length varies. */
    public static final int MAX_PAYLOAD_LENGTH = 64;

    private SystemMessage()
    {
    }

    /** @return the payload length of an Eager_Short carrying {@code dataLength} bytes. */
    public static int eagerShortLength(final int dataLength)
    {
        return EAGER_SHORT_DATA_OFFSET + dataLength;
    }

    public static String name(final int code)
    {
        switch (code)
        {
            case PERMISSION_REQUEST: return "Permission_Request";
            case PERMISSION_REPLY: return "Permission_Reply";
            case NEW_PROCESS: return "New_Process";
            case NEW_PROCESS_ACK: return "New_Process_Ack";
            case NEW_GROUP: return "New_Group";
            case NEW_GROUP_ACK: return "New_Group_Ack";
            case BARRIER: return "Barrier";
            case DELETE_PROCESS: return "Delete_Process";
            case TRANSFER_ABORT: return "Transfer_Abort";
            case EAGER_SHORT: return "Eager_Short";
            case EAGER_SHORT_REPLY: return "Eager_Short_Reply";
            default: return "SystemMessage(" + code + ")";
        }
    }
}
