package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The input FIFO without a cluster: every record comes out once, in claim order, with its bytes, over
 * many laps; a claim not committed holds the reader up; and bytes an earlier lap (or anything else)
 * left in the records are never taken for a record, though the reader never zeroes them.
 */
class RxFifoTest
{
    private static final int CAPACITY = 64 * 1024;
    private static final int PAGE = 4096;
    private static final int MAX_PACKET = PacketHeader.LENGTH + PAGE;

    private static final int CLAIMED = 0;
    private static final int COMMITTED = 1;
    private static final int ABORTED = 2;

    private static UnsafeBuffer region()
    {
        final int length = RxFifoLayout.ringLength(CAPACITY);
        return new UnsafeBuffer(BufferUtil.allocateDirectAligned(length, Sizes.CACHE_LINE));
    }

    /** The payload of record {@code sequence}: a pattern that differs at every byte and every record. */
    private static byte patternByte(final long sequence, final int i)
    {
        return (byte)((sequence * 0x9E3779B97F4A7C15L + (i + 1) * 0xBF58476D1CE4E5B9L) >>> 56);
    }

    private static void fill(final UnsafeBuffer buffer, final int index, final long sequence, final int length)
    {
        for (int i = 0; i < length; i++)
        {
            buffer.putByte(index + i, patternByte(sequence, i));
        }
    }

    private static String firstDifference(final DirectBuffer buffer, final int index, final long sequence, final int length)
    {
        for (int i = 0; i < length; i++)
        {
            if (buffer.getByte(index + i) != patternByte(sequence, i))
            {
                return "record " + sequence + " differs at byte " + i + " of " + length;
            }
        }
        return null;
    }

    private static final class Claim
    {
        final long sequence;
        final int index;
        final int type;
        final int length;
        int state = CLAIMED;

        Claim(final long sequence, final int index, final int type, final int length)
        {
            this.sequence = sequence;
            this.index = index;
            this.type = type;
            this.length = length;
        }
    }

    @Test
    void randomClaimsCommitsAbortsAndReadsComeOutOnceInClaimOrder()
    {
        final long seed = 0x5EED_F1F0L;
        System.out.println("RxFifoTest single-threaded seed " + seed);
        final Random random = new Random(seed);
        final RxFifo fifo = new RxFifo(region());
        final UnsafeBuffer buffer = (UnsafeBuffer)fifo.buffer();
        final ArrayDeque<Claim> inClaimOrder = new ArrayDeque<>();
        final List<Claim> open = new ArrayList<>();
        long nextSequence = 0;
        long delivered = 0;
        int blockedReads = 0;
        int operations = 0;
        while (fifo.consumerPosition() < 40L * CAPACITY)
        {
            operations++;
            assertTrue(operations < 2_000_000, "seed " + seed + ": no progress after " + operations + " operations");
            final int choice = random.nextInt(10);
            if (choice < 4)
            {
                final int length = random.nextInt(MAX_PACKET + 1);
                final int type = 1 + random.nextInt(3);
                final int index = fifo.tryClaim(type, length);
                if (index < 0)
                {
                    assertEquals(RxFifo.NO_ROOM, index);
                    assertTrue(!inClaimOrder.isEmpty(), "seed " + seed + ": an empty FIFO refused " + length + " bytes");
                    continue;
                }
                assertEquals(0, (index - RxFifoLayout.RECORD_HEADER_LENGTH) % RxFifoLayout.RECORD_ALIGNMENT);
                final Claim claim = new Claim(nextSequence++, index, type, length);
                fill(buffer, index, claim.sequence, length);
                inClaimOrder.addLast(claim);
                open.add(claim);
            }
            else if (choice < 7 && !open.isEmpty())
            {
                final Claim claim = open.remove(random.nextInt(open.size()));
                if (random.nextInt(8) == 0)
                {
                    fifo.abort(claim.index);
                    claim.state = ABORTED;
                }
                else
                {
                    fifo.commit(claim.index);
                    claim.state = COMMITTED;
                }
            }
            else
            {
                final int limit = 1 + random.nextInt(6);
                // What the reader must do: records in claim order, aborted ones skipped, stopping at
                // the first claim not committed, at most limit of them.
                final List<Claim> expected = new ArrayList<>();
                while (expected.size() < limit && !inClaimOrder.isEmpty() && CLAIMED != inClaimOrder.peekFirst().state)
                {
                    final Claim claim = inClaimOrder.pollFirst();
                    if (COMMITTED == claim.state)
                    {
                        expected.add(claim);
                    }
                }
                final List<String> problems = new ArrayList<>();
                final int[] taken = { 0 };
                final int read = fifo.read((type, b, index, length) ->
                {
                    final Claim claim = taken[0] < expected.size() ? expected.get(taken[0]) : null;
                    taken[0]++;
                    if (null == claim)
                    {
                        problems.add("an unexpected record of " + length + " bytes");
                        return;
                    }
                    if (claim.type != type || claim.length != length || claim.index != index)
                    {
                        problems.add("record " + claim.sequence + " came out as type " + type + ", " + length +
                            " bytes at " + index);
                        return;
                    }
                    final String difference = firstDifference(b, index, claim.sequence, length);
                    if (null != difference)
                    {
                        problems.add(difference);
                    }
                }, limit);
                assertEquals(List.of(), problems, "seed " + seed);
                assertEquals(expected.size(), read, "seed " + seed + ": records read");
                delivered += read;
                if (!inClaimOrder.isEmpty() && CLAIMED == inClaimOrder.peekFirst().state)
                {
                    blockedReads++;
                    // Held up at the claim, though records behind it may be committed.
                    assertEquals(0, fifo.read((type, b, index, length) -> fail("read past an open claim"), 100));
                }
            }
        }
        assertTrue(blockedReads > 100, "the reader met open claims " + blockedReads + " times");
        for (final Claim claim : open)
        {
            fifo.commit(claim.index);
            claim.state = COMMITTED;
        }
        long left = 0;
        for (final Claim claim : inClaimOrder)
        {
            left += COMMITTED == claim.state ? 1 : 0;
        }
        final long[] drained = { 0 };
        while (fifo.read((type, b, index, length) -> drained[0]++, 7) > 0)
        {
        }
        assertEquals(left, drained[0]);
        assertEquals(0, fifo.size());
        assertEquals(fifo.producerPosition(), fifo.consumerPosition());
        System.out.println("RxFifoTest: " + (delivered + left) + " records of " + nextSequence + " claims over " +
            fifo.consumerPosition() / CAPACITY + " laps, the reader held up by an open claim " + blockedReads + " times");
    }

