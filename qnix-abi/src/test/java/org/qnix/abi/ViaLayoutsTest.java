package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.Set;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The VIA part of the binary contract (issue 14), without a cluster: the VIA tables sit in NIC
 * internal memory between the Protection Table and managed memory without overlapping, every entry's
 * fields fit and its 64-bit words are aligned, the words two parties write are on different cache
 * lines, the diagrams' offsets are the constants, and the flyweights read back what they wrote.
 */
class ViaLayoutsTest
{
    private static List<ClusterParameters> parameters()
    {
        return List.of(
            ClusterParameters.builder().build(),
            ClusterParameters.builder().torus(4, 4).processes(16).contexts(8).commandQueueEntries(16).build(),
            ClusterParameters.builder().torus(2, 2).processes(8).contexts(4).commandQueueEntries(8)
                .descriptorsPerRegion(4).shortThreshold(64).pageSize(1024).bufferPoolPages(4)
                .driverCommandQueueEntries(8).nameTableEntries(64).groupTableEntries(8).sdramBytes(1 << 20)
                .hostMemoryBytes(1 << 20).rxFifoBytes(1 << 16).build());
    }

    @Test
    void viaTablesFollowTheProtectionTableWithoutOverlapping()
    {
        for (final ClusterParameters params : parameters())
        {
            final NicSdramLayout layout = new NicSdramLayout(params);
            final ViaTablesLayout via = layout.via();
            final String what = params.toString();
            final long lastPage = params.hostMemoryBytes() - params.pageSize();
            assertTrue(layout.protectionEntryOffset(lastPage) + ProtectionTableLayout.ENTRY_LENGTH <= via.viTableOffset(), what);
            assertEquals(0, via.viTableOffset() % Sizes.CACHE_LINE, what);
            assertEquals(0, via.cqTableOffset() % Sizes.CACHE_LINE, what);
            assertTrue(via.viOffset(via.viEntries() - 1) + ViTableEntry.LENGTH <= via.regionTableOffset(), what);
            assertTrue(via.regionOffset(via.regionEntries() - 1) + MemoryRegionEntry.LENGTH <= via.translationsOffset(), what);
            assertTrue(via.translationOffset(via.translationEntries() - 1) + ViaTablesLayout.TRANSLATION_LENGTH <=
                via.cqTableOffset(), what);
            assertTrue(via.cqOffset(via.cqEntries() - 1) + CqTableEntry.LENGTH <= via.endOffset(), what);
            assertTrue(via.endOffset() <= layout.managedMemoryOffset(), what);
            assertEquals(0, layout.managedMemoryOffset() % params.pageSize(), what);
            assertTrue(layout.minimumSdramBytes() <= params.sdramBytes(), what);
            final int p = params.maxProcessesPerNic();
            assertEquals(ViaTablesLayout.VIS_PER_PROCESS_SLOT * p, via.viEntries());
            assertEquals(ViaTablesLayout.CQS_PER_PROCESS_SLOT * p, via.cqEntries());
            assertEquals(ViaTablesLayout.TRANSLATIONS_PER_HOST_PAGE * params.hostMemoryBytes() / params.pageSize(),
                via.translationEntries(), "every page of the node may be registered twice");
            assertTrue(via.regionEntries() <= MemoryRegionEntry.MAX_SLOTS);
        }
    }

    /** A CQ ring has a power of two of slots, so that entry n's slot goes on across the wrap of Head and Tail. */
    @Test
    void aCqRingHasThePowerOfTwoOfSlotsAtOrAboveItsEntries()
    {
        final int[][] cases = { {1, 1}, {2, 2}, {3, 4}, {5, 8}, {16, 16}, {17, 32}, {192, 256},
            {CqRingLayout.MAX_ENTRIES, CqRingLayout.MAX_ENTRIES} };
        for (final int[] c : cases)
        {
            assertEquals(c[1], CqRingLayout.slots(c[0]), "slots of " + c[0]);
            assertEquals(CqRingLayout.ENTRIES_OFFSET + c[1] * CqRingLayout.ENTRY_LENGTH, CqRingLayout.length(c[0]));
        }
        // Entries 2^32 - 1 and 0 of a ring of 5 are in the last slot and the first.
        assertEquals(CqRingLayout.ENTRIES_OFFSET + 7 * CqRingLayout.ENTRY_LENGTH,
            CqRingLayout.entryOffset(5, 0xFFFFFFFFL));
        assertEquals(CqRingLayout.ENTRIES_OFFSET, CqRingLayout.entryOffset(5, 0));
    }

