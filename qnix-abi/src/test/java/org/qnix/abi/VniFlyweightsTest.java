package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** The Command Queue entry, Context and Descriptor flyweights both libqnix and the firmware use. */
class VniFlyweightsTest
{
    private static final int PAGE = 4096;

    @Test
    void aCommandIsSeenWithItsFieldsAndIsEmptyAgainWhenConsumed()
    {
        final UnsafeBuffer memory = new UnsafeBuffer(new byte[4 * CommandQueueLayout.ENTRY_LENGTH]);
        final CommandQueueEntry writer = new CommandQueueEntry().wrap(memory, CommandQueueLayout.ENTRY_LENGTH);
        final CommandQueueEntry reader = new CommandQueueEntry().wrap(memory, CommandQueueLayout.ENTRY_LENGTH);
        assertTrue(reader.isEmpty());
        writer.publish(ProcessCommand.SEND, 7, 11, 13);
        assertEquals(ProcessCommand.SEND, reader.command());
        assertEquals(7, reader.context());
        assertEquals(11, reader.group());
        assertEquals(13, reader.size());
        reader.consume();
        assertTrue(writer.isEmpty());
    }

    @Test
    void multicastNamesFillAnEntryTwoByTwo()
    {
        final UnsafeBuffer memory = new UnsafeBuffer(new byte[CommandQueueLayout.ENTRY_LENGTH]);
        final CommandQueueEntry entry = new CommandQueueEntry().wrap(memory, 0);
        assertEquals(2, CommandQueueLayout.NAMES_PER_ENTRY);
        entry.putName(0, 3, 4);
        entry.putName(1, 5, 6);
        assertEquals(3, entry.nameAi(0));
        assertEquals(4, entry.namePi(0));
        assertEquals(5, entry.nameAi(1));
        assertEquals(6, entry.namePi(1));
        assertFalse(entry.isEmpty(), "a name entry is never taken for an empty slot");
    }

    @Test
    void aContextKeepsWhatTheProcessWroteApartFromTheCompletion()
    {
        final UnsafeBuffer memory = new UnsafeBuffer(new byte[2 * ContextLayout.CONTEXT_LENGTH]);
        final VniContext context = new VniContext().wrap(memory, ContextLayout.CONTEXT_LENGTH);
        context.fill(1, 2, 3, true, 4, 5L << 33, ContextLayout.NO_BUFFER_POOL);
        context.complete(6, 7, 8, 9);
        assertEquals(1, context.peerAi());
        assertEquals(2, context.peerPi());
        assertEquals(3, context.tag());
        assertTrue(context.doorbellFlag());
        assertEquals(4, context.pages());
        assertEquals(5L << 33, context.length());
        assertEquals(ContextLayout.NO_BUFFER_POOL, context.bufferPoolIndex());
        assertEquals(6, context.sourceAi());
        assertEquals(7, context.sourcePi());
        assertEquals(8, context.sourceTag());
        assertEquals(9, context.completionLength());
        assertEquals(0, memory.getLong(0), "nothing written before the context");
    }

    @Test
    void translateDescribesEveryByteOnceInPageOrder()
    {
        final long seed = 0x51DEL;
        System.out.println("VniFlyweightsTest seed " + seed);
        final Random random = new Random(seed);
        final int capacity = 8;
        final UnsafeBuffer memory = new UnsafeBuffer(new byte[capacity * ContextRegionLayout.DESCRIPTOR_LENGTH]);
        final ContextRegionDescriptor region = new ContextRegionDescriptor().wrap(memory, 0);
        final long[] pages = new long[capacity];
        for (int p = 0; p < capacity; p++)
        {
            pages[p] = (long)(100 + random.nextInt(1000)) * PAGE;
        }
        for (int trial = 0; trial < 1000; trial++)
        {
            final int start = random.nextInt(PAGE);
            final int length = random.nextInt((capacity - 1) * PAGE);
            final int written = region.translate(pages, PAGE, start, length, capacity);
            assertEquals(ContextRegionDescriptor.pagesTouched(PAGE, start, length), written);
            long position = start;
            for (int i = 0; i < written; i++)
            {
                assertTrue(region.isValid(i));
                assertEquals(pages[(int)(position / PAGE)], region.address(i));
                assertEquals(position % PAGE, region.offsetInPage(i));
                assertTrue(region.length(i) > 0 && region.offsetInPage(i) + region.length(i) <= PAGE);
                position += region.length(i);
            }
            assertEquals(start + (long)length, position, "trial " + trial + ": bytes described");
        }
    }

    @Test
    void aRangeTooLongForTheRegionOrThePagesIsRefused()
    {
        final UnsafeBuffer memory = new UnsafeBuffer(new byte[4 * ContextRegionLayout.DESCRIPTOR_LENGTH]);
        final ContextRegionDescriptor region = new ContextRegionDescriptor().wrap(memory, 0);
        final long[] pages = {PAGE, 2 * PAGE, 3 * PAGE};
        assertThrows(IllegalArgumentException.class, () -> region.translate(pages, PAGE, 1, 3 * PAGE, 3));
        assertThrows(IllegalArgumentException.class, () -> region.translate(pages, PAGE, 0, 3 * PAGE + 1, 4));
        assertEquals(3, region.translate(pages, PAGE, 0, 3 * PAGE, 3));
        assertEquals(0, region.translate(pages, PAGE, 5, 0, 3));
    }
}
