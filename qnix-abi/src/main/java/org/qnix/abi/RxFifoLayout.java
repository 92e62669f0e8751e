package org.qnix.abi;

/**
 * A NIC input FIFO, {@code node-X-Y/rx.fifo}: the {@link FileDescriptorBlock}, then the many-to-one
 * FIFO that every NIC of the cluster appends packets to and its owner NIC takes them from
 * (DESIGN.md 3.3; {@link RxFifo} is the code). Each record is a {@link PacketHeader} followed by at most
 * one page of payload; the record type is a {@link WireMessageType}.
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  File Descriptor Block (4 KiB)                                |
 *  +---------------------------------------------------------------+ RING_OFFSET
 *  |  Records: capacity bytes (rxFifoBytes, a power of two),       |
 *  |  each starting on a RECORD_ALIGNMENT boundary                 |
 *  +---------------------------------------------------------------+ RING_OFFSET + capacity
 *  |  Commit words: one long per RECORD_ALIGNMENT bytes of records |
 *  |  (capacity / 8 bytes), written only by the FIFO's writers     |
 *  +---------------------------------------------------------------+ + commitWordsLength
 *  |  Trailer (TRAILER_LENGTH)                                     |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * A record, at a position that is a multiple of {@link #RECORD_ALIGNMENT} (its byte index in the
 * records is the position modulo capacity):
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  Position: the record's claimed tail position (64 bits)       |
 *  |                                                               |
 *  +---------------------------------------------------------------+ 8
 *  |  Length: header and payload, in bytes                         |
 *  +---------------------------------------------------------------+ 12
 *  |  Type: a WireMessageType, or PADDING_TYPE                     |
 *  +---------------------------------------------------------------+ 16
 *  |  Payload: the packet (PacketHeader, then the data)            |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The trailer, each word two cache lines from the next (the adjacent-line prefetcher fetches lines in
 * pairs), offsets from its start:
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  Tail position (every writer, compare-and-set)                |
 *  +---------------------------------------------------------------+ 128
 *  |  Head cache (every writer, release): a recent head            |
 *  +---------------------------------------------------------------+ 256
 *  |  Head position (the owner NIC, release after consuming)       |
 *  +---------------------------------------------------------------+ 384
 * </pre>
 *
 * <p>Why a record is committed in a word of its own, outside the records: Agrona's ring buffer, which
 * this file held up to layout version 4, commits a record by writing its length last and needs the
 * records zeroed behind the reader so that a length of 0 means "not yet written"; zeroing is a third
 * pass over every page that crosses the wire. Here the writer commits by writing {@code position + 1}
 * into the record's commit word, and the reader at head position H takes a record only when that word
 * holds H + 1: a word left from an earlier lap holds a smaller value, one of a claim not yet committed
 * its old value, and a new file's zero never matches. The words are not in the record itself because
 * the reader at H would then read its commit word from bytes an earlier lap may have left there as
 * payload, which a sender chooses. Only writers write commit words, so nothing a packet carries can
 * look committed, and no byte of the records needs zeroing.
 */
public final class RxFifoLayout
{
    public static final int RING_OFFSET = FileDescriptorBlock.LENGTH;

    /** Every record starts on a cache line, so two writers never share the line of a record's header. */
    public static final int RECORD_ALIGNMENT = Sizes.CACHE_LINE;

    public static final int RECORD_POSITION_OFFSET = 0;
    public static final int RECORD_LENGTH_OFFSET = RECORD_POSITION_OFFSET + Long.BYTES;
    public static final int RECORD_TYPE_OFFSET = RECORD_LENGTH_OFFSET + Integer.BYTES;
    public static final int RECORD_HEADER_LENGTH = RECORD_TYPE_OFFSET + Integer.BYTES;

    /** The type of a record the reader skips: the end of the records at a wrap, or an aborted claim. */
    public static final int PADDING_TYPE = -1;

    /** Bytes between two trailer words: two cache lines, against the adjacent-line prefetcher. */
    public static final int TRAILER_WORD_SPACING = 2 * Sizes.CACHE_LINE;
    public static final int TRAILER_TAIL_OFFSET = 0;
    public static final int TRAILER_HEAD_CACHE_OFFSET = TRAILER_TAIL_OFFSET + TRAILER_WORD_SPACING;
    public static final int TRAILER_HEAD_OFFSET = TRAILER_HEAD_CACHE_OFFSET + TRAILER_WORD_SPACING;
    public static final int TRAILER_LENGTH = TRAILER_HEAD_OFFSET + TRAILER_WORD_SPACING;

    private RxFifoLayout()
    {
    }

    public static long fileLength(final ClusterParameters params)
    {
        return RING_OFFSET + (long)ringLength(params);
    }

    /** @return bytes of the region {@link RxFifo} works on: records, commit words and trailer. */
    public static int ringLength(final ClusterParameters params)
    {
        return ringLength(params.rxFifoBytes());
    }

    /** @return bytes of the region {@link RxFifo} works on, for records of {@code capacity} bytes. */
    public static int ringLength(final int capacity)
    {
        return capacity + commitWordsLength(capacity) + TRAILER_LENGTH;
    }

    /** @return the record capacity of a region of {@code ringLength} bytes; the inverse of ringLength. */
    public static int capacity(final int ringLength)
    {
        return (int)((long)(ringLength - TRAILER_LENGTH) * RECORD_ALIGNMENT / (RECORD_ALIGNMENT + Long.BYTES));
    }

    public static int commitWordsLength(final int capacity)
    {
        return capacity / RECORD_ALIGNMENT * Long.BYTES;
    }

    /** @return the largest payload of one record: an eighth of the capacity, as Agrona's ring buffers allow. */
    public static int maxPayloadLength(final int capacity)
    {
        return capacity / 8;
    }
}
