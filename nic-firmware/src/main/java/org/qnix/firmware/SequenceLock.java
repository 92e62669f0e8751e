package org.qnix.firmware;

import java.lang.invoke.VarHandle;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The writer side of the sequence lock guarding a table the firmware publishes in SDRAM (see
 * {@code NameTableLayout}); readers are {@code PublishedTables} in other processes.
 */
final class SequenceLock
{
    private SequenceLock()
    {
    }

    static void beginWrite(final AtomicBuffer buffer, final int sequenceOffset)
    {
        final long sequence = buffer.getLong(sequenceOffset);
        // Readers (PublishedTables): an odd sequence tells them to retry.
        buffer.putLongRelease(sequenceOffset, sequence + 1);
        // Keep the table writes that follow from being seen before the odd sequence.
        VarHandle.storeStoreFence();
    }

    static void endWrite(final AtomicBuffer buffer, final int sequenceOffset)
    {
        // Readers (PublishedTables): the table is consistent again once the sequence is even.
        buffer.putLongRelease(sequenceOffset, buffer.getLong(sequenceOffset) + 1);
    }
}
