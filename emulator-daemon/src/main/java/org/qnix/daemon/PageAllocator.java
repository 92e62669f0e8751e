package org.qnix.daemon;

import java.util.ArrayDeque;
import java.util.BitSet;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.HostClock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ProtectionTableLayout;

/**
 * The driver's page allocator over a node's {@code host.mem} page pool (thesis 3.4: "a page pool in
 * its address space"). Pages are handed out to an owner (a Process Table index) as regions, either a
 * physically contiguous run or scattered pages; one region can be freed alone, and everything an owner
 * holds is freed at once when it goes. Pages are zeroed when handed out. The free count is published
 * in the NIC Status for tools and tests.
 *
 * <p>The allocator is also the only writer of the Translation and Protection Table in NIC SDRAM
 * (DESIGN.md 3.2 and 8, item 10): every page it hands out gets the owner's NIC PID with lock count 0,
 * {@link #protect} sets a region's lock count, and a freed page's entry goes back to 0, so the NIC
 * control program refuses a DMA to a page the moment it stops belonging to the process that named it.
 *
 * <p>A page taken back (freed, or its owner gone) is not handed out again at once: it waits until the
 * NIC has finished the duty cycle that was in progress when its entry was cleared (the DMA epoch of
 * {@link ControlProgramLayout#DUTY_CYCLES_OFFSET}). The control program checks a page and copies its
 * bytes within one duty cycle, so a check that passed just before the page was taken cannot copy from
 * or into the next owner's data. Waiting pages count as free; an allocation that needs them waits for
 * the NIC (a back-off firmware finishes a cycle within about a millisecond) for at most
 * {@link #DMA_EPOCH_WAIT_MS}. A NIC that is not running its loop (never started, or stopped) does no
 * DMA, so its pages need no wait.
 *
 * <pre>{@code
 * PageAllocator.Region region = allocator.allocateScattered(index, 4);
 * allocator.protect(region, 1);      // locked: the NIC may DMA to its pages
 * allocator.free(index, region.id());
 * }</pre>
 */
final class PageAllocator
{
    private final AtomicBuffer host;
    private final NicWakeUp wakeUp;
    private final AtomicBuffer sdram;
    private final NicSdramLayout sdramLayout;
    private final long firstPage;
    private final int pageSize;
    private final int pages;
    private final BitSet used;
    private final Int2ObjectHashMap<Int2ObjectHashMap<Region>> byOwner = new Int2ObjectHashMap<>();
    private final int freePagesField;
    /** The NIC's liveness and DMA epoch (ControlProgramLayout); wrapped once. */
    private final ControlProgramSegment control = new ControlProgramSegment();
    /** Pages taken back whose DMA epoch has not passed yet, oldest first. */
    private final ArrayDeque<TakenBack> takenBack = new ArrayDeque<>();
    private int free;
    /** Pages counted in {@link #free} that are in {@link #takenBack}: not yet reusable. */
    private int waitingForNic;
    private int nextRegionId = 1;

    /** How long an allocation waits for the NIC to end the duty cycle that may still use freed pages. */
    static final long DMA_EPOCH_WAIT_MS = 1000;

    /** Pages whose Protection Table entries were cleared when the NIC's duty cycle count was {@code epoch}. */
    private record TakenBack(long[] addresses, long epoch)
    {
    }

    /**
     * A run of pages handed to one owner. {@link #address(int)} is the physical address of the region's
     * i-th page in the order the owner maps them (virtually contiguous), not necessarily ascending.
     */
    static final class Region
    {
        private final int id;
        private final int owner;
        private final long[] addresses;

        private Region(final int id, final int owner, final long[] addresses)
        {
            this.id = id;
            this.owner = owner;
            this.addresses = addresses;
        }

        int id()
        {
            return id;
        }

        int owner()
        {
            return owner;
        }

        int pages()
        {
            return addresses.length;
        }

        long address(final int page)
        {
            return addresses[page];
        }

        public String toString()
        {
            return "region " + id + " of owner " + owner + " (" + addresses.length + " pages)";
        }
    }