    @Test
    void entriesHoldTheirFieldsAndTheirWideWordsAreAligned()
    {
        aligned8(ViTableEntry.SEND_COMPLETION_OFFSET, ViTableEntry.RECEIVE_COMPLETION_OFFSET, ViTableEntry.LENGTH,
            MemoryRegionEntry.BASE_OFFSET, MemoryRegionEntry.LENGTH_OFFSET, MemoryRegionEntry.LENGTH,
            CqTableEntry.RING_ADDRESS_OFFSET, CqTableEntry.LENGTH,
            ViplDescriptor.NEXT_ADDRESS_OFFSET, ViplDescriptor.ADDRESS_SEGMENT_OFFSET,
            ViplDescriptor.RDMA_DATA_SEGMENTS_OFFSET, ViplDescriptor.DATA_SEGMENT_LENGTH,
            ViaPacketHeader.REMOTE_ADDRESS_OFFSET + PacketHeader.LENGTH, ViaPacketHeader.LENGTH,
            ProcessTableLayout.VIA_STRUCTURES_OFFSET);
        assertTrue(ViTableEntry.DRIVER_LINE_END <= ViTableEntry.SEND_SEQUENCE_OFFSET);
        assertTrue(ViTableEntry.GENERATION_OFFSET + Integer.BYTES <= ViTableEntry.LENGTH);
        assertTrue(MemoryRegionEntry.ALLOCATION_OFFSET + Integer.BYTES <= MemoryRegionEntry.LENGTH);
        assertTrue(CqTableEntry.RING_ADDRESS_OFFSET + Long.BYTES <= CqTableEntry.LENGTH);
        assertTrue(ProcessTableLayout.VIA_STRUCTURES_OFFSET + Long.BYTES <= ProcessTableLayout.ENTRY_LENGTH);
        assertTrue(ProcessTableLayout.KIND_OFFSET >= ProcessTableLayout.VNI_BUFFER_POOL_OFFSET + Long.BYTES);

        // vipl.h: a 32-byte control segment, 16-byte address and data segments.
        assertEquals(32, ViplDescriptor.CONTROL_SEGMENT_LENGTH);
        assertEquals(16, ViplDescriptor.ADDRESS_SEGMENT_LENGTH);
        assertEquals(16, ViplDescriptor.DATA_SEGMENT_LENGTH);
        assertEquals(0, ViplDescriptor.STATUS_OFFSET % Integer.BYTES);
        assertTrue(ViplDescriptor.MAX_SEGMENTS <= 0xFFFF, "the segment count is 16 bits");
        assertEquals(32 + 16 + 3 * 16, ViplDescriptor.length(3, true));
        assertEquals(0, ViplDescriptor.STATUS_ERROR_MASK & (ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_MASK |
            ViplDescriptor.STATUS_IMMEDIATE));

        // A VIA packet's headers fit a FIFO record as a page of data does.
        assertEquals(40, ViaPacketHeader.LENGTH);
        assertTrue(PacketHeader.LENGTH + ViaPacketHeader.LENGTH <= 64);
        assertTrue(ProcessCommand.VIA_POST_SEND > ProcessCommand.BARRIER && ProcessCommand.VIA_POST_RECV > ProcessCommand.BARRIER);
    }

