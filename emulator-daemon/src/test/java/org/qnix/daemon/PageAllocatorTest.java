package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.HostClock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessStartTicks;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ProtectionTableLayout;
import org.qnix.abi.VniLayout;
import org.qnix.firmware.NodeImage;

/**
 * The page allocator and the per-process protection table over a real mapped node image: scattered
 * pages, the Translation and Protection Table entries the NIC checks (DESIGN.md 8, item 10), and the
 * Buffer Pool written into the VNI (thesis 3.6).
 */
class PageAllocatorTest
{
    private static final NicCoordinates NODE = new NicCoordinates(0, 0);
    private static final int OWNER = 2;
    private static final int OTHER = 3;

    @TempDir
    Path base;

    private ClusterParameters params;
    private NodeImage image;
    private AtomicBuffer sdram;
    private AtomicBuffer host;
    private NicSdramLayout layout;
    private PageAllocator allocator;
    private int pageSize;

    @BeforeEach
    void setUp()
    {
        params = ClusterParameters.builder().torus(1, 1).processes(4).contexts(4).commandQueueEntries(8)
            .descriptorsPerRegion(5).shortThreshold(64).pageSize(4096).bufferPoolPages(6).nameTableEntries(16).groupTableEntries(4)
            .sdramBytes(1 << 20).hostMemoryBytes(256 << 10).rxFifoBytes(1 << 16).build();
        image = NodeImage.create(new ClusterDirectory(base, "x"), params, NODE);
        sdram = image.sdram();
        host = image.hostMemory();
        layout = image.sdramLayout();
        pageSize = params.pageSize();
        allocator = new PageAllocator(host, image.hostLayout(), sdram, layout, image.wakeUp());
    }

    @AfterEach
    void tearDown()
    {
        if (null != image)
        {
            image.close();
        }
    }

    @Test
    void scatteredPagesAreNeverPhysicallyAdjacentInMappingOrder()
    {
        final PageAllocator.Region region = allocator.allocateScattered(OWNER, 5);
        assertNotNull(region);
        assertEquals(5, region.pages());
        final Set<Long> distinct = new HashSet<>();
        for (int i = 0; i < region.pages(); i++)
        {
            assertEquals(0, region.address(i) % pageSize, "page aligned");
            assertTrue(region.address(i) >= image.hostLayout().pagePoolOffset());
            assertTrue(distinct.add(region.address(i)));
            if (i > 0)
            {
                assertNotEquals(region.address(i - 1) + pageSize, region.address(i), "page " + i);
            }
        }
    }

    @Test
    void contiguousPagesAreOneRun()
    {
        final PageAllocator.Region region = allocator.allocateContiguous(OWNER, 4);
        for (int i = 1; i < region.pages(); i++)
        {
            assertEquals(region.address(0) + (long)i * pageSize, region.address(i));
        }
    }

    @Test
    void protectionEntriesAreWrittenLockedAndCleared()
    {
        final int nicPid = ProcessTableLayout.nicPid(OWNER);
        final PageAllocator.Region scattered = allocator.allocateScattered(OWNER, 3);
        final PageAllocator.Region contiguous = allocator.allocateContiguous(OWNER, 2);
        assertEntries(scattered, nicPid, 0);
        assertEntries(contiguous, nicPid, 0);

        allocator.protect(scattered, 2);
        assertEntries(scattered, nicPid, 2);
        assertEntries(contiguous, nicPid, 0);

        assertTrue(allocator.free(OWNER, scattered.id()));
        assertEntries(scattered, 0, 0);
        assertEntries(contiguous, nicPid, 0);
        assertFalse(allocator.free(OWNER, scattered.id()), "a region is freed once");
        assertFalse(allocator.free(OTHER, contiguous.id()), "only by its owner");
        assertThrows(IllegalStateException.class, () -> allocator.protect(scattered, 1));
    }