    PageAllocator(final AtomicBuffer host, final HostMemoryLayout hostLayout, final AtomicBuffer sdram,
        final NicSdramLayout sdramLayout, final NicWakeUp wakeUp)
    {
        this.host = host;
        this.wakeUp = wakeUp;
        this.sdram = sdram;
        this.sdramLayout = sdramLayout;
        this.firstPage = hostLayout.pagePoolOffset();
        this.pageSize = sdramLayout.parameters().pageSize();
        this.pages = (int)hostLayout.pagePoolPages();
        this.used = new BitSet(pages);
        this.free = pages;
        this.freePagesField = (int)(hostLayout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_FREE_PAGES_OFFSET);
        control.wrap(sdram, (int)sdramLayout.controlProgramOffset());
        // Every page starts free, so no page may look owned: a driver started over old files must not
        // leave a previous process's entries for the NIC to honour.
        sdram.setMemory((int)sdramLayout.protectionTableOffset(), (int)ProtectionTableLayout.length(sdramLayout.parameters()),
            (byte)0);
        publish();
    }

    /**
     * @return {@code count} physically contiguous zeroed pages, or null if no run is long enough.
     */
    synchronized Region allocateContiguous(final int owner, final int count)
    {
        checkCount(count);
        reclaimTakenBack();
        final long deadline = HostClock.millis() + DMA_EPOCH_WAIT_MS;
        Region region;
        while (null == (region = takeContiguous(owner, count)) && awaitTakenBack(count, deadline))
        {
            // Pages taken back may make room once the NIC's duty cycle ends.
        }
        return region;
    }

    private Region takeContiguous(final int owner, final int count)
    {
        int start = used.nextClearBit(0);
        while (start + count <= pages)
        {
            final int nextUsed = used.nextSetBit(start);
            if (nextUsed < 0 || nextUsed >= start + count)
            {
                final long[] addresses = new long[count];
                for (int i = 0; i < count; i++)
                {
                    addresses[i] = take(owner, start + i);
                }
                return add(owner, addresses);
            }
            start = used.nextClearBit(nextUsed);
        }
        return null;
    }

    /**
     * @return {@code count} zeroed pages of which no two consecutive ones are physically adjacent in
     * ascending order, or null if fewer pages are free. The highest free pages are taken, in descending
     * address order: so a process's page table is never one run in disguise, and contiguous runs,
     * allocated from the bottom, keep their room.
     */
    synchronized Region allocateScattered(final int owner, final int count)
    {
        checkCount(count);
        reclaimTakenBack();
        final long deadline = HostClock.millis() + DMA_EPOCH_WAIT_MS;
        while (count > free - waitingForNic)
        {
            if (!awaitTakenBack(count, deadline))
            {
                return null;
            }
        }
        final long[] addresses = new long[count];
        int page = pages;
        for (int i = 0; i < count; i++)
        {
            page = used.previousClearBit(page - 1);
            addresses[i] = take(owner, page);
        }
        return add(owner, addresses);
    }

    /**
     * Sets the lock count of every page of a region in the Protection Table (release, so the NIC sees
     * the pages' zeroed contents before it sees them locked).
     */
    synchronized void protect(final Region region, final int lockCount)
    {
        if (lockCount < 0 || lockCount > ProtectionTableLayout.MAX_LOCK_COUNT)
        {
            throw new IllegalArgumentException("lock count " + lockCount + " is outside [0, " +
                ProtectionTableLayout.MAX_LOCK_COUNT + "]");
        }
        final Int2ObjectHashMap<Region> regions = byOwner.get(region.owner());
        if (null == regions || regions.get(region.id()) != region)
        {
            throw new IllegalStateException(region + " is not allocated");
        }
        final int entry = ProtectionTableLayout.entry(ProcessTableLayout.nicPid(region.owner()), lockCount);
        for (int i = 0; i < region.pages(); i++)
        {
            sdram.putIntRelease((int)sdramLayout.protectionEntryOffset(region.address(i)), entry);
        }
    }

    /** Frees one region of an owner. @return false if the owner holds no region with that id. */
    synchronized boolean free(final int owner, final int regionId)
    {
        final Int2ObjectHashMap<Region> regions = byOwner.get(owner);
        final Region region = null == regions ? null : regions.remove(regionId);
        if (null == region)
        {
            return false;
        }
        if (regions.isEmpty())
        {
            byOwner.remove(owner);
        }
        release(region);
        publish();
        return true;
    }

