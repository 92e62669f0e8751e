package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.qnix.daemon.ProcessRegistrationTest.assertRefused;
import static org.qnix.daemon.ProcessRegistrationTest.freePages;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProtectionTableLayout;
import org.qnix.abi.VniLayout;
import org.qnix.firmware.NodeImage;

/**
 * A registered process's memory requests ({@code qx_buffer_lock}, {@code qx_buffer_unlock},
 * {@code qx_buffer_pool}, thesis 3.6) through {@link DriverRequests} with no socket, over a real node
 * image and a running NIC: each reply, and the Translation and Protection Table entries the NIC checks
 * before every DMA.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class BufferRequestsTest
{
    private static final long TIMEOUT_MS = 20_000;

    @TempDir
    Path base;

    private DriverTestCluster cluster;
    private NodeImage image;
    private AtomicBuffer sdram;
    private NicSdramLayout layout;
    private SocketlessConnection process;
    private int nicPid;
    private int index;
    private int pageSize;

    @BeforeEach
    void setUp() throws Exception
    {
        cluster = new DriverTestCluster(base, 1, true);
        image = cluster.images.get(0);
        sdram = image.sdram();
        layout = image.sdramLayout();
        pageSize = cluster.params.pageSize();
        process = cluster.connect(0);
        final SocketlessConnection.Registered registered = process.register(1, 0, 1, 1, TIMEOUT_MS).registered();
        nicPid = registered.nicPid();
        index = registered.index();
    }

    @AfterEach
    void tearDown()
    {
        cluster.close();
    }

    @Test
    void everyBufferRequestNeedsARegisteredProcess()
    {
        final SocketlessConnection stranger = cluster.connect(0);
        assertRefused(stranger.send(DriverProtocol.BUFFER_ALLOCATE, 1024, 0, 1), "BUFFER_ALLOCATE needs a registered process");
        assertRefused(stranger.send(DriverProtocol.BUFFER_POOL, 1), "BUFFER_POOL needs a registered process");
        assertRefused(stranger.send(DriverProtocol.BUFFER_LOCK, 1), "BUFFER_LOCK needs a registered process");
        assertRefused(stranger.send(DriverProtocol.BUFFER_UNLOCK, 1), "BUFFER_UNLOCK needs a registered process");
        assertRefused(stranger.send(DriverProtocol.BUFFER_FREE, 1), "BUFFER_FREE needs a registered process");
        stranger.send(DriverProtocol.DEREGISTER).deregistered();
    }

    @Test
    void locksNestUnlocksUndoThemAndTheProtectionTableFollows()
    {
        final SocketlessConnection.Buffer buffer = process.send(DriverProtocol.BUFFER_ALLOCATE, 2 * pageSize, 1, 0).buffer();
        assertEquals(3, buffer.addresses().length, "one byte into the first page spills into a third page");
        assertEntries(buffer, nicPid, 0);

        assertEquals(1, process.send(DriverProtocol.BUFFER_LOCK, buffer.id()).lockCount());
        assertEquals(2, process.send(DriverProtocol.BUFFER_LOCK, buffer.id()).lockCount());
        assertEntries(buffer, nicPid, 2);
        assertEquals(1, process.send(DriverProtocol.BUFFER_UNLOCK, buffer.id()).lockCount());
        assertEntries(buffer, nicPid, 1);
        assertEquals(0, process.send(DriverProtocol.BUFFER_UNLOCK, buffer.id()).lockCount());
        assertEntries(buffer, nicPid, 0);

        assertRefused(process.send(DriverProtocol.BUFFER_UNLOCK, buffer.id()),
            "buffer region " + buffer.id() + " is not locked: every qx_buffer_unlock needs an earlier qx_buffer_lock");
        assertEntries(buffer, nicPid, 0);
    }

    @Test
    void locksStopAtTheMostAProtectionTableEntryHolds()
    {
        final int id = process.send(DriverProtocol.BUFFER_ALLOCATE, 16, 0, 1).buffer().id();
        for (int i = 1; i <= ProtectionTableLayout.MAX_LOCK_COUNT; i++)
        {
            assertEquals(i, process.send(DriverProtocol.BUFFER_LOCK, id).lockCount());
        }
        assertRefused(process.send(DriverProtocol.BUFFER_LOCK, id),
            "is already locked " + ProtectionTableLayout.MAX_LOCK_COUNT + " times");
        assertEquals(ProtectionTableLayout.MAX_LOCK_COUNT - 1, process.send(DriverProtocol.BUFFER_UNLOCK, id).lockCount());
    }

    @Test
    void aRegionOfAnotherProcessIsNotOwnedByTheCaller() throws Exception
    {
        final SocketlessConnection other = cluster.connect(0);
        other.register(2, 0, 2, 1, TIMEOUT_MS).registered();
        final SocketlessConnection.Buffer theirs = other.send(DriverProtocol.BUFFER_ALLOCATE, pageSize, 0, 1).buffer();
        final int theirPid = ProtectionTableLayout.owner(protection(theirs.addresses()[0]));

        for (final int request : new int[] {DriverProtocol.BUFFER_LOCK, DriverProtocol.BUFFER_UNLOCK, DriverProtocol.BUFFER_FREE})
        {
            assertRefused(process.send(request, theirs.id()), "no buffer region " + theirs.id() + " of process (1,0)");
        }
        assertEntries(theirs, theirPid, 0);
        assertEquals(1, other.send(DriverProtocol.BUFFER_LOCK, theirs.id()).lockCount());
    }

    @Test
    void badAllocationsGetTheirRefusalAndExhaustionItsDoorbellCode()
    {
        final int largest = cluster.params.maxMessageBytes();
        assertRefused(process.send(DriverProtocol.BUFFER_ALLOCATE, largest + 1, 0, 1), "buffer length " + (largest + 1) +
            " is outside [0, " + largest + "]");
        assertRefused(process.send(DriverProtocol.BUFFER_ALLOCATE, -1, 0, 0), "buffer length -1 is outside");
        assertRefused(process.send(DriverProtocol.BUFFER_ALLOCATE, 16, pageSize, 1), "first page offset " + pageSize +
            " is outside [0, " + pageSize + ")");
        assertRefused(process.send(DriverProtocol.BUFFER_ALLOCATE, 16, -1, 1), "first page offset -1");
        assertEquals(cluster.params.descriptorsPerRegion(),
            process.send(DriverProtocol.BUFFER_ALLOCATE, largest, pageSize - 1, 0).buffer().addresses().length);

        // Take the node's host memory a message at a time, until the driver says it is exhausted.
        SocketlessConnection.Failed exhausted = null;
        for (int i = 0; i < image.hostLayout().pagePoolPages() && null == exhausted; i++)
        {
            process.send(DriverProtocol.BUFFER_ALLOCATE, largest, 0, 1);
            if (DriverProtocol.BUFFER == process.nextReplyType())
            {
                process.buffer();
            }
            else
            {
                exhausted = process.failed();
            }
        }
        assertTrue(null != exhausted, "host memory never ran out");
        assertEquals(Doorbell.NO_RESOURCES, exhausted.code());
        assertTrue(exhausted.message().startsWith("host memory of node 0-0 is exhausted"), exhausted.message());
    }

    @Test
    void theBufferPoolIsWrittenIntoTheVniAndLockedForLife()
    {
        final int q = cluster.params.bufferPoolPages();
        assertRefused(process.send(DriverProtocol.BUFFER_POOL, 0), "a buffer pool of 0 pages is outside [1, Q=" + q + "]");
        assertRefused(process.send(DriverProtocol.BUFFER_POOL, q + 1), "a buffer pool of " + (q + 1) + " pages");

        final SocketlessConnection.Buffer pool = process.send(DriverProtocol.BUFFER_POOL, q).buffer();
        assertEquals(q, pool.addresses().length);
        assertEntries(pool, nicPid, 1);
        final long poolInVni = layout.vniOffset(index) + layout.vni().bufferPoolOffset();
        for (int i = 0; i < q; i++)
        {
            assertEquals(pool.addresses()[i], sdram.getLong((int)(poolInVni + (long)i * VniLayout.BUFFER_POOL_ENTRY_LENGTH)));
        }

        assertRefused(process.send(DriverProtocol.BUFFER_POOL, 1), "qx_buffer_pool is called once per process");
        assertRefused(process.send(DriverProtocol.BUFFER_LOCK, pool.id()), "is the buffer pool");
        assertRefused(process.send(DriverProtocol.BUFFER_UNLOCK, pool.id()), "stays locked until the process de-registers");
        assertRefused(process.send(DriverProtocol.BUFFER_FREE, pool.id()), "freed when the process de-registers");
        assertEntries(pool, nicPid, 1);
    }

    @Test
    void aFreedRegionGoesBackAndTheNicStopsHonouringItsPages()
    {
        final int free = freePages(image);
        final SocketlessConnection.Buffer buffer = process.send(DriverProtocol.BUFFER_ALLOCATE, 3 * pageSize, 0, 0).buffer();
        process.send(DriverProtocol.BUFFER_LOCK, buffer.id()).lockCount();
        assertEquals(free - 3, freePages(image));

        process.send(DriverProtocol.BUFFER_FREE, buffer.id()).ok();
        assertEquals(free, freePages(image));
        assertEntries(buffer, 0, 0);
        assertRefused(process.send(DriverProtocol.BUFFER_LOCK, buffer.id()), "no buffer region " + buffer.id());
        assertRefused(process.send(DriverProtocol.BUFFER_FREE, buffer.id()), "no buffer region " + buffer.id());
    }

    private int protection(final long address)
    {
        return sdram.getIntVolatile((int)layout.protectionEntryOffset(address));
    }

    private void assertEntries(final SocketlessConnection.Buffer buffer, final int owner, final int lockCount)
    {
        for (final long address : buffer.addresses())
        {
            final int entry = protection(address);
            assertEquals(owner, ProtectionTableLayout.owner(entry), "owner of page " + address);
            assertEquals(lockCount, ProtectionTableLayout.lockCount(entry), "lock count of page " + address);
        }
    }
}
