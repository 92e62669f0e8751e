package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.CqTableEntry;
import org.qnix.abi.MappedFile;
import org.qnix.abi.MemoryRegionEntry;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViaTablesLayout;
import org.qnix.abi.ViplResult;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.NicAttributes;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.ViState;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * libvipl's resources against a real cluster (the daemon's driver, firmware JVMs), issue 14 stage 2:
 * opening a NIC, ptags, memory registered once and twice, CQs and VIs, each refusal with VIPL's code,
 * QNIX and VIPL in one JVM, and a VIA process killed with -9 leaving nothing in the NIC's VIA tables.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ViplResourcesTest extends ViplClusterTest
{

    @Test
    void memoryIsRegisteredTwiceDeregisteredAndOnlyThenFreed() throws Exception
    {
        try (ViplNic nic = Vipl.openNic("/dev/qnix/1-0", dir.name()))
        {
            final NicAttributes attributes = nic.query();
            assertEquals("1-0", attributes.name());
            assertEquals(1, attributes.nicAddress()[0]);
            assertEquals(nic.parameters().maxMessageBytes(), attributes.maxTransferSize());
            assertTrue(attributes.maxVi() > 0 && attributes.maxSegmentsPerDesc() > 0 && attributes.maxCq() > 0);

            final int page = nic.parameters().pageSize();
            final ProtectionTag ptag = nic.createPtag();
            final ViplMemory memory = nic.allocate(2 * page);
            memory.buffer().putLong(page, 0x1234_5678_9ABCL);
            final MemoryRegion whole = nic.registerMem(memory, 0, 2 * page, new MemoryAttributes(ptag, true, false));
            final MemoryRegion again = nic.registerMem(memory, 0, 2 * page, new MemoryAttributes(ptag, false, true));
            assertNotEquals(whole.handle(), again.handle());
            assertEquals(memory.address(0), whole.address());
            try (NicTables tables = new NicTables(dir, 1))
            {
                assertEquals(2, tables.regions());
                final MemoryRegionEntry entry = tables.region(whole.handle());
                assertTrue(entry.isHandle(whole.handle()));
                assertEquals(ptag.value(), entry.ptag());
                assertEquals(ViTableEntry.ATTRIBUTE_RDMA_WRITE, entry.attributes());
                // The translations lead to the very bytes this process wrote.
                final long physical = entry.physicalAddress(tables.sdram, tables.layout.via(), whole.address() + page, page);
                try (MappedFile host = MappedFile.mapExisting(dir.hostMemory(new NicCoordinates(1, 0)), physical, 8))
                {
                    assertEquals(0x1234_5678_9ABCL, host.buffer().getLong(0));
                }
            }

            assertEquals(ViplResult.INVALID_STATE, assertThrows(ViplException.class, memory::close).result());
            whole.setAttributes(new MemoryAttributes(ptag, false, false));
            assertEquals(new MemoryAttributes(ptag, false, false), whole.query());
            whole.close();
            assertEquals(ViplResult.INVALID_STATE, assertThrows(ViplException.class, memory::close).result(),
                "still registered once");
            again.close();
            memory.close();
            ptag.close();
            try (NicTables tables = new NicTables(dir, 1))
            {
                assertEquals(0, tables.regions());
            }
        }
    }

    @Test
    void badRangesPtagsAndStatesAreRefusedWithVipl10Codes() throws Exception
    {
        try (ViplNic nic = Vipl.openNic("0-0", dir.name()))
        {
            final int page = nic.parameters().pageSize();
            final ProtectionTag ptag = nic.createPtag();
            final ViplMemory memory = nic.allocate(page);
            final MemoryAttributes plain = new MemoryAttributes(ptag, false, false);
            assertEquals(ViplResult.INVALID_PARAMETER, code(() -> nic.registerMem(memory, 1, page, plain)));
            assertEquals(ViplResult.INVALID_PARAMETER, code(() -> nic.registerMem(memory, 0, 0, plain)));

            final ProtectionTag gone = nic.createPtag();
            gone.close();
            assertEquals(ViplResult.INVALID_PTAG,
                code(() -> nic.registerMem(memory, 0, page, new MemoryAttributes(gone, false, false))));
            assertEquals(ViplResult.INVALID_PTAG, code(() -> nic.createVi(
                new ViAttributes(Reliability.UNRELIABLE, 0, gone, false, false), null, null)));

            final MemoryRegion region = nic.registerMem(memory, 0, page, plain);
            assertEquals(ViplResult.ERROR_RESOURCE, code(ptag::close), "a region uses it");
            final CompletionQueue cq = nic.createCq(16);
            final Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_RECEPTION, 1024, ptag, true, true), cq, null);
            assertEquals(ViState.IDLE, vi.query().state());
            assertEquals(ViplResult.ERROR_RESOURCE, code(cq::close), "a VI's queue reports to it");
            assertEquals(ViplResult.INVALID_MTU, code(() -> nic.createVi(
                new ViAttributes(Reliability.UNRELIABLE, nic.parameters().maxMessageBytes() + 1, ptag, false, false),
                null, null)));
            assertEquals(ViplResult.INVALID_RDMAREAD, code(() -> nic.createVi(
                new ViAttributes(Reliability.UNRELIABLE, 0, ptag, false, true), null, null)));
            assertEquals(ViplResult.INVALID_PARAMETER, code(() -> nic.createCq(0)));

            try (NicTables tables = new NicTables(dir, 0))
            {
                assertEquals(1, tables.vis());
                assertEquals(1, tables.cqs());
                assertEquals(ViTableEntry.STATE_IDLE, tables.vi(vi.index()).state());
            }
            vi.close();
            cq.close();
            region.close();
            ptag.close();
            memory.close();
            try (NicTables tables = new NicTables(dir, 0))
            {
                assertEquals(0, tables.vis() + tables.cqs() + tables.regions());
            }
        }
        assertEquals(ViplResult.INVALID_PARAMETER, code(() -> Vipl.openNic("9-9", dir.name())));
        assertEquals(ViplResult.INVALID_PARAMETER, code(() -> Vipl.openNic("nic", dir.name())));
    }

    @Test
    void closingTheNicReleasesEverythingAndLeavesItsResourcesClosed() throws Exception
    {
        final ViplNic nic = Vipl.openNic("1-0", dir.name());
        final ProtectionTag ptag = nic.createPtag();
        final ViplMemory memory = nic.allocate(1000);
        final MemoryRegion region = nic.registerMem(memory, 0, 1000, new MemoryAttributes(ptag, false, false));
        final CompletionQueue cq = nic.createCq(4);
        final Vi vi = nic.createVi(new ViAttributes(Reliability.UNRELIABLE, 0, ptag, false, false), cq, cq);
        nic.close();
        assertTrue(nic.isClosed());
        try (NicTables tables = new NicTables(dir, 1))
        {
            assertEquals(0, tables.vis() + tables.regions() + tables.cqs());
            assertEquals(List.of(), tables.registeredKinds());
        }
        // Their close after the NIC's is nothing more to do.
        vi.close();
        cq.close();
        region.close();
        memory.close();
        ptag.close();
        assertEquals(ViplResult.INVALID_STATE, code(nic::createPtag));
        nic.close();
    }

    @Test
    void oneJvmHoldsAQnixAndAViplRegistrationAtOnce() throws Exception
    {
        try (Qnix qnix = Qnix.options().name(new ProcessName(711, 0)).group(711, 1).cluster(dir.name()).node("0-0").init();
            ViplNic nic = Vipl.openNic("0-0", dir.name()))
        {
            try (QnixBuffer buffer = qnix.allocateBuffer(100))
            {
                buffer.lock();
            }
            final ProtectionTag ptag = nic.createPtag();
            final ViplMemory memory = nic.allocate(100);
            nic.registerMem(memory, 0, 100, new MemoryAttributes(ptag, false, false));
            try (NicTables tables = new NicTables(dir, 0))
            {
                assertEquals(List.of(ProcessTableLayout.KIND_QNIX, ProcessTableLayout.KIND_VIA), tables.registeredKinds());
            }
        }
        try (NicTables tables = new NicTables(dir, 0))
        {
            assertEquals(List.of(), tables.registeredKinds());
            assertEquals(0, tables.regions());
        }
    }

    @Test
    void aViaProcessKilledWithSigkillLeavesNothingInTheNicTables() throws Exception
    {
        final Process worker = ChildCommand.start(ViplResourcesWorker.class, dir.name(), "1-0");
        try
        {
            final BufferedReader out = ChildCommand.output(worker);
            final StringBuilder seen = new StringBuilder();
            String line;
            while (null != (line = out.readLine()) && !line.equals("ready"))
            {
                seen.append(line).append('\n');
            }
            assertEquals("ready", line, "the worker said: " + seen);
            try (NicTables tables = new NicTables(dir, 1))
            {
                assertEquals(2, tables.vis());
                assertEquals(2, tables.regions());
                assertEquals(1, tables.cqs());
                assertEquals(List.of(ProcessTableLayout.KIND_VIA), tables.registeredKinds());
            }
            assertTrue(worker.toHandle().destroyForcibly(), "kill -9");
            TestClusters.await("the killed VIA process's VIs, regions, CQs and entry gone", () ->
            {
                try (NicTables tables = new NicTables(dir, 1))
                {
                    return 0 == tables.vis() + tables.regions() + tables.cqs() && tables.registeredKinds().isEmpty();
                }
            });
        }
        finally
        {
            worker.destroyForcibly();
            worker.waitFor();
        }
    }

    private static ViplResult code(final Runnable call)
    {
        return assertThrows(ViplException.class, call::run).result();
    }

    /** A NIC's SDRAM mapped by the test, read as the NIC reads it: the VIA tables and the Process Table. */
    private static final class NicTables implements AutoCloseable
    {
        final MappedFile file;
        final UnsafeBuffer sdram;
        final NicSdramLayout layout;
        final ClusterParameters params;

        NicTables(final ClusterDirectory dir, final int node)
        {
            params = ClusterProperties.read(dir.propertiesFile()).orElseThrow().parameters();
            layout = new NicSdramLayout(params);
            file = MappedFile.mapExisting(dir.nicSdram(NicCoordinates.ofIndex(node, params.torusWidth())), 0,
                layout.managedMemoryOffset());
            sdram = file.buffer();
        }

        int vis()
        {
            final ViaTablesLayout via = layout.via();
            int count = 0;
            for (int i = 0; i < via.viEntries(); i++)
            {
                count += ViTableEntry.STATE_FREE == vi(i).state() ? 0 : 1;
            }
            return count;
        }

        ViTableEntry vi(final int vi)
        {
            return new ViTableEntry().wrap(sdram, (int)layout.via().viOffset(vi));
        }

        int regions()
        {
            final ViaTablesLayout via = layout.via();
            int count = 0;
            for (int i = 0; i < via.regionEntries(); i++)
            {
                count += 0 == new MemoryRegionEntry().wrap(sdram, (int)via.regionOffset(i)).handle() ? 0 : 1;
            }
            return count;
        }

        MemoryRegionEntry region(final int handle)
        {
            return new MemoryRegionEntry().wrap(sdram, (int)layout.via().regionOffset(MemoryRegionEntry.slot(handle)));
        }

        int cqs()
        {
            final ViaTablesLayout via = layout.via();
            int count = 0;
            for (int i = 0; i < via.cqEntries(); i++)
            {
                count += new CqTableEntry().wrap(sdram, (int)via.cqOffset(i)).isFree() ? 0 : 1;
            }
            return count;
        }

        /** @return the Kind of every Process Table entry with a PID, in entry order. */
        List<Integer> registeredKinds()
        {
            final java.util.List<Integer> kinds = new java.util.ArrayList<>();
            for (int i = 0; i < params.maxProcessesPerNic(); i++)
            {
                final int entry = (int)layout.processEntryOffset(i);
                if (0 != sdram.getIntVolatile(entry + ProcessTableLayout.PID_OFFSET))
                {
                    kinds.add(sdram.getInt(entry + ProcessTableLayout.KIND_OFFSET));
                }
            }
            return kinds;
        }

        public void close()
        {
            file.close();
        }
    }
}