    @Test
    void wordsThatDifferentPartiesWriteSitOnDifferentCacheLines()
    {
        assertNotEquals(line(ViTableEntry.STATE_OFFSET), line(ViTableEntry.SEND_SEQUENCE_OFFSET),
            "the driver's line and the NIC's");
        assertNotEquals(line(ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET), line(ViaProcessStructuresLayout.ASYNC_HEAD_OFFSET));
        assertNotEquals(line(CqRingLayout.TAIL_OFFSET), line(CqRingLayout.HEAD_OFFSET));
        assertEquals(0, ViaProcessStructuresLayout.COMPLETIONS_OFFSET % Sizes.CACHE_LINE);
        for (int v = 0; v < ViaProcessStructuresLayout.MAX_VIS; v++)
        {
            assertEquals(0, ViaProcessStructuresLayout.sendCompletionOffset(v) % Sizes.CACHE_LINE);
            assertNotEquals(line(ViaProcessStructuresLayout.sendCompletionOffset(v)),
                line(ViaProcessStructuresLayout.receiveCompletionOffset(v)));
        }
        assertTrue(ViaProcessStructuresLayout.receiveCompletionOffset(ViaProcessStructuresLayout.MAX_VIS - 1) +
            ViaProcessStructuresLayout.COMPLETION_LENGTH <= ViaProcessStructuresLayout.ASYNC_RING_OFFSET);
        assertTrue(ViaProcessStructuresLayout.asyncEventOffset(ViaProcessStructuresLayout.ASYNC_EVENTS - 1) +
            ViaProcessStructuresLayout.EVENT_LENGTH <= ViaProcessStructuresLayout.LENGTH);
        assertTrue(CqRingLayout.length(CqRingLayout.MAX_ENTRIES) <= CqRingLayout.pages(CqRingLayout.MAX_ENTRIES, 1024) * 1024);
    }

    @Test
    void descriptorFlyweightReadsBackWhatWasWrittenAndCompletesWithItsStatusLast()
    {
        final UnsafeBuffer memory = new UnsafeBuffer(new byte[4 * ViplDescriptor.ALIGNMENT + 512]);
        final ViplDescriptor send = new ViplDescriptor().wrap(memory, ViplDescriptor.ALIGNMENT);
        send.reset().control(ViplDescriptor.OP_SEND | ViplDescriptor.CONTROL_IMMEDIATE).segmentCount(2)
            .immediateData(0xCAFE).length(300);
        send.dataSegment(0, ViaAddressSpace.address(5, 64), 77, 100).dataSegment(1, ViaAddressSpace.address(5, 4096), 78, 200);
        assertEquals(2, send.segmentCount());
        assertEquals(ViplDescriptor.CONTROL_SEGMENT_LENGTH, send.dataSegmentOffset(0));
        assertEquals(ViaAddressSpace.address(5, 4096), send.segmentAddress(1));
        assertEquals(78, send.segmentHandle(1));
        assertEquals(200, send.segmentLength(1));
        assertFalse(send.isDone());
        send.complete(300, 0xCAFE, ViplDescriptor.STATUS_OP_SEND);
        assertTrue(send.isDone());
        assertFalse(send.hasError());

        final ViplDescriptor write = new ViplDescriptor().wrap(memory, 3 * ViplDescriptor.ALIGNMENT);
        write.reset().control(ViplDescriptor.OP_RDMA_WRITE).segmentCount(1).addressSegment(ViaAddressSpace.address(9, 8), 99);
        write.dataSegment(0, 1234, 5, 6);
        assertEquals(ViplDescriptor.RDMA_DATA_SEGMENTS_OFFSET, write.dataSegmentOffset(0));
        assertEquals(ViaAddressSpace.address(9, 8), write.remoteAddress());
        assertEquals(99, write.remoteHandle());
        assertEquals(1234, write.segmentAddress(0));
        write.complete(0, 0, ViplDescriptor.STATUS_PROTECTION_ERROR);
        assertTrue(write.isDone() && write.hasError());
        assertEquals(ViplDescriptor.OP_SEND, send.control() & ViplDescriptor.CONTROL_OP_MASK, "untouched by its neighbour");
    }

