package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * The binary contract's arithmetic, without a cluster: the NIC SDRAM segments follow each other in the
 * thesis' order without overlapping, every structure's fields fit inside it, and the words other
 * processes read or write with volatile or ordered accesses are naturally aligned (a 64-bit word that
 * straddled two cache lines could be read torn).
 */
class LayoutsTest
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
    void shortFlowIsAParameterKeptInClusterProperties()
    {
        assertEquals(ShortFlow.EAGER, ClusterParameters.builder().build().shortFlow(), "eager by default");
        final ClusterParameters permission = ClusterParameters.builder().shortFlow(ShortFlow.PERMISSION).build();
        final java.util.Properties props = new java.util.Properties();
        props.putAll(permission.toMap());
        assertEquals("permission", props.getProperty("shortFlow"));
        assertEquals(permission, ClusterParameters.fromProperties(props));
        assertEquals(ShortFlow.EAGER, ClusterParameters.fromProperties(new java.util.Properties()).shortFlow(),
            "a cluster.properties written before the parameter existed");
        assertEquals(ShortFlow.PERMISSION, ShortFlow.parse("Permission"));
        final IllegalArgumentException bad =
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> ShortFlow.parse("lazy"));
        assertTrue(bad.getMessage().contains("eager or permission"), bad.getMessage());
    }

    @Test
    void sdramSegmentsFollowEachOtherWithoutOverlapping()
    {
        for (final ClusterParameters params : parameters())
        {
            final NicSdramLayout layout = new NicSdramLayout(params);
            final String what = params.toString();
            final int p = params.maxProcessesPerNic();
            assertTrue(layout.vnisOffset() >= FileDescriptorBlock.LENGTH, what);
            assertEquals(0, layout.vnisOffset() % params.pageSize(), "VNIs are mapped by processes: page aligned");
            assertEquals(0, layout.vniLength() % params.pageSize(), what);
            assertTrue(layout.vniOffset(p - 1) + layout.vniLength() <= layout.processTableOffset(), what);
            assertTrue(layout.processEntryOffset(p - 1) + ProcessTableLayout.ENTRY_LENGTH <=
                layout.driverCommandQueueOffset(), what);
            assertTrue(layout.driverCommandOffset(params.driverCommandQueueEntries() - 1) +
                DriverCommandQueueLayout.ENTRY_LENGTH <= layout.driverInfoOffset(), what);
            assertTrue(layout.driverInfoOffset() < layout.controlProgramOffset(), what);
            assertTrue(layout.controlProgramOffset() + ControlProgramLayout.LENGTH <= layout.nicTableOffset(), what);
            assertTrue(layout.nicTableOffset() + NicTableLayout.length(params) <= layout.nameTableOffset(), what);
            assertTrue(layout.nameTableOffset() + NameTableLayout.length(params) <= layout.groupTableOffset(), what);
            assertTrue(layout.groupTableOffset() + GroupTableLayout.length(params) <= layout.protectionTableOffset(),
                what);
            final long lastPage = params.hostMemoryBytes() - params.pageSize();
            assertTrue(layout.protectionEntryOffset(lastPage) + ProtectionTableLayout.ENTRY_LENGTH <=
                layout.managedMemoryOffset(), what);
            assertTrue(layout.managedMemoryOffset() + params.maxMessageBytes() <= params.sdramBytes(), what);
            for (final long shared : new long[] {layout.processTableOffset(), layout.driverCommandQueueOffset(),
                layout.controlProgramOffset(), layout.nameTableOffset(), layout.groupTableOffset(),
                layout.protectionTableOffset(), layout.managedMemoryOffset()})
            {
                assertEquals(0, shared % Long.BYTES, "segment at " + shared + " is 8-byte aligned");
            }
        }
    }

    @Test
    void fieldsFitTheirStructuresAndSharedWordsAreAligned()
    {
        // Control Program segment: the heartbeat and the DMA epoch are 64-bit words read by the driver.
        aligned8(ControlProgramLayout.HEARTBEAT_COUNTER_OFFSET, ControlProgramLayout.HEARTBEAT_TIME_OFFSET,
            ControlProgramLayout.DUTY_CYCLES_OFFSET, ControlProgramLayout.PID_OFFSET,
            ControlProgramLayout.START_TIME_OFFSET, ControlProgramLayout.PROCESS_START_TICKS_OFFSET);
        assertTrue(ControlProgramLayout.PROCESS_START_TICKS_OFFSET + Long.BYTES <= ControlProgramLayout.LENGTH);

        // Process Table entry: its addresses are 64-bit words the NIC reads.
        aligned8(ProcessTableLayout.SEND_DOORBELLS_OFFSET, ProcessTableLayout.RECEIVE_DOORBELLS_OFFSET,
            ProcessTableLayout.PROCESS_CQ_HEAD_OFFSET, ProcessTableLayout.HPS_ADDRESS_OFFSET,
            ProcessTableLayout.VNI_BUFFER_POOL_OFFSET);
        assertTrue(ProcessTableLayout.VNI_BUFFER_POOL_OFFSET + Long.BYTES <= ProcessTableLayout.ENTRY_LENGTH);

        // Send and Receive Contexts, Context Region descriptors, Command Queue entries.
        aligned8(ContextLayout.LEN_OFFSET, ContextLayout.COMPLETION_LENGTH_OFFSET, ContextLayout.CONTEXT_LENGTH);
        assertTrue(ContextLayout.COMPLETION_LENGTH_OFFSET + Long.BYTES <= ContextLayout.CONTEXT_LENGTH);
        aligned8(ContextRegionLayout.ADDRESS_OFFSET, ContextRegionLayout.DESCRIPTOR_LENGTH);
        assertEquals(16, ContextRegionLayout.DESCRIPTOR_LENGTH, "thesis 3.3.1: 16-byte descriptors");
        assertEquals(16, CommandQueueLayout.ENTRY_LENGTH, "DESIGN.md 3.1: 16-byte Command Queue entries");
        assertEquals(0, CommandQueueLayout.COMMAND_OFFSET % Integer.BYTES);

        // System messages: each fits the largest payload, and their 64-bit operation ids are aligned.
        for (final int length : new int[] {SystemMessage.NEW_PROCESS_LENGTH, SystemMessage.NEW_PROCESS_ACK_LENGTH,
            SystemMessage.NEW_GROUP_LENGTH, SystemMessage.NEW_GROUP_ACK_LENGTH, SystemMessage.BARRIER_LENGTH,
            SystemMessage.DELETE_PROCESS_LENGTH, SystemMessage.PERMISSION_REQUEST_LENGTH,
            SystemMessage.PERMISSION_REPLY_LENGTH, SystemMessage.TRANSFER_ABORT_LENGTH,
            SystemMessage.EAGER_SHORT_REPLY_LENGTH})
        {
            assertTrue(length <= SystemMessage.MAX_PAYLOAD_LENGTH, length + " bytes");
        }
        aligned8(SystemMessage.REQUEST_OPERATION_OFFSET, SystemMessage.REPLY_OPERATION_OFFSET, PacketHeader.LENGTH);
        // Eager_Short: the Permission_Request's fields, then the data (the diagram in SystemMessage).
        assertEquals(48, SystemMessage.EAGER_SHORT_DATA_OFFSET);
        assertEquals(SystemMessage.PERMISSION_REQUEST_LENGTH + 7, SystemMessage.eagerShortLength(7));
        assertTrue(PacketHeader.LENGTH + SystemMessage.eagerShortLength(ClusterParameters.MAX_PAGE_SIZE) <=
            ClusterParameters.MAX_PAGE_SIZE + 64, "an Eager_Short fits a FIFO record as a data packet of a page does");
        assertTrue(SystemMessage.STATUS_ASK_PERMISSION < Doorbell.ERROR_BASE &&
            SystemMessage.STATUS_ASK_PERMISSION != Doorbell.DONE, "not a doorbell code");
        assertEquals(16, PacketHeader.LENGTH, "DESIGN.md 3.3: the thesis' 16-byte header");
    }

    @Test
    void wordsThatDifferentPartiesWriteSitOnDifferentCacheLines()
    {
        // Host Process Structures: the process's Command Queue Tail and hints, the NIC's Head.
        assertTrue(line(HostProcessStructuresLayout.CQ_TAIL_OFFSET) != line(HostProcessStructuresLayout.CQ_HEAD_OFFSET));
        assertEquals(line(HostProcessStructuresLayout.CQ_TAIL_OFFSET),
            line(HostProcessStructuresLayout.NEXT_RECEIVE_CONTEXT_OFFSET + Integer.BYTES - 1));
        assertTrue(line(HostProcessStructuresLayout.CQ_HEAD_OFFSET) < line(HostProcessStructuresLayout.DOORBELL_ARRAY_OFFSET));
        assertEquals(0, HostProcessStructuresLayout.DOORBELL_ARRAY_OFFSET % Sizes.CACHE_LINE);
        assertEquals(Sizes.CACHE_LINE, HostProcessStructuresLayout.DOORBELL_LENGTH, "a doorbell per cache line");
        assertTrue(HostProcessStructuresLayout.DOORBELL_WAITERS_OFFSET + Integer.BYTES <=
            HostProcessStructuresLayout.DOORBELL_LENGTH);

        // NIC Status: the NIC's Driver Command Queue Head, the driver's Tail and hints.
        assertTrue(line(HostMemoryLayout.NIC_STATUS_DCQ_HEAD_OFFSET) != line(HostMemoryLayout.NIC_STATUS_DCQ_TAIL_OFFSET));
        assertTrue(HostMemoryLayout.NIC_STATUS_FREE_PAGES_OFFSET + Integer.BYTES <= HostMemoryLayout.NIC_STATUS_LENGTH);
        for (final ClusterParameters params : parameters())
        {
            final HostMemoryLayout host = new HostMemoryLayout(params);
            assertEquals(0, host.nicStatusOffset() % Sizes.CACHE_LINE);
            assertEquals(0, host.driverDoorbellArrayOffset() % Sizes.CACHE_LINE, "the NIC's Driver Doorbells");
            assertTrue(host.processFlagOffset(params.maxProcessesPerNic() - 1) + Integer.BYTES <=
                host.driverDoorbellArrayOffset());
            final int contexts = params.contextsPerProcess();
            assertTrue(HostProcessStructuresLayout.length(contexts) <=
                HostProcessStructuresLayout.pages(contexts, params.pageSize()) * params.pageSize());
        }
    }

    /**
     * The byte offsets written at the right of a layout diagram ({@code +---+ 128}) are offsets the class
     * defines, so a diagram cannot silently drift from the constants.
     */
    @Test
    void diagramOffsetsAreTheClassesConstants() throws IOException, IllegalAccessException
    {
        int checked = 0;
        for (final Class<?> layout : List.of(HostProcessStructuresLayout.class, HostMemoryLayout.class,
            CountersLayout.class, NicSdramLayout.class, RxFifoLayout.class, VniLayout.class))
        {
            final Set<Long> constants = LayoutDiagrams.constants(layout);
            final List<Long> markers = LayoutDiagrams.markers(layout);
            for (final long offset : markers)
            {
                assertTrue(constants.contains(offset), layout.getSimpleName() + "'s diagram marks byte " + offset +
                    ", which none of its constants is");
                checked++;
            }
        }
        assertTrue(checked >= 4, "the diagrams have offset markers to check");
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