    @Test
    void threeWritersAndOneReaderLoseNothingAndKeepEachWritersOrder() throws InterruptedException
    {
        final long seed = System.nanoTime();
        System.out.println("RxFifoTest multi-threaded seed " + seed);
        final UnsafeBuffer region = region();
        final int writers = 3;
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final long[] sent = new long[writers];
        final Thread[] threads = new Thread[writers];
        for (int w = 0; w < writers; w++)
        {
            final int writer = w;
            threads[w] = new Thread(() ->
            {
                try
                {
                    // An instance each, as each NIC has its own view of a peer's FIFO.
                    final RxFifo fifo = new RxFifo(new UnsafeBuffer(region, 0, region.capacity()));
                    final UnsafeBuffer buffer = (UnsafeBuffer)fifo.buffer();
                    final Random random = new Random(seed + writer);
                    final IdleStrategy idle = new BackoffIdleStrategy(10, 10, 1_000, 100_000);
                    long sequence = 0;
                    while (!stop.get())
                    {
                        final int length = Long.BYTES + Integer.BYTES + random.nextInt(MAX_PACKET - 11);
                        final int index = fifo.tryClaim(1 + writer, length);
                        if (index < 0)
                        {
                            idle.idle();
                            continue;
                        }
                        idle.reset();
                        if (random.nextInt(16) == 0)
                        {
                            fifo.abort(index);
                            continue;
                        }
                        buffer.putInt(index, writer);
                        buffer.putLong(index + Integer.BYTES, sequence);
                        fill(buffer, index + Integer.BYTES + Long.BYTES, sequence * writers + writer,
                            length - Integer.BYTES - Long.BYTES);
                        fifo.commit(index);
                        sequence++;
                    }
                    sent[writer] = sequence;
                }
                catch (final Throwable t)
                {
                    failure.compareAndSet(null, t);
                }
            }, "fifo-writer-" + w);
        }
        final long[] received = new long[writers];
        final List<String> problems = new ArrayList<>();
        final RxFifo reader = new RxFifo(region);
        final MessageHandler check = (type, buffer, index, length) ->
        {
            final int writer = buffer.getInt(index);
            final long sequence = buffer.getLong(index + Integer.BYTES);
            if (writer < 0 || writer >= writers || type != 1 + writer)
            {
                problems.add("a record of type " + type + " from writer " + writer);
                return;
            }
            if (sequence != received[writer])
            {
                problems.add("writer " + writer + ": record " + sequence + " where " + received[writer] + " was due");
            }
            final String difference = firstDifference(buffer, index + Integer.BYTES + Long.BYTES,
                sequence * writers + writer, length - Integer.BYTES - Long.BYTES);
            if (null != difference)
            {
                problems.add("writer " + writer + ": " + difference);
            }
            received[writer] = sequence + 1;
        };
        for (final Thread t : threads)
        {
            t.start();
        }
        final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        final IdleStrategy idle = new BackoffIdleStrategy(10, 10, 1_000, 100_000);
        while (System.nanoTime() < end && problems.isEmpty() && null == failure.get())
        {
            idle.idle(reader.read(check, 16));
        }
        stop.set(true);
        for (final Thread t : threads)
        {
            t.join(TimeUnit.SECONDS.toMillis(30));
        }
        while (problems.isEmpty() && reader.read(check, 64) > 0)
        {
        }
        assertNull(failure.get(), "seed " + seed);
        assertEquals(List.of(), problems.size() > 10 ? problems.subList(0, 10) : problems, "seed " + seed);
        for (int w = 0; w < writers; w++)
        {
            assertEquals(sent[w], received[w], "seed " + seed + ": records of writer " + w);
        }
        assertEquals(0, reader.size());
        System.out.println("RxFifoTest: " + (received[0] + received[1] + received[2]) + " records over " +
            reader.consumerPosition() / CAPACITY + " laps");
    }