    /**
     * Issue 17, item 1: a page taken back goes to nobody until the NIC has ended the duty cycle that
     * was in progress when its entry was cleared, so a DMA that checked the page just before cannot
     * copy the next owner's data. Here the test plays the running NIC's duty cycle count.
     */
    @Test
    void aFreedPageWaitsForTheNicsDutyCycleBeforeAnotherOwnerGetsIt() throws Exception
    {
        final int control = (int)layout.controlProgramOffset();
        sdram.putIntVolatile(control + ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
        sdram.putLongVolatile(control + ControlProgramLayout.DUTY_CYCLES_OFFSET, 40);
        final int total = allocator.freePages();
        final PageAllocator.Region all = allocator.allocateScattered(OWNER, total);
        assertNotNull(all);
        assertTrue(allocator.free(OWNER, all.id()));
        assertEquals(total, allocator.freePages(), "taken-back pages count as free");
        assertEquals(total, allocator.pagesWaitingForNic());
        assertEntries(all, 0, 0);

        // The NIC does not end its cycle: the allocation waits, then is refused.
        assertNull(allocator.allocateScattered(OTHER, 1));
        assertNull(allocator.allocateContiguous(OTHER, 1));

        // Another owner asks while the NIC is in its cycle; the cycle ends; the pages go to the new owner.
        final java.util.concurrent.CompletableFuture<PageAllocator.Region> waiting =
            java.util.concurrent.CompletableFuture.supplyAsync(() -> allocator.allocateScattered(OTHER, 2));
        Thread.sleep(50);
        sdram.putLongVolatile(control + ControlProgramLayout.DUTY_CYCLES_OFFSET, 41);
        final PageAllocator.Region next = waiting.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertNotNull(next);
        assertEquals(0, allocator.pagesWaitingForNic());
        assertEntries(next, ProcessTableLayout.nicPid(OTHER), 0);

        // A NIC that is not running its loop does no DMA: its pages come back at once.
        assertTrue(allocator.free(OTHER, next.id()));
        sdram.putIntVolatile(control + ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_STOPPED);
        assertNotNull(allocator.allocateScattered(OWNER, total));
    }

    /**
     * A firmware killed while RUNNING (SIGKILL) ends no duty cycle any more and does no DMA: once its
     * heartbeat is silent and its process gone ({@link FirmwareProcess}), the pages taken back come back.
     */
    @Test
    void pagesTakenBackComeBackOnceTheNicsFirmwareProcessIsGone() throws Exception
    {
        final int control = (int)layout.controlProgramOffset();
        final Process firmware = new ProcessBuilder("sleep", "600").start();
        try
        {
            sdram.putLongVolatile(control + ControlProgramLayout.PID_OFFSET, firmware.pid());
            sdram.putLongVolatile(control + ControlProgramLayout.PROCESS_START_TICKS_OFFSET,
                ProcessStartTicks.of(firmware.pid()));
            sdram.putLongVolatile(control + ControlProgramLayout.HEARTBEAT_TIME_OFFSET,
                HostClock.millis() - 10 * ControlProgramLayout.HEARTBEAT_TIMEOUT_MS);
            sdram.putIntVolatile(control + ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
            final int total = allocator.freePages();
            final PageAllocator.Region all = allocator.allocateScattered(OWNER, total);
            assertTrue(allocator.free(OWNER, all.id()));
            assertNull(allocator.allocateScattered(OTHER, 1), "silent, but its process lives: it may resume");

            firmware.destroyForcibly().waitFor();
            assertNotNull(allocator.allocateScattered(OTHER, total));
            assertEquals(0, allocator.pagesWaitingForNic());
        }
        finally
        {
            firmware.destroyForcibly();
        }
    }

    @Test
    void freeAllReturnsEveryPageAndClearsEveryEntry()
    {
        final int total = allocator.freePages();
        final PageAllocator.Region a = allocator.allocateScattered(OWNER, 3);
        final PageAllocator.Region b = allocator.allocateContiguous(OWNER, 2);
        final PageAllocator.Region other = allocator.allocateContiguous(OTHER, 1);
        allocator.protect(b, 1);
        assertEquals(total - 6, allocator.freePages());
        assertEquals(total - 6, publishedFreePages());

        assertEquals(5, allocator.freeAll(OWNER));
        assertEntries(a, 0, 0);
        assertEntries(b, 0, 0);
        assertEntries(other, ProcessTableLayout.nicPid(OTHER), 0);
        assertEquals(total - 1, publishedFreePages());
        assertEquals(0, allocator.freeAll(OWNER));
    }

    @Test
    void pagesAreZeroedWhenHandedOutAgain()
    {
        final PageAllocator.Region first = allocator.allocateScattered(OWNER, 1);
        host.setMemory((int)first.address(0), pageSize, (byte)0x5A);
        allocator.free(OWNER, first.id());
        final PageAllocator.Region second = allocator.allocateScattered(OTHER, 1);
        assertEquals(first.address(0), second.address(0));
        for (int i = 0; i < pageSize; i++)
        {
            assertEquals(0, host.getByte((int)second.address(0) + i));
        }
    }

    @Test
    void exhaustionReturnsNull()
    {
        final int total = allocator.freePages();
        assertNull(allocator.allocateScattered(OWNER, total + 1));
        final PageAllocator.Region all = allocator.allocateScattered(OWNER, total);
        assertNotNull(all);
        assertNull(allocator.allocateContiguous(OTHER, 1));
        allocator.freeAll(OWNER);
        assertEquals(total, allocator.freePages());
    }

    @Test
    void regionsLockNestAndUnlockOnlyWhatWasLocked() throws Exception
    {
        final ProcessProtectionTable table = table(OWNER);
        final ProcessProtectionTable.Entry buffer = table.allocate(2 * pageSize, 1, false);
        assertEquals(3, buffer.pages(), "one byte into the first page spills into a third page");
        assertEquals(0, buffer.lockCount());

        assertEquals(1, table.lock(buffer.id()));
        assertEquals(2, table.lock(buffer.id()));
        assertEntries(buffer, ProcessTableLayout.nicPid(OWNER), 2);
        assertEquals(1, table.unlock(buffer.id()));
        assertEquals(0, table.unlock(buffer.id()));
        assertEntries(buffer, ProcessTableLayout.nicPid(OWNER), 0);
        final ProcessProtectionTable.Refusal notLocked =
            assertThrows(ProcessProtectionTable.Refusal.class, () -> table.unlock(buffer.id()));
        assertEquals(DriverProtocol.REFUSED, notLocked.code());

        table.lock(buffer.id());
        table.free(buffer.id());
        assertEntries(buffer, 0, 0);
        final ProcessProtectionTable.Refusal unknown =
            assertThrows(ProcessProtectionTable.Refusal.class, () -> table.lock(buffer.id()));
        assertTrue(unknown.getMessage().startsWith("no buffer region " + buffer.id()), unknown.getMessage());
    }

    @Test
    void allocationRequestsAreValidated() throws Exception
    {
        final ProcessProtectionTable table = table(OWNER);
        assertEquals(1, table.allocate(0, 0, true).pages(), "a zero-length buffer still gets a page");
        assertEquals(params.descriptorsPerRegion(), table.allocate(params.maxMessageBytes(), pageSize - 1, false).pages());
        assertEquals(DriverProtocol.REFUSED, assertThrows(ProcessProtectionTable.Refusal.class,
            () -> table.allocate(params.maxMessageBytes() + 1, 0, true)).code());
        assertEquals(DriverProtocol.REFUSED, assertThrows(ProcessProtectionTable.Refusal.class,
            () -> table.allocate(16, pageSize, true)).code());
        assertEquals(DriverProtocol.REFUSED, assertThrows(ProcessProtectionTable.Refusal.class,
            () -> table.allocate(-1, 0, true)).code());

        allocator.allocateScattered(OTHER, allocator.freePages() - 1);
        final ProcessProtectionTable.Refusal exhausted = assertThrows(ProcessProtectionTable.Refusal.class,
            () -> table.allocate(2 * pageSize, 0, true));
        assertEquals(Doorbell.NO_RESOURCES, exhausted.code());
        assertTrue(exhausted.getMessage().contains("node " + NODE), exhausted.getMessage());
    }

    @Test
    void bufferPoolIsLockedForLifeAndWrittenIntoTheVni() throws Exception
    {
        final ProcessProtectionTable table = table(OWNER);
        assertEquals(DriverProtocol.REFUSED, assertThrows(ProcessProtectionTable.Refusal.class,
            () -> table.pool(params.bufferPoolPages() + 1)).code());
        assertEquals(DriverProtocol.REFUSED, assertThrows(ProcessProtectionTable.Refusal.class,
            () -> table.pool(0)).code());

        final ProcessProtectionTable.Entry pool = table.pool(4);
        assertTrue(pool.isPool());
        assertEquals(1, pool.lockCount());
        assertEntries(pool, ProcessTableLayout.nicPid(OWNER), 1);
        final long poolAddress = layout.vniOffset(OWNER) + layout.vni().bufferPoolOffset();
        for (int i = 0; i < pool.pages(); i++)
        {
            assertEquals(pool.address(i), sdram.getLong((int)(poolAddress + (long)i * VniLayout.BUFFER_POOL_ENTRY_LENGTH)));
        }
        assertSame(pool, table.pool());

        assertThrows(ProcessProtectionTable.Refusal.class, () -> table.pool(1), "once per process");
        assertThrows(ProcessProtectionTable.Refusal.class, () -> table.unlock(pool.id()));
        assertThrows(ProcessProtectionTable.Refusal.class, () -> table.free(pool.id()));
        assertEntries(pool, ProcessTableLayout.nicPid(OWNER), 1);

        allocator.freeAll(OWNER);
        assertEntries(pool, 0, 0);
    }

    private ProcessProtectionTable table(final int index)
    {
        return new ProcessProtectionTable(allocator, sdram, layout, NODE, new ProcessName(1, index), index);
    }

    private int publishedFreePages()
    {
        final HostMemoryLayout hostLayout = image.hostLayout();
        return host.getIntVolatile((int)(hostLayout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_FREE_PAGES_OFFSET));
    }

    private void assertEntries(final PageAllocator.Region region, final int owner, final int lockCount)
    {
        for (int i = 0; i < region.pages(); i++)
        {
            assertEntry(region.address(i), owner, lockCount);
        }
    }

    private void assertEntries(final ProcessProtectionTable.Entry entry, final int owner, final int lockCount)
    {
        for (int i = 0; i < entry.pages(); i++)
        {
            assertEntry(entry.address(i), owner, lockCount);
        }
    }

    private void assertEntry(final long address, final int owner, final int lockCount)
    {
        final int entry = sdram.getIntVolatile((int)layout.protectionEntryOffset(address));
        assertEquals(owner, ProtectionTableLayout.owner(entry), "owner of page " + address);
        assertEquals(lockCount, ProtectionTableLayout.lockCount(entry), "lock count of page " + address);
    }
}
