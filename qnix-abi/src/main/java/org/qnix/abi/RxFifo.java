package org.qnix.abi;

import static org.qnix.abi.RxFifoLayout.PADDING_TYPE;
import static org.qnix.abi.RxFifoLayout.RECORD_ALIGNMENT;
import static org.qnix.abi.RxFifoLayout.RECORD_HEADER_LENGTH;
import static org.qnix.abi.RxFifoLayout.RECORD_LENGTH_OFFSET;
import static org.qnix.abi.RxFifoLayout.RECORD_POSITION_OFFSET;
import static org.qnix.abi.RxFifoLayout.RECORD_TYPE_OFFSET;

import org.agrona.BitUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.MessageHandler;

/**
 * A NIC input FIFO (DESIGN.md 3.3): many writers, the NICs of the cluster, each in its own process or
 * thread, append records; one reader, the owning NIC's RX, takes them in the order they were claimed.
 * The layout and the reason for its commit words are in {@link RxFifoLayout}. A page of payload is
 * written into the FIFO once and read out once: unlike Agrona's {@code ManyToOneRingBuffer}, which it
 * replaces with the same calls, the reader never zeroes what it read.
 *
 * <pre>{@code
 * RxFifo fifo = new RxFifo(new UnsafeBuffer(mapped, RxFifoLayout.RING_OFFSET, RxFifoLayout.ringLength(params)));
 * // A sending NIC: claim, write the packet in place, commit.
 * int index = fifo.tryClaim(WireMessageType.DATA_PACKET, PacketHeader.LENGTH + length);
 * if (index >= 0)
 * {
 *     fifo.buffer().putBytes(index, packet, 0, PacketHeader.LENGTH + length);
 *     fifo.commit(index);
 * }
 * // The owning NIC: take up to 16 records.
 * fifo.read((type, buffer, offset, length) -> onPacket(type, buffer, offset, length), 16);
 * }</pre>
 *
 * <p>Positions count bytes from the FIFO's creation and never go back; a record's byte index is its
 * position modulo the capacity. A writer claims room by moving the tail with a compare-and-set, as
 * Agrona's does, after checking it against the head (a cached copy first); fills the record; then
 * commits by writing {@code position + 1} into the record's commit word, last, with release. The
 * reader takes the record at its head H once that word holds H + 1, then moves the head on with
 * release, which gives the room back to the writers. The commit words start zero in a new file and
 * only writers write them, so no earlier lap and no payload can pass for a commit (RxFifoLayout).
 *
 * <p>The object holds no state besides the buffer and its sizes: one instance may be shared by writer
 * threads, and any number of instances in any processes may work on one file.
 */
public final class RxFifo
{
    /** What {@link #tryClaim} returns when the FIFO has no room for the record now. */
    public static final int NO_ROOM = -1;

    private final AtomicBuffer buffer;
    private final int capacity;
    private final int mask;
    private final int maxPayloadLength;
    private final int commitWordsIndex;
    private final int tailIndex;
    private final int headCacheIndex;
    private final int headIndex;

    /**
     * @param buffer the FIFO's region of {@code rx.fifo}: {@link RxFifoLayout#ringLength(int)} bytes from
     *               {@link RxFifoLayout#RING_OFFSET}, 8-byte aligned (a mapped file's page offset is).
     */
    public RxFifo(final AtomicBuffer buffer)
    {
        capacity = RxFifoLayout.capacity(buffer.capacity());
        if (!BitUtil.isPowerOfTwo(capacity) || capacity < RECORD_ALIGNMENT ||
            RxFifoLayout.ringLength(capacity) != buffer.capacity())
        {
            throw new IllegalStateException("an input FIFO region of " + buffer.capacity() +
                " bytes does not hold records of a power-of-two capacity, commit words and trailer");
        }
        buffer.verifyAlignment();
        this.buffer = buffer;
        mask = capacity - 1;
        maxPayloadLength = RxFifoLayout.maxPayloadLength(capacity);
        commitWordsIndex = capacity;
        final int trailer = capacity + RxFifoLayout.commitWordsLength(capacity);
        tailIndex = trailer + RxFifoLayout.TRAILER_TAIL_OFFSET;
        headCacheIndex = trailer + RxFifoLayout.TRAILER_HEAD_CACHE_OFFSET;
        headIndex = trailer + RxFifoLayout.TRAILER_HEAD_OFFSET;
    }