    @Test
    void packetHeaderAndTableEntriesReadBackWhatWasWritten()
    {
        final UnsafeBuffer memory = new UnsafeBuffer(new byte[1024]);
        final ViaPacketHeader via = new ViaPacketHeader().wrap(memory, PacketHeader.LENGTH);
        via.destinationVi(3).connectionId(17).sequence(-2).op(ViaPacketHeader.OP_RDMA_WRITE)
            .flags(ViaPacketHeader.FLAG_FIRST | ViaPacketHeader.FLAG_IMMEDIATE).immediateData(5).messageLength(1 << 21)
            .messageOffset(4096).remoteHandle(8).remoteAddress(ViaAddressSpace.address(7, 12));
        assertEquals(3, via.destinationVi());
        assertEquals(17, via.connectionId());
        assertEquals(-2, via.sequence());
        assertEquals(ViaPacketHeader.OP_RDMA_WRITE, via.op());
        assertEquals(ViaPacketHeader.FLAG_FIRST | ViaPacketHeader.FLAG_IMMEDIATE, via.flags());
        assertEquals(5, via.immediateData());
        assertEquals(1 << 21, via.messageLength());
        assertEquals(4096, via.messageOffset());
        assertEquals(8, via.remoteHandle());
        assertEquals(7, ViaAddressSpace.allocation(via.remoteAddress()));
        assertEquals(12, ViaAddressSpace.offset(via.remoteAddress()));

        final ViTableEntry vi = new ViTableEntry().wrap(memory, 128);
        vi.create(2, 40, ViTableEntry.ATTRIBUTE_RDMA_WRITE, ViTableEntry.RELIABLE_DELIVERY, 4096, 1, ViTableEntry.NO_CQ,
            1L << 40, (1L << 40) + 64);
        assertEquals(ViTableEntry.STATE_IDLE, vi.state());
        assertEquals(40, vi.ptag());
        assertEquals(ViTableEntry.NO_CQ, vi.receiveCq());
        assertEquals((1L << 40) + 64, vi.receiveCompletion());
        assertFalse(vi.breakConnection(), "only a connected VI breaks");
        vi.connect(9, 0x0102, 5, 3);
        assertEquals(ViTableEntry.STATE_CONNECTED, vi.state());
        assertTrue(vi.breakConnection());
        assertEquals(ViTableEntry.STATE_ERROR, vi.state());
        final int generation = vi.generation();
        vi.publishState(ViTableEntry.STATE_FREE);
        vi.create(2, 40, 0, ViTableEntry.UNRELIABLE, 4096, 1, ViTableEntry.NO_CQ, 1L << 40, (1L << 40) + 64);
        assertEquals(generation + 1, vi.generation(), "the same owner's next VI in the entry is another generation");
        assertEquals(0, vi.connectionId());

        final MemoryRegionEntry region = new MemoryRegionEntry().wrap(memory, 512);
        final int handle = MemoryRegionEntry.handle(MemoryRegionEntry.MAX_GENERATION, 1234);
        assertEquals(1234, MemoryRegionEntry.slot(handle));
        assertEquals(MemoryRegionEntry.MAX_GENERATION, MemoryRegionEntry.generation(handle));
        assertEquals(1, MemoryRegionEntry.nextGeneration(MemoryRegionEntry.MAX_GENERATION), "0 is never a generation");
        region.publish(handle, 1, 40, 0, ViaAddressSpace.address(7, 100), 5000, 0, 2, 7);
        assertTrue(region.isHandle(handle));
        assertFalse(region.isHandle(MemoryRegionEntry.handle(1, 1234)), "another generation of the slot");
        assertTrue(region.contains(ViaAddressSpace.address(7, 100), 5000));
        assertFalse(region.contains(ViaAddressSpace.address(7, 101), 5000));
        assertFalse(region.contains(ViaAddressSpace.address(7, 99), 1));
        region.clear();
        assertFalse(region.isHandle(handle));

        final CqTableEntry cq = new CqTableEntry().wrap(memory, 576);
        assertTrue(cq.isFree());
        cq.publish(0, 16, 8192, 3);
        assertTrue(cq.isOwnedBy(0));
        assertEquals(16, cq.entries());
        assertEquals(3, cq.generation());
        cq.moveRing(64, 16384);
        assertTrue(cq.isOwnedBy(0), "a resize keeps the owner");
        assertEquals(64, cq.entries());
        assertEquals(16384, cq.ringAddress());
        assertEquals(3, cq.generation(), "and the generation");
        cq.clear();
        assertEquals(-1, cq.owner());
    }