    /** Frees every page the owner holds. @return how many. */
    synchronized int freeAll(final int owner)
    {
        final Int2ObjectHashMap<Region> regions = byOwner.remove(owner);
        if (null == regions)
        {
            return 0;
        }
        int freed = 0;
        for (final Region region : regions.values())
        {
            release(region);
            freed += region.pages();
        }
        publish();
        return freed;
    }

    /** @return pages not held by any owner, including those {@link #pagesWaitingForNic() waiting for the NIC}. */
    synchronized int freePages()
    {
        return free;
    }

    /** @return free pages that cannot be handed out until the NIC ends the duty cycle that may use them. */
    synchronized int pagesWaitingForNic()
    {
        reclaimTakenBack();
        return waitingForNic;
    }

    /**
     * Reclaims the pages whose DMA epoch has passed and, if an allocation of {@code count} pages could
     * still succeed with the ones that have not, waits a little for the NIC (releasing the monitor).
     *
     * @return true to try the allocation again, false if it cannot succeed (or the wait is over).
     */
    private boolean awaitTakenBack(final int count, final long deadline)
    {
        final int before = waitingForNic;
        reclaimTakenBack();
        if (waitingForNic != before)
        {
            return true;
        }
        if (0 == waitingForNic || count > free || HostClock.millis() >= deadline)
        {
            return false;
        }
        // The duty cycles waited for do not run while an idle NIC sleeps.
        wakeUp.ring();
        try
        {
            wait(1);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
        return true;
    }

    private void reclaimTakenBack()
    {
        if (takenBack.isEmpty())
        {
            return;
        }
        // Writer of both: the control program. A NIC that does not run its loop, or whose firmware process is
        // gone (killed while RUNNING), does no DMA.
        final boolean running = !FirmwareProcess.doesNoDma(control, HostClock.millis());
        final long cycles = control.dutyCycles();
        TakenBack batch;
        while (null != (batch = takenBack.peekFirst()) && (!running || cycles > batch.epoch()))
        {
            takenBack.removeFirst();
            for (final long address : batch.addresses())
            {
                used.clear(pageIndex(address));
            }
            waitingForNic -= batch.addresses().length;
        }
    }

    private static void checkCount(final int count)
    {
        if (count < 1)
        {
            throw new IllegalArgumentException("page count " + count + " must be at least 1");
        }
    }

    private long take(final int owner, final int page)
    {
        used.set(page);
        free--;
        final long address = address(page);
        host.setMemory((int)address, pageSize, (byte)0);
        // Owned but not locked: the NIC may not DMA to it until the owner locks it (thesis 3.6).
        sdram.putIntRelease((int)sdramLayout.protectionEntryOffset(address),
            ProtectionTableLayout.entry(ProcessTableLayout.nicPid(owner), 0));
        return address;
    }

    private Region add(final int owner, final long[] addresses)
    {
        final Region region = new Region(nextRegionId++, owner, addresses);
        byOwner.computeIfAbsent(owner, k -> new Int2ObjectHashMap<>()).put(region.id(), region);
        publish();
        return region;
    }

    private void release(final Region region)
    {
        for (int i = 0; i < region.pages(); i++)
        {
            // Reader: the NIC, at each DMA. A volatile store, ordered before the load of the duty cycle
            // count below, so that every cycle the NIC starts after that count sees it (ControlProgramLayout).
            sdram.putIntVolatile((int)sdramLayout.protectionEntryOffset(region.address(i)), 0);
        }
        final long epoch = control.dutyCycles();
        takenBack.addLast(new TakenBack(region.addresses.clone(), epoch));
        waitingForNic += region.pages();
        free += region.pages();
    }

    private long address(final int page)
    {
        return firstPage + (long)page * pageSize;
    }

    private int pageIndex(final long address)
    {
        return (int)((address - firstPage) / pageSize);
    }

    private void publish()
    {
        // Readers: `cluster status` and tests checking that a dead process's memory came back.
        host.putIntRelease(freePagesField, free);
    }
}
