package org.qnix.lib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

import net.openhft.chronicle.bytes.Bytes;
import org.agrona.MutableDirectBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.host.HostMemoryMapping;
import org.qnix.host.PageTable;

/**
 * A buffer's mapping and page table without a cluster: pages of a plain file stand in for host memory,
 * so each byte written through a view can be checked at its physical address.
 */
class QnixBufferTest
{
    private static final int PAGE = 4096;
    private static final int K = 513;

    @TempDir
    Path base;

    private Path hostMemory;

    @BeforeEach
    void setUp() throws IOException
    {
        hostMemory = base.resolve("host.mem");
        try (RandomAccessFile file = new RandomAccessFile(hostMemory.toFile(), "rw"))
        {
            file.setLength(64L * PAGE);
        }
    }

    @Test
    void scatteredPagesAreVirtuallyContiguousAndLandAtTheirPhysicalAddresses() throws IOException
    {
        final long[] pages = {40L * PAGE, 41L * PAGE, 7L * PAGE, 30L * PAGE};
        final QnixBuffer buffer = buffer(pages, 3 * PAGE, 4093);
        assertFalse(buffer.isContiguous());
        final MutableDirectBuffer view = buffer.buffer();
        for (int i = 0; i < buffer.length(); i++)
        {
            view.putByte(i, (byte)(i * 31 + 7));
        }
        for (int i = 0; i < buffer.length(); i++)
        {
            final long virtual = 4093L + i;
            final long physical = pages[(int)(virtual / PAGE)] + virtual % PAGE;
            assertEquals((byte)(i * 31 + 7), readFile(physical), "byte " + i);
            assertEquals((byte)(i * 31 + 7), buffer.byteBuffer().get(i), "byte " + i + " through the ByteBuffer");
        }
        final Bytes<?> bytes = buffer.bytes();
        bytes.readPositionRemaining(0, buffer.length());
        for (int i = 0; i < buffer.length(); i++)
        {
            assertEquals((byte)(i * 31 + 7), bytes.readByte(), "byte " + i + " through Chronicle Bytes");
        }
        buffer.unmap();
    }

    @Test
    void contiguousPagesAreOneMappingOfTheRun() throws IOException
    {
        final long[] pages = {10L * PAGE, 11L * PAGE};
        final QnixBuffer buffer = buffer(pages, PAGE + 1, 1);
        assertTrue(buffer.isContiguous());
        buffer.buffer().putLong(PAGE - 8, 0x0102030405060708L);
        assertEquals(ByteOrder.nativeOrder(), buffer.byteBuffer().order());
        assertEquals(0x0102030405060708L, buffer.byteBuffer().getLong(PAGE - 8));
        assertEquals(0x0102030405060708L, buffer.bytes().readLong(PAGE - 8));
        buffer.bytes().writeInt(0xCAFEBABE);
        assertEquals(0xCAFEBABE, buffer.buffer().getInt(0));
        assertEquals((byte)0x08, readFile(10L * PAGE + 1 + PAGE - 8));
        buffer.unmap();
    }

    @Test
    void translationDescribesEveryPageOfTheRange()
    {
        final long[] pages = {40L * PAGE, 7L * PAGE, 30L * PAGE};
        final QnixBuffer buffer = buffer(pages, 2 * PAGE + 3, 4093);
        final PageTable table = new PageTable(K);

        buffer.translate(0, buffer.length(), table);
        assertEquals(3, table.descriptors());
        assertEquals(buffer.length(), table.totalLength());
        assertDescriptor(table, 0, 40L * PAGE, 4093, 3);
        assertDescriptor(table, 1, 7L * PAGE, 0, PAGE);
        assertDescriptor(table, 2, 30L * PAGE, 0, PAGE);

        buffer.translate(3, 10, table);
        assertEquals(1, table.descriptors());
        assertDescriptor(table, 0, 7L * PAGE, 0, 10);

        buffer.translate(2, 2, table);
        assertEquals(2, table.descriptors());
        assertDescriptor(table, 0, 40L * PAGE, 4095, 1);
        assertDescriptor(table, 1, 7L * PAGE, 0, 1);

        buffer.translate(5, 0, table);
        assertEquals(0, table.descriptors());
        assertEquals(0, table.totalLength());

        assertThrows(IllegalArgumentException.class, () -> buffer.translate(1, buffer.length(), table));
        assertThrows(IllegalArgumentException.class, () -> buffer.translate(-1, 1, table));
        final IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class,
            () -> buffer.translate(0, buffer.length(), new PageTable(2)));
        assertTrue(tooMany.getMessage().contains("K=2"), tooMany.getMessage());
        buffer.unmap();
    }

    @Test
    void closedBufferRefusesItsViews()
    {
        final QnixBuffer buffer = buffer(new long[]{5L * PAGE}, 100, 0);
        final MutableDirectBuffer kept = buffer.buffer();
        buffer.unmap();
        assertTrue(buffer.isClosed());
        assertThrows(IllegalStateException.class, buffer::buffer);
        assertThrows(IllegalStateException.class, buffer::byteBuffer);
        assertThrows(IndexOutOfBoundsException.class, () -> kept.getByte(0), "a kept view no longer reaches memory");
    }

    @Test
    void mlockIsBestEffort()
    {
        final HostMemoryMapping mapping = HostMemoryMapping.map(hostMemory, new long[]{9L * PAGE, 3L * PAGE}, PAGE);
        mapping.mlock();
        mapping.munlock();
        mapping.close();
    }

    @Test
    void bufferPoolSlicesStartAtTheirPage()
    {
        final long[] pages = {20L * PAGE, 50L * PAGE, 2L * PAGE};
        final BufferPool pool =
            new BufferPool(null, 1, PAGE, 512 * PAGE, pages, HostMemoryMapping.map(hostMemory, pages, PAGE));
        pool.slice(1, 16).putLong(8, 77L);
        assertEquals(77L, pool.buffer().getLong(PAGE + 8));
        assertEquals(77L, pool.byteBuffer().getLong(PAGE + 8));
        assertThrows(IllegalArgumentException.class, () -> pool.slice(3, 1));
        assertThrows(IllegalArgumentException.class, () -> pool.slice(2, PAGE + 1));
        pool.unmap();
        assertThrows(IllegalStateException.class, pool::buffer);
    }

    private QnixBuffer buffer(final long[] pages, final int length, final int firstPageOffset)
    {
        return new QnixBuffer(null, 1, length, firstPageOffset, PAGE, pages, HostMemoryMapping.map(hostMemory, pages, PAGE));
    }

    private byte readFile(final long position) throws IOException
    {
        try (FileChannel channel = FileChannel.open(hostMemory))
        {
            final ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, position);
            return one.get(0);
        }
    }

    private static void assertDescriptor(
        final PageTable table, final int i, final long address, final int offset, final int length)
    {
        assertEquals(address, table.address(i), "address of descriptor " + i);
        assertEquals(offset, table.offset(i), "offset of descriptor " + i);
        assertEquals(length, table.length(i), "length of descriptor " + i);
    }
}