    /**
     * The NIC's second look at an entry whose words it read: a CQ entry destroyed and made again by the
     * same owner, and a VI entry whose State changed, are no longer the ones it first looked at.
     */
    @Test
    void anEntryMadeAgainIsNotStillTheOneFirstLookedAt()
    {
        final UnsafeBuffer memory = new UnsafeBuffer(new byte[2 * CqTableEntry.LENGTH + ViTableEntry.LENGTH]);
        final CqTableEntry cq = new CqTableEntry().wrap(memory, 0);
        cq.publish(3, 16, 4096, 1);
        final int generation = cq.generation();
        assertTrue(cq.isStill(3, generation), "untouched");
        assertFalse(cq.isStill(4, generation), "another owner's");
        cq.clear();
        assertFalse(cq.isStill(3, generation), "destroyed");
        cq.publish(3, 16384, 8192, generation + 1);
        assertFalse(cq.isStill(3, generation), "made again by the same owner: another Generation");
        assertTrue(cq.isStill(3, generation + 1));

        final ViTableEntry vi = new ViTableEntry().wrap(memory, 2 * CqTableEntry.LENGTH);
        vi.create(3, 1, 0, ViTableEntry.UNRELIABLE, 1024, ViTableEntry.NO_CQ, ViTableEntry.NO_CQ, 64, 128);
        vi.connect(9, 1, 2, 3);
        final int state = vi.state();
        assertTrue(vi.isStill(state));
        vi.publishState(ViTableEntry.STATE_FREE);
        assertFalse(vi.isStill(state), "freed");
        final int before = vi.generation();
        vi.create(3, 1, 0, ViTableEntry.UNRELIABLE, 1024, ViTableEntry.NO_CQ, ViTableEntry.NO_CQ, 64, 128);
        assertTrue(vi.isStill(ViTableEntry.STATE_IDLE) && vi.generation() == before + 1,
            "a newer VI in the entry: the same State, and another Generation for the caller to compare");
    }

    /**
     * A NIC's tables with page translations 10 (page 50), 11 (page 7) and 12 (not page-aligned, as a
     * word past those the driver wrote could be), and region entry 3.
     */
    private record RegionTables(ViaTablesLayout via, int page, UnsafeBuffer sdram, MemoryRegionEntry region)
    {
        static RegionTables withTranslations()
        {
            final ClusterParameters params = parameters().get(2);
            final NicSdramLayout layout = new NicSdramLayout(params);
            final ViaTablesLayout via = layout.via();
            final int page = params.pageSize();
            final UnsafeBuffer sdram = new UnsafeBuffer(new byte[(int)layout.managedMemoryOffset()]);
            sdram.putLong((int)via.translationOffset(10), 50L * page);
            sdram.putLong((int)via.translationOffset(11), 7L * page);
            sdram.putLong((int)via.translationOffset(12), 9L * page + 8);
            return new RegionTables(via, page, sdram, new MemoryRegionEntry().wrap(sdram, (int)via.regionOffset(3)));
        }
    }

    @Test
    void physicalAddressesComeFromTheRegionsPageTranslations()
    {
        final RegionTables tables = RegionTables.withTranslations();
        final ViaTablesLayout via = tables.via();
        final int page = tables.page();
        final UnsafeBuffer sdram = tables.sdram();
        final MemoryRegionEntry region = tables.region();
        final long base = ViaAddressSpace.address(4, page + 100);
        region.publish(MemoryRegionEntry.handle(1, 3), 0, 1, 0, base, page, 10, 2, 4);
        assertEquals(50L * page + 100, region.physicalAddress(sdram, via, base, page));
        assertEquals(50L * page + page - 1, region.physicalAddress(sdram, via, base + page - 101, page));
        assertEquals(7L * page, region.physicalAddress(sdram, via, base + page - 100, page), "the second page");
    }

