package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * Snapshots of the Name and Group Tables under their sequence locks: a reader waits out a writer that
 * was preempted between the two halves of its write, and gives up with a clear error only when the
 * table never settles.
 */
class PublishedTablesTest
{
    private final ClusterParameters params = ClusterParameters.builder().build();
    private final NicSdramLayout layout = new NicSdramLayout(params);
    private final UnsafeBuffer sdram = new UnsafeBuffer(ByteBuffer.allocateDirect(
        (int)(layout.groupTableOffset() + GroupTableLayout.length(params))));
    private final int names = (int)layout.nameTableOffset();

    /**
     * The writer makes the sequence odd, is held up for 50 ms (a control program preempted mid-write),
     * then writes the entry and makes the sequence even: the reader returns what it wrote. Before, the
     * reader gave up after 10,000 spins, within a millisecond ("Name Table kept changing").
     */
    @Test
    void aReaderWaitsForAWriterHeldUpBetweenTheHalvesOfItsWrite() throws Exception
    {
        sdram.putLongRelease(names + NameTableLayout.SEQUENCE_OFFSET, 1);
        final Thread writer = new Thread(() ->
        {
            try
            {
                Thread.sleep(50);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            final int e = names + NameTableLayout.entryOffset(3);
            sdram.putInt(e + NameTableLayout.AI_OFFSET, 77);
            sdram.putInt(e + NameTableLayout.PI_OFFSET, 1);
            sdram.putInt(e + NameTableLayout.NODE_OFFSET, new NicCoordinates(1, 0).packed());
            sdram.putInt(e + NameTableLayout.NIC_PID_OFFSET, 4);
            sdram.putInt(e + NameTableLayout.OS_PID_OFFSET, 4242);
            sdram.putInt(e + NameTableLayout.STATE_OFFSET, NameTableLayout.STATE_USED);
            sdram.putLongRelease(names + NameTableLayout.SEQUENCE_OFFSET, 2);
        }, "writer");
        writer.start();
        try
        {
            final List<PublishedTables.NameEntry> read = PublishedTables.names(sdram, layout);
            assertEquals(List.of(new PublishedTables.NameEntry(new ProcessName(77, 1), new NicCoordinates(1, 0), 4,
                4242)), read);
        }
        finally
        {
            writer.join(TimeUnit.SECONDS.toMillis(30));
        }
    }

    @Test
    void aTableThatNeverSettlesEndsInAnErrorNamingIt()
    {
        final int groups = (int)layout.groupTableOffset();
        sdram.putLongRelease(groups + GroupTableLayout.SEQUENCE_OFFSET, 5);
        final IllegalStateException stuck = assertThrows(IllegalStateException.class,
            () -> SequenceLock.read(sdram, groups + GroupTableLayout.SEQUENCE_OFFSET, "Group Table",
                TimeUnit.MILLISECONDS.toNanos(20), () -> "read"));
        assertTrue(stuck.getMessage().startsWith("Group Table kept changing for 20 ms"), stuck.getMessage());
    }

    @Test
    void aSettledTableIsReadAtOnce()
    {
        assertEquals(List.of(), PublishedTables.names(sdram, layout));
        assertEquals(List.of(), PublishedTables.groups(sdram, layout));
    }
}