    /** @return the buffer the indexes of {@link #tryClaim} and of the read handler refer to. */
    public AtomicBuffer buffer()
    {
        return buffer;
    }

    /** @return bytes of records the FIFO holds at most. */
    public int capacity()
    {
        return capacity;
    }

    public int maxPayloadLength()
    {
        return maxPayloadLength;
    }

    /**
     * Claims room for a record. The caller writes the payload at the returned index, then calls
     * {@link #commit} or {@link #abort}; until then the reader waits at this record, and so do the
     * records claimed after it.
     *
     * @param type   the record type, positive (a {@link WireMessageType}).
     * @param length bytes of payload, at most {@link #maxPayloadLength()}.
     * @return the payload's index in {@link #buffer()}, or {@link #NO_ROOM}.
     */
    public int tryClaim(final int type, final int length)
    {
        if (type < 1)
        {
            throw new IllegalArgumentException("record type " + type + " is not positive");
        }
        if (length < 0 || length > maxPayloadLength)
        {
            throw new IllegalArgumentException("payload of " + length + " bytes, at most " + maxPayloadLength);
        }
        final AtomicBuffer buffer = this.buffer;
        final int recordLength = RECORD_HEADER_LENGTH + length;
        final int required = BitUtil.align(recordLength, RECORD_ALIGNMENT);
        // Writer: the reader, after consuming (see read); any older value only understates the room.
        long head = buffer.getLongVolatile(headCacheIndex);
        long tail;
        int padding;
        do
        {
            // Writers: every other NIC claiming in this FIFO.
            tail = buffer.getLongVolatile(tailIndex);
            // In longs: a head cache written late by a writer that was descheduled can be far behind.
            if (required > capacity - (tail - head))
            {
                // Writer: the reader, with release after it consumed the records before the head.
                head = buffer.getLongVolatile(headIndex);
                if (required > capacity - (tail - head))
                {
                    return NO_ROOM;
                }
                // Readers: the other writers, in place of the head (a stale copy is only cautious).
                buffer.putLongRelease(headCacheIndex, head);
            }
            padding = 0;
            final int toEnd = capacity - ((int)tail & mask);
            if (required > toEnd)
            {
                // The record goes at index 0 behind a padding record to the end: room is needed up to it.
                int headAt = (int)head & mask;
                if (required > headAt)
                {
                    head = buffer.getLongVolatile(headIndex);
                    headAt = (int)head & mask;
                    if (required > headAt)
                    {
                        return NO_ROOM;
                    }
                    buffer.putLongRelease(headCacheIndex, head);
                }
                padding = toEnd;
            }
        }
        while (!buffer.compareAndSetLong(tailIndex, tail, tail + padding + required));

        if (0 != padding)
        {
            writeHeader((int)tail & mask, tail, padding, PADDING_TYPE);
            commitAt((int)tail & mask, tail);
            tail += padding;
        }
        final int recordIndex = (int)tail & mask;
        writeHeader(recordIndex, tail, recordLength, type);
        return recordIndex + RECORD_HEADER_LENGTH;
    }

    /**
     * Hands a claimed record to the reader: after this the caller must not touch it, the reader may
     * already have taken it and a writer reused its room.
     *
     * @param index what {@link #tryClaim} returned.
     */
    public void commit(final int index)
    {
        final int recordIndex = index - RECORD_HEADER_LENGTH;
        commitAt(recordIndex, buffer.getLong(recordIndex + RECORD_POSITION_OFFSET));
    }

