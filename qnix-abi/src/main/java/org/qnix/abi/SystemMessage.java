package org.qnix.abi;

/**
 * System message codes, carried in the Context Tag of a header whose PIDs are both zero (thesis
 * 3.5.1), and the payload layout of each. Payload offsets are relative to the end of the
 * {@link PacketHeader}. The sending NIC is the header's Source NIC Coordinates.
 *
 * <pre>
 *  New_Process        | Name AI | Name PI | NIC PID | OS pid | Group | Group size |
 *  New_Process_Ack    | Name AI | Name PI | NIC PID (on the destination NIC)      |
 *  New_Group          | Group | Group size | Member AI | Member PI | Member NIC PID |
 *  New_Group_Ack      | Group | NIC PID of the member being acknowledged          |
 *  Delete_Process     | Name AI | Name PI | NIC PID |
 * </pre>
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

    public static final int NAME_AI_OFFSET = 0;
    public static final int NAME_PI_OFFSET = NAME_AI_OFFSET + Integer.BYTES;
    public static final int NAME_NIC_PID_OFFSET = NAME_PI_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_OS_PID_OFFSET = NAME_NIC_PID_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_GROUP_OFFSET = NEW_PROCESS_OS_PID_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_GROUP_SIZE_OFFSET = NEW_PROCESS_GROUP_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_LENGTH = NEW_PROCESS_GROUP_SIZE_OFFSET + Integer.BYTES;
    public static final int NEW_PROCESS_ACK_LENGTH = NAME_NIC_PID_OFFSET + Integer.BYTES;
    public static final int DELETE_PROCESS_LENGTH = NAME_NIC_PID_OFFSET + Integer.BYTES;

    public static final int GROUP_OFFSET = 0;
    public static final int GROUP_SIZE_OFFSET = GROUP_OFFSET + Integer.BYTES;
    public static final int GROUP_MEMBER_AI_OFFSET = GROUP_SIZE_OFFSET + Integer.BYTES;
    public static final int GROUP_MEMBER_PI_OFFSET = GROUP_MEMBER_AI_OFFSET + Integer.BYTES;
    public static final int GROUP_MEMBER_NIC_PID_OFFSET = GROUP_MEMBER_PI_OFFSET + Integer.BYTES;
    public static final int NEW_GROUP_LENGTH = GROUP_MEMBER_NIC_PID_OFFSET + Integer.BYTES;
    public static final int GROUP_ACK_NIC_PID_OFFSET = GROUP_OFFSET + Integer.BYTES;
    public static final int NEW_GROUP_ACK_LENGTH = GROUP_ACK_NIC_PID_OFFSET + Integer.BYTES;

    /** Room for the largest system message payload. */
    public static final int MAX_PAYLOAD_LENGTH = 64;

    private SystemMessage()
    {
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
            default: return "SystemMessage(" + code + ")";
        }
    }
}