    /**
     * Words of an entry that do not hold together, as the NIC may read them while the driver clears the
     * entry and publishes another region in it, translate to nothing: the Base of a region at offset 100
     * of its page with the words of one at offset 0x800 would name a byte in the middle of the page the
     * Protection Table check looks at, and a copy from there would end in the next page.
     */
    @Test
    void wordsThatDoNotHoldTogetherTranslateToNothing()
    {
        final RegionTables tables = RegionTables.withTranslations();
        final ViaTablesLayout via = tables.via();
        final int page = tables.page();
        final UnsafeBuffer sdram = tables.sdram();
        final MemoryRegionEntry region = tables.region();
        final long address = ViaAddressSpace.address(4, 0x100);

        // A Base at 0x800 of the allocation's first page, with the address a descriptor gave for the
        // region at 0x100: before the page, so no translation.
        region.publish(MemoryRegionEntry.handle(1, 3), 0, 1, 0, ViaAddressSpace.address(4, 0x800), page, 10, 2, 4);
        assertEquals(MemoryRegionEntry.NO_TRANSLATION, region.physicalAddress(sdram, via, address, page));
        // The address on the region's second page, whose translation word (12) is not page-aligned, as
        // a word past the translations the driver wrote could be.
        region.publish(MemoryRegionEntry.handle(2, 3), 0, 1, 0, ViaAddressSpace.address(4, 0x100) - page, 2L * page,
            11, 2, 4);
        assertEquals(MemoryRegionEntry.NO_TRANSLATION, region.physicalAddress(sdram, via, address, page),
            "a translation that is not page-aligned");
        // Pages: 1, so the second page of the region is outside it.
        region.publish(MemoryRegionEntry.handle(3, 3), 0, 1, 0, ViaAddressSpace.address(4, 0), 2L * page, 10, 1, 4);
        assertEquals(MemoryRegionEntry.NO_TRANSLATION, region.physicalAddress(sdram, via, address + page, page),
            "a page past the region's Pages");
        // A First translation at the end of the table.
        region.publish(MemoryRegionEntry.handle(4, 3), 0, 1, 0, ViaAddressSpace.address(4, 0), 2L * page,
            via.translationEntries() - 1, 2, 4);
        assertEquals(MemoryRegionEntry.NO_TRANSLATION, region.physicalAddress(sdram, via, address + page, page),
            "a translation past the table");
    }

    @Test
    void resultCodesAreVipl10s()
    {
        assertEquals(0, ViplResult.SUCCESS.code());
        assertEquals(1, ViplResult.NOT_DONE.code());
        assertEquals(9, ViplResult.INVALID_PTAG.code());
        assertEquals(12, ViplResult.INVALID_STATE.code());
        assertEquals(14, ViplResult.NO_MATCH.code());
        for (final ViplResult result : ViplResult.values())
        {
            assertEquals(result, ViplResult.of(result.code()));
        }
    }

    @Test
    void diagramOffsetsAreTheClassesConstants() throws IOException, IllegalAccessException
    {
        int checked = 0;
        for (final Class<?> layout : List.of(ViplDescriptor.class, ViaPacketHeader.class, ViTableEntry.class,
            MemoryRegionEntry.class, CqTableEntry.class, ViaProcessStructuresLayout.class, CqRingLayout.class))
        {
            final Set<Long> constants = LayoutDiagrams.constants(layout);
            final List<Long> markers = LayoutDiagrams.markers(layout);
            assertFalse(markers.isEmpty(), layout.getSimpleName() + " has a diagram with offsets");
            for (final long offset : markers)
            {
                assertTrue(constants.contains(offset), layout.getSimpleName() + "'s diagram marks byte " + offset +
                    ", which none of its constants is");
                checked++;
            }
        }
        assertTrue(checked >= 20);
    }

    private static int line(final int offset)
    {
        return offset / Sizes.CACHE_LINE;
    }

    private static void aligned8(final int... offsets)
    {
        for (final int offset : offsets)
        {
            assertEquals(0, offset % Long.BYTES, "offset " + offset + " is not 8-byte aligned");
        }
    }
}
