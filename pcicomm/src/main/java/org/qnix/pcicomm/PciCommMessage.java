package org.qnix.pcicomm;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * A control message between the two ends of a connection: the seed's inter-node messages (000, 5.2.3)
 * as VIA sends on the connection's VI. "Export kiobufs" is {@link #EXPORT}: the receiver's preposted
 * buffers as (VIA address, memory handle, length), which the peer fills by RDMA write. "Send outgoing
 * data" needs no message here: each RDMA write carries the bytes it filled as immediate data, and its
 * completion in the receiver's receive queue hands the buffer back. "Disconnect" is
 * {@link #DISCONNECT}, sent by each end once; the seed's acknowledgement is the other end's own
 * DISCONNECT. {@link #CREDIT} only returns receive slots (see {@link CreditWindow}). "Connect" is the
 * VIPL's connection request itself. Little-endian, like every structure of the project; the writer is
 * this library on one node, the reader the same library on the other, after the NIC completed the
 * receive (the descriptor's status is the release that publishes these bytes).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+ 0
 *  |  Type (EXPORT 1, CREDIT 2, DISCONNECT 3)                      |
 *  +---------------------------------------------------------------+ 4
 *  |  Credits: receive slots reposted since the previous message   |
 *  +---------------------------------------------------------------+ 8
 *  |  Entry count (EXPORT; 0 otherwise)                            |
 *  +---------------------------------------------------------------+ 12
 *  |  Reserved (0)                                                 |
 *  +---------------------------------------------------------------+ 16
 *  Entry i (16 bytes each, EXPORT only), in preposting order:
 *  |  VIA address of the buffer's first byte (64 bits)             |
 *  |  Memory handle of the region it lies in                       |
 *  |  Length: the bytes the peer may write there                   |
 *  +---------------------------------------------------------------+ 16 + 16 i
 * </pre>
 *
 * <pre>{@code
 * PciCommMessage m = new PciCommMessage().wrap(buffer, offset);
 * m.type(PciCommMessage.EXPORT).credits(3).entryCount(1).entry(0, address, handle, 4096);
 * int bytes = m.length();      // what the send descriptor carries
 * }</pre>
 */
public final class PciCommMessage
{
    public static final int EXPORT = 1;
    public static final int CREDIT = 2;
    public static final int DISCONNECT = 3;

    public static final int TYPE_OFFSET = 0;
    public static final int CREDITS_OFFSET = TYPE_OFFSET + Integer.BYTES;
    public static final int ENTRY_COUNT_OFFSET = CREDITS_OFFSET + Integer.BYTES;
    public static final int RESERVED_OFFSET = ENTRY_COUNT_OFFSET + Integer.BYTES;
    public static final int HEADER_LENGTH = RESERVED_OFFSET + Integer.BYTES;

    public static final int ENTRY_ADDRESS_OFFSET = 0;
    public static final int ENTRY_HANDLE_OFFSET = ENTRY_ADDRESS_OFFSET + Long.BYTES;
    public static final int ENTRY_LENGTH_OFFSET = ENTRY_HANDLE_OFFSET + Integer.BYTES;
    public static final int ENTRY_LENGTH = ENTRY_LENGTH_OFFSET + Integer.BYTES;

    /** The room each receive slot has for a message: the longest one. */
    public static final int MAX_LENGTH = 512;
    public static final int MAX_ENTRIES = (MAX_LENGTH - HEADER_LENGTH) / ENTRY_LENGTH;

    private MutableDirectBuffer buffer;
    private int offset;

    public PciCommMessage wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** @return the bytes a message of {@code entries} entries spans. */
    public static int length(final int entries)
    {
        return HEADER_LENGTH + entries * ENTRY_LENGTH;
    }

    /** @return this message's length, from its entry count. */
    public int length()
    {
        return length(entryCount());
    }

    public int type()
    {
        return buffer.getInt(offset + TYPE_OFFSET);
    }

    public PciCommMessage type(final int type)
    {
        buffer.putInt(offset + TYPE_OFFSET, type);
        buffer.putInt(offset + RESERVED_OFFSET, 0);
        return this;
    }

    public int credits()
    {
        return buffer.getInt(offset + CREDITS_OFFSET);
    }

    public PciCommMessage credits(final int credits)
    {
        buffer.putInt(offset + CREDITS_OFFSET, credits);
        return this;
    }

    public int entryCount()
    {
        return buffer.getInt(offset + ENTRY_COUNT_OFFSET);
    }

    public PciCommMessage entryCount(final int count)
    {
        buffer.putInt(offset + ENTRY_COUNT_OFFSET, count);
        return this;
    }

    public PciCommMessage entry(final int i, final long address, final int handle, final int length)
    {
        final int at = offset + HEADER_LENGTH + i * ENTRY_LENGTH;
        buffer.putLong(at + ENTRY_ADDRESS_OFFSET, address);
        buffer.putInt(at + ENTRY_HANDLE_OFFSET, handle);
        buffer.putInt(at + ENTRY_LENGTH_OFFSET, length);
        return this;
    }

    public long entryAddress(final int i)
    {
        return buffer.getLong(offset + HEADER_LENGTH + i * ENTRY_LENGTH + ENTRY_ADDRESS_OFFSET);
    }

    public int entryHandle(final int i)
    {
        return buffer.getInt(offset + HEADER_LENGTH + i * ENTRY_LENGTH + ENTRY_HANDLE_OFFSET);
    }

    public int entryLength(final int i)
    {
        return entryLength(buffer, offset, i);
    }

    private static int entryLength(final DirectBuffer buffer, final int offset, final int i)
    {
        return buffer.getInt(offset + HEADER_LENGTH + i * ENTRY_LENGTH + ENTRY_LENGTH_OFFSET);
    }

    /**
     * @param maxEntryLength the longest buffer an end can export: the cluster's largest transfer.
     * @return null if the {@code length} bytes received are a well-formed message, else why not (a peer
     * that is not this library, or a bug): the connection is then broken rather than guessed at.
     */
    public static String check(final DirectBuffer buffer, final int offset, final int length, final int maxEntryLength)
    {
        if (length < HEADER_LENGTH)
        {
            return "a control message of " + length + " bytes, shorter than its header";
        }
        final int type = buffer.getInt(offset + TYPE_OFFSET);
        final int entries = buffer.getInt(offset + ENTRY_COUNT_OFFSET);
        if (type < EXPORT || type > DISCONNECT)
        {
            return "a control message of unknown type " + type;
        }
        if (entries < 0 || entries > MAX_ENTRIES || (EXPORT != type && 0 != entries) || length != length(entries))
        {
            return "a control message of type " + type + " with " + entries + " entries in " + length + " bytes";
        }
        if (buffer.getInt(offset + CREDITS_OFFSET) < 0)
        {
            return "a control message returning " + buffer.getInt(offset + CREDITS_OFFSET) + " credits";
        }
        for (int i = 0; i < entries; i++)
        {
            // A length below 1 would make the sender's write count run backwards, one above the largest
            // transfer a write the NIC refuses: either way not a buffer allocate() can have made.
            final int entryLength = entryLength(buffer, offset, i);
            if (entryLength < 1 || entryLength > maxEntryLength)
            {
                return "an export entry of " + entryLength + " bytes, outside [1, " + maxEntryLength + "]";
            }
        }
        return null;
    }
}