    /**
     * Gives a claimed record up: the reader skips it.
     *
     * @param index what {@link #tryClaim} returned.
     */
    public void abort(final int index)
    {
        final int recordIndex = index - RECORD_HEADER_LENGTH;
        buffer.putInt(recordIndex + RECORD_TYPE_OFFSET, PADDING_TYPE);
        commitAt(recordIndex, buffer.getLong(recordIndex + RECORD_POSITION_OFFSET));
    }

    /**
     * Claims, copies and commits one record.
     *
     * @return false, having written nothing, if the FIFO has no room for it now.
     */
    public boolean write(final int type, final DirectBuffer source, final int offset, final int length)
    {
        final int index = tryClaim(type, length);
        if (index < 0)
        {
            return false;
        }
        buffer.putBytes(index, source, offset, length);
        commit(index);
        return true;
    }

    /**
     * Takes committed records in claim order, up to the first one not committed yet. Only the owner
     * NIC reads, from one thread. The handler gets the payload's index and length in {@link #buffer()};
     * the bytes are valid until it returns. A handler that throws has consumed its record.
     *
     * @param limit the most records to hand to the handler.
     * @return records handed to the handler (padding is not counted).
     */
    public int read(final MessageHandler handler, final int limit)
    {
        final AtomicBuffer buffer = this.buffer;
        // Only this reader writes the head.
        final long head = buffer.getLong(headIndex);
        int bytesRead = 0;
        int records = 0;
        try
        {
            while (records < limit)
            {
                final long position = head + bytesRead;
                final int recordIndex = (int)position & mask;
                // Writer: the NIC that claimed this position, in commit(), after the record's bytes.
                if (buffer.getLongVolatile(commitWordIndex(recordIndex)) != position + 1)
                {
                    break;
                }
                final int recordLength = buffer.getInt(recordIndex + RECORD_LENGTH_OFFSET);
                final int type = buffer.getInt(recordIndex + RECORD_TYPE_OFFSET);
                bytesRead += BitUtil.align(recordLength, RECORD_ALIGNMENT);
                if (PADDING_TYPE != type)
                {
                    records++;
                    handler.onMessage(type, buffer, recordIndex + RECORD_HEADER_LENGTH, recordLength - RECORD_HEADER_LENGTH);
                }
            }
        }
        finally
        {
            if (0 != bytesRead)
            {
                // Readers: every writer, in tryClaim; the records before the new head may be overwritten now.
                buffer.putLongRelease(headIndex, head + bytesRead);
            }
        }
        return records;
    }

    /** @return bytes claimed and not yet consumed (committed or not), for tools; a snapshot. */
    public int size()
    {
        long headAfter = buffer.getLongVolatile(headIndex);
        long headBefore;
        long tail;
        do
        {
            headBefore = headAfter;
            tail = buffer.getLongVolatile(tailIndex);
            headAfter = buffer.getLongVolatile(headIndex);
        }
        while (headAfter != headBefore);
        return (int)Math.max(0, Math.min(capacity, tail - headAfter));
    }

    /** @return the head position: bytes the reader has consumed since the FIFO was created. */
    public long consumerPosition()
    {
        return buffer.getLongVolatile(headIndex);
    }

    /** @return the tail position: bytes writers have claimed since the FIFO was created. */
    public long producerPosition()
    {
        return buffer.getLongVolatile(tailIndex);
    }

    private void writeHeader(final int recordIndex, final long position, final int length, final int type)
    {
        buffer.putLong(recordIndex + RECORD_POSITION_OFFSET, position);
        buffer.putInt(recordIndex + RECORD_LENGTH_OFFSET, length);
        buffer.putInt(recordIndex + RECORD_TYPE_OFFSET, type);
    }

    private void commitAt(final int recordIndex, final long position)
    {
        // Reader: the owner NIC's RX, in read(), which takes the record once this word is its head + 1.
        buffer.putLongRelease(commitWordIndex(recordIndex), position + 1);
    }

    private int commitWordIndex(final int recordIndex)
    {
        return commitWordsIndex + recordIndex / RECORD_ALIGNMENT * Long.BYTES;
    }
}
