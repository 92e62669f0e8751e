package org.qnix.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.MappedFile;

/**
 * What a process still holds of memory it gave back: views kept past a buffer's or a NIC's close read
 * zeros and write where nobody else reads, instead of faulting (SIGSEGV, the JVM gone) or showing
 * the pages to whoever the driver hands them next; here the "next owner" is a second mapping of the
 * same file, as another process's would be.
 */
class RetiredMemoryTest
{
    private static final int PAGE = 4096;
    private static final int PAGES = 4;

    @TempDir
    Path dir;

    private Path hostMem;
    private MappedFile nextOwner;

    @BeforeEach
    void hostMemory()
    {
        assertNull(Libc.unavailableReason(), "mmap at a fixed address, which this machine has");
        hostMem = dir.resolve("host.mem");
        nextOwner = MappedFile.create(hostMem, (long)PAGES * PAGE);
        for (int i = 0; i < PAGES * PAGE; i++)
        {
            nextOwner.buffer().putByte(i, (byte)(1 + i % 100));
        }
    }

    @AfterEach
    void unmap()
    {
        nextOwner.close();
    }

    private void assertRetired(final ByteBuffer kept, final UnsafeBuffer keptAgrona, final long fileOffset)
    {
        for (int i = 0; i < kept.capacity(); i++)
        {
            assertEquals(0, kept.get(i), "byte " + i + " of a kept view");
        }
        kept.put(0, (byte)-7);
        keptAgrona.putByte(1, (byte)-8);
        assertEquals(-7, kept.get(0), "a kept view's own write");
        assertEquals((byte)(1 + fileOffset % 100), nextOwner.buffer().getByte((int)fileOffset),
            "the next owner's byte");
        assertEquals((byte)(1 + (fileOffset + 1) % 100), nextOwner.buffer().getByte((int)fileOffset + 1));
        nextOwner.buffer().putByte((int)fileOffset + 2, (byte)55);
        assertEquals(0, kept.get(2), "what the next owner writes is not seen");
    }

    @Test
    void aMappedFileRetiresOnceAndAnUnmappedOneIsLeftAlone()
    {
        final MappedFile region = MappedFile.mapExisting(hostMem, PAGE, PAGE);
        final ByteBuffer kept = region.mappedByteBuffer().duplicate();
        assertEquals(nextOwner.buffer().getByte(PAGE), kept.get(0), "the file's bytes while mapped");
        assertTrue(RetiredMemory.retire(region, false));
        assertEquals(0, kept.get(0), "retired: zeros");
        assertEquals((byte)(1 + PAGE % 100), nextOwner.buffer().getByte(PAGE), "the file keeps its bytes");

        final MappedFile closed = MappedFile.mapExisting(hostMem, 2 * PAGE, PAGE);
        closed.close();
        closed.close();
        assertTrue(closed.isClosed());
        // Its address range may be another mapping's by now: nothing is mapped over it.
        assertFalse(RetiredMemory.retire(closed));
    }

    @Test
    void aContiguousBufferKeptPastItsCloseReadsZeros()
    {
        final HostMemoryMapping mapping = HostMemoryMapping.map(hostMem, new long[] {PAGE, 2 * PAGE}, PAGE);
        final ByteBuffer kept = mapping.byteBuffer(0, 2 * PAGE);
        final UnsafeBuffer keptAgrona = new UnsafeBuffer(mapping.byteBuffer(0, 2 * PAGE));
        assertEquals((byte)(1 + PAGE % 100), kept.get(0), "the file's bytes while mapped");
        mapping.close();
        assertRetired(kept, keptAgrona, PAGE);
    }

    @Test
    void aScatteredBufferKeptPastItsCloseReadsZeros()
    {
        final HostMemoryMapping mapping = HostMemoryMapping.map(hostMem, new long[] {3 * PAGE, 0}, PAGE);
        final ByteBuffer kept = mapping.byteBuffer(0, 2 * PAGE);
        final UnsafeBuffer keptAgrona = new UnsafeBuffer(mapping.byteBuffer(PAGE, PAGE));
        assertEquals((byte)(1 + 3 * PAGE % 100), kept.get(0), "page 3 first");
        assertEquals((byte)1, kept.get(PAGE), "then page 0");
        mapping.close();
        assertRetired(kept, keptAgrona, 3 * PAGE);
        assertEquals(0, keptAgrona.getByte(0), "the second page, retired too");
        assertThrows(IllegalStateException.class, () -> mapping.byteBuffer(0, PAGE), "no new views once closed");
    }

    @Test
    void theViewsOfAClosedBufferThrowOrReadZeros()
    {
        final MappedViews views = new MappedViews(HostMemoryMapping.map(hostMem, new long[] {0}, PAGE), 0, PAGE);
        final UnsafeBuffer shared = views.buffer();
        final ByteBuffer kept = views.byteBuffer();
        assertEquals(1, shared.getByte(0));
        views.close();
        assertThrows(IndexOutOfBoundsException.class, () -> shared.getByte(0), "the detached Agrona view");
        assertEquals(0, kept.get(0));
        assertEquals(1, nextOwner.buffer().getByte(0));
    }

    @Test
    void aRetiredRangeStaysCountedAsMappingsUntilItsLastViewIsCollected() throws InterruptedException
    {
        awaitCollected();
        final long before = MappingBudget.held();
        HostMemoryMapping scattered = HostMemoryMapping.map(hostMem, new long[] {2 * PAGE, 0}, PAGE);
        ByteBuffer kept = scattered.byteBuffer(0, 2 * PAGE);
        final long address = BufferUtil.address(kept);
        assertEquals(2, kernelMappings(address, 2 * PAGE), "two runs of the file: two mappings");
        assertEquals(before + 2, MappingBudget.held());
        scattered.close();
        assertEquals(1, kernelMappings(address, 2 * PAGE), "retired: one anonymous mapping over both");
        assertEquals(before + 1, MappingBudget.held(), "counted as the kernel counts it");
        assertEquals(1, MappingBudget.retiredHeld());
        assertEquals(0, kept.get(0));
        scattered = null;
        kept = null;
        awaitCollected();
        assertEquals(before, MappingBudget.held(), "unmapped once collected");
    }

    /** @return the mappings of this process (lines of /proc/self/maps) that hold a byte of the range. */
    private static long kernelMappings(final long address, final long length)
    {
        try
        {
            return Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(line ->
            {
                final String[] range = line.substring(0, line.indexOf(' ')).split("-");
                return Long.parseUnsignedLong(range[0], 16) < address + length &&
                    Long.parseUnsignedLong(range[1], 16) > address;
            }).count();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /** Collections until every retired range of this JVM was unmapped; a hang guard of a minute. */
    private static void awaitCollected() throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (MappingBudget.retiredHeld() > 0 && System.nanoTime() < deadline)
        {
            System.gc();
            Thread.sleep(10);
        }
        assertEquals(0, MappingBudget.retiredHeld(), "retired ranges left after a minute of collections");
    }

    @Test
    void aRegionOfAFileRetiresWholeThoughItStartsMidPage()
    {
        final MappedFile region = MappedFile.mapExisting(hostMem, PAGE + 100, 200);
        final UnsafeBuffer kept = region.buffer();
        assertEquals((byte)(1 + (PAGE + 100) % 100), kept.getByte(0));
        RetiredMemory.retire(region);
        for (int i = 0; i < 200; i++)
        {
            assertEquals(0, kept.getByte(i), "byte " + i);
        }
        kept.putByte(0, (byte)9);
        assertEquals((byte)(1 + (PAGE + 100) % 100), nextOwner.buffer().getByte(PAGE + 100));
    }
}
