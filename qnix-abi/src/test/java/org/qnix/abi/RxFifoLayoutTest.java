package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** The input FIFO file's arithmetic, and the refusal of a FIFO file of the Agrona ring buffer's time. */
class RxFifoLayoutTest
{
    @Test
    void theRegionHoldsRecordsCommitWordsAndTrailerAndGivesItsCapacityBack()
    {
        for (int shift = 16; shift <= 30; shift++)
        {
            final int capacity = 1 << shift;
            final int ringLength = RxFifoLayout.ringLength(capacity);
            assertEquals(capacity, RxFifoLayout.capacity(ringLength));
            assertEquals(capacity / RxFifoLayout.RECORD_ALIGNMENT * Long.BYTES, RxFifoLayout.commitWordsLength(capacity));
            assertEquals(0, (capacity + RxFifoLayout.commitWordsLength(capacity)) % Sizes.CACHE_LINE,
                "the trailer starts on a cache line");
        }
        final ClusterParameters params = ClusterParameters.builder().build();
        assertEquals(RxFifoLayout.RING_OFFSET + RxFifoLayout.ringLength(params.rxFifoBytes()),
            RxFifoLayout.fileLength(params));
        assertEquals(0, RxFifoLayout.RECORD_HEADER_LENGTH % Long.BYTES, "payloads stay 8-byte aligned");
        assertTrue(RxFifoLayout.maxPayloadLength(params.rxFifoBytes()) >= PacketHeader.LENGTH + params.pageSize());
    }

    @Test
    void aFifoFileOfTheEarlierLayoutIsRefusedWithTheStaleVersionMessage()
    {
        final UnsafeBuffer file = new UnsafeBuffer(BufferUtil.allocateDirectAligned(FileDescriptorBlock.LENGTH, 64));
        FileDescriptorBlock.write(file, FileDescriptorBlock.TYPE_RX_FIFO, new NicCoordinates(0, 0),
            ClusterParameters.builder().build());
        file.putInt(FileDescriptorBlock.LAYOUT_VERSION_OFFSET, 4);
        FileDescriptorBlock.markReady(file);
        final IllegalStateException stale = assertThrows(IllegalStateException.class,
            () -> FileDescriptorBlock.verify(file, FileDescriptorBlock.TYPE_RX_FIFO, "node-0-0/rx.fifo"));
        assertTrue(stale.getMessage().contains("layout version 4 but this QNIX build reads version " +
            FileDescriptorBlock.LAYOUT_VERSION + ": the cluster was brought up by an older build"), stale.getMessage());
    }
}