    /**
     * The records hold, at every place a record can start, a header naming the very position the reader
     * will look for there, and the commit words hold the commits of the lap before: the bytes a FIFO that
     * has gone round keeps, and the worst a sender's payload could leave. None of it is read.
     */
    @Test
    void bytesLeftInTheRecordsAreNeverTakenForARecord()
    {
        final long seed = 0x57A1EL;
        System.out.println("RxFifoTest stale-bytes seed " + seed);
        final Random random = new Random(seed);
        final UnsafeBuffer region = region();
        final long start = 5L * CAPACITY + 3 * RxFifoLayout.RECORD_ALIGNMENT;
        final int trailer = CAPACITY + RxFifoLayout.commitWordsLength(CAPACITY);
        region.putLong(trailer + RxFifoLayout.TRAILER_TAIL_OFFSET, start);
        region.putLong(trailer + RxFifoLayout.TRAILER_HEAD_CACHE_OFFSET, start);
        region.putLong(trailer + RxFifoLayout.TRAILER_HEAD_OFFSET, start);
        for (int i = 0; i < CAPACITY; i += Long.BYTES)
        {
            region.putLong(i, random.nextLong());
        }
        forgeRecords(region, start);

        final RxFifo fifo = new RxFifo(region);
        assertEquals(0, fifo.read((type, b, index, length) -> fail("took stale bytes at " + index), 1000));
        assertEquals(start, fifo.consumerPosition());

        // Several laps of records whose payload is itself forged records for the positions still to come.
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[MAX_PACKET]);
        long sequence = 0;
        final long[] taken = { 0 };
        while (fifo.consumerPosition() < start + 4L * CAPACITY)
        {
            final int length = Long.BYTES + random.nextInt(MAX_PACKET - Long.BYTES);
            final long position = fifo.producerPosition();
            for (int at = 0; at + RxFifoLayout.RECORD_HEADER_LENGTH <= length; at += Long.BYTES)
            {
                // What a forged header at this payload byte would have to say, were it read at a record start.
                final long forged = position + RxFifoLayout.RECORD_HEADER_LENGTH + at + CAPACITY;
                payload.putLong(at, forged + 1);
            }
            payload.putLong(0, sequence);
            if (!fifo.write(WireMessageType.DATA_PACKET, payload, 0, length))
            {
                fail("room refused with the FIFO empty");
            }
            final long expected = sequence;
            assertEquals(1, fifo.read((type, b, index, l) ->
            {
                assertEquals(expected, b.getLong(index));
                assertEquals(length, l);
                taken[0]++;
            }, 10));
            assertEquals(0, fifo.read((type, b, index, l) -> fail("took stale bytes at " + index), 10));
            sequence++;
        }
        assertEquals(sequence, taken[0]);
    }

    /**
     * Writes, at every record boundary of the lap of {@code start} and the next, a record header naming
     * the position that maps there, and into each commit word the commit of the lap before.
     */
    private static void forgeRecords(final UnsafeBuffer region, final long start)
    {
        final long lap = start - start % CAPACITY;
        for (int i = 0; i < CAPACITY; i += RxFifoLayout.RECORD_ALIGNMENT)
        {
            final long position = lap + i < start ? lap + CAPACITY + i : lap + i;
            region.putLong(i + RxFifoLayout.RECORD_POSITION_OFFSET, position);
            region.putInt(i + RxFifoLayout.RECORD_LENGTH_OFFSET, RxFifoLayout.RECORD_ALIGNMENT);
            region.putInt(i + RxFifoLayout.RECORD_TYPE_OFFSET, WireMessageType.SYSTEM_MESSAGE);
            region.putLong(CAPACITY + i / RxFifoLayout.RECORD_ALIGNMENT * Long.BYTES, position - CAPACITY + 1);
        }
    }

    @Test
    void aRegionThatIsNotAFifoIsRefused()
    {
        assertThrows(IllegalStateException.class,
            () -> new RxFifo(new UnsafeBuffer(BufferUtil.allocateDirectAligned(CAPACITY, Sizes.CACHE_LINE))));
        final RxFifo fifo = new RxFifo(region());
        assertEquals(CAPACITY, fifo.capacity());
        assertThrows(IllegalArgumentException.class, () -> fifo.tryClaim(RxFifoLayout.PADDING_TYPE, 8));
        assertThrows(IllegalArgumentException.class, () -> fifo.tryClaim(1, fifo.maxPayloadLength() + 1));
        assertNotEquals(RxFifo.NO_ROOM, fifo.tryClaim(1, fifo.maxPayloadLength()));
    }
}
