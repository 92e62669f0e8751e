package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.ViaProcessStructuresLayout;
import org.qnix.abi.ViplDescriptor;
import org.qnix.firmware.NicCounters;
import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.RemoteVi;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplAddress;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * One end of the VIPL tests' connections, a VIA process of this JVM on one NIC: a ptag, a memory for
 * descriptors (one every {@link #DESCRIPTOR_STRIDE} bytes, room for the most segments), data memories
 * each registered whole with RDMA write enabled, and a CQ. {@link #close()} closes the NIC, which frees
 * all of it.
 *
 * <pre>{@code
 * try (ViplEnd a = new ViplEnd(dir, "0-0", 1, 65536); ViplEnd b = new ViplEnd(dir, "1-0", 1, 65536))
 * {
 *     Vi va = a.vi(Reliability.RELIABLE_DELIVERY, false), vb = b.vi(Reliability.RELIABLE_DELIVERY, false);
 *     ViplEnd.connect(a, va, b, vb, "key");
 * }
 * }</pre>
 */
final class ViplEnd implements AutoCloseable
{
    static final byte UNTOUCHED = (byte)0xA5;
    static final long UNTOUCHED_LONG = 0xA5A5_A5A5_A5A5_A5A5L;
    /** A descriptor with the most data segments and an address segment fits in this. */
    static final int DESCRIPTOR_STRIDE = 2048;
    static final int DESCRIPTORS = 32;
    static final long TIMEOUT_MS = 60_000;

    final ClusterDirectory dir;
    final ViplNic nic;
    final NicCoordinates node;
    final ProtectionTag ptag;
    final ViplMemory descriptors;
    final MemoryRegion descriptorRegion;
    final ViplMemory[] data;
    final MemoryRegion[] regions;
    final CompletionQueue cq;

    ViplEnd(final ClusterDirectory dir, final String node, final int memories, final int bytes)
    {
        this.dir = dir;
        nic = Vipl.openNic(node, dir.name());
        this.node = nic.node();
        ptag = nic.createPtag();
        descriptors = nic.allocate(DESCRIPTORS * DESCRIPTOR_STRIDE);
        descriptorRegion = nic.registerMem(descriptors, 0, descriptors.length(), new MemoryAttributes(ptag, false, false));
        data = new ViplMemory[memories];
        regions = new MemoryRegion[memories];
        for (int i = 0; i < memories; i++)
        {
            data[i] = nic.allocate(bytes);
            regions[i] = nic.registerMem(data[i], 0, bytes, new MemoryAttributes(ptag, true, false));
        }
        cq = nic.createCq(1024);
    }

    /** @return a new VI of this end's ptag, the largest transfer, both queues on the CQ if {@code onCq}. */
    Vi vi(final Reliability reliability, final boolean onCq)
    {
        return vi(reliability, nic.parameters().maxMessageBytes(), true, onCq);
    }

    Vi vi(final Reliability reliability, final int maxTransfer, final boolean rdmaWrite, final boolean onCq)
    {
        return nic.createVi(new ViAttributes(reliability, maxTransfer, ptag, rdmaWrite, false), onCq ? cq : null,
            onCq ? cq : null);
    }

    Descriptor descriptor(final int i)
    {
        return descriptors.descriptor(i * DESCRIPTOR_STRIDE);
    }

    UnsafeBuffer buffer(final int memory)
    {
        return data[memory].buffer();
    }

    /** @return the commands this end's NIC took from all Command Queues so far. */
    long commandsTaken()
    {
        return TestClusters.counters(dir, node).get(NicCounters.COMMANDS);
    }

    /**
     * Posts receives and waits until the NIC took them: a message finding no receive is dropped
     * (Unreliable) or breaks the connection. Only for an end whose NIC nothing else posts to meanwhile.
     */
    void postRecvTaken(final Vi vi, final Descriptor... receives) throws InterruptedException
    {
        final long before = commandsTaken();
        for (final Descriptor d : receives)
        {
            vi.postRecv(d, descriptorRegion);
        }
        TestClusters.await("the receives taken by NIC " + node, () -> commandsTaken() >= before + receives.length);
    }

    /** Fills every data memory with {@link #UNTOUCHED}. */
    void untouch()
    {
        for (final ViplMemory m : data)
        {
            m.buffer().setMemory(0, m.length(), UNTOUCHED);
        }
    }

    /** @return the first byte of the data memories that is not {@link #UNTOUCHED} as "memory:offset", or null. */
    String firstTouched()
    {
        for (int m = 0; m < data.length; m++)
        {
            final UnsafeBuffer b = data[m].buffer();
            final int length = data[m].length();
            int i = 0;
            for (; i + Long.BYTES <= length; i += Long.BYTES)
            {
                if (UNTOUCHED_LONG != b.getLong(i))
                {
                    break;
                }
            }
            for (; i < length; i++)
            {
                if (UNTOUCHED != b.getByte(i))
                {
                    return m + ":" + i;
                }
            }
        }
        return null;
    }

    /** The byte of message {@code seed} at {@code index}: every message's bytes differ from every other's. */
    static byte pattern(final long seed, final int index)
    {
        return (byte)(seed * 0x9E37 + index * 31 + (index >>> 11) + 1);
    }

    /** A send of {@code length} bytes from one segment at {@code offset} of data memory 0. */
    Descriptor send(final int slot, final int offset, final int length, final long seed)
    {
        final UnsafeBuffer b = buffer(0);
        for (int i = 0; i < length; i++)
        {
            b.putByte(offset + i, pattern(seed, i));
        }
        final Descriptor d = descriptor(slot);
        d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(length)
            .dataSegment(0, data[0].address(offset), regions[0].handle(), length);
        return d;
    }

    /** A receive of up to {@code capacity} bytes into one segment at {@code offset} of data memory 0. */
    Descriptor receive(final int slot, final int offset, final int capacity)
    {
        final Descriptor d = descriptor(slot);
        d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
            .dataSegment(0, data[0].address(offset), regions[0].handle(), capacity);
        return d;
    }

    /** Asserts the {@code length} bytes at {@code offset} of data memory 0 are message {@code seed}'s. */
    void assertMessage(final int offset, final int length, final long seed)
    {
        final UnsafeBuffer b = buffer(0);
        for (int i = 0; i < length; i++)
        {
            if (pattern(seed, i) != b.getByte(offset + i))
            {
                assertEquals(pattern(seed, i), b.getByte(offset + i), "byte " + i + " of message " + seed);
            }
        }
    }

    /** Connects {@code clientVi} of {@code client} to {@code serverVi} of {@code server}, client/server. */
    static void connect(final ViplEnd client, final Vi clientVi, final ViplEnd server, final Vi serverVi,
        final String key) throws Exception
    {
        final byte[] discriminator = key.getBytes(StandardCharsets.US_ASCII);
        final CompletableFuture<RemoteVi> asked = CompletableFuture.supplyAsync(() ->
            client.nic.connectRequest(clientVi, new ViplAddress(server.node, discriminator), TIMEOUT_MS));
        server.nic.connectWait(discriminator, TIMEOUT_MS).accept(serverVi);
        asked.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * @return true if this end's asynchronous-error ring holds an event of {@code resource} and
     * {@code error} for {@code vi}: read from its VIA Process Structures in host memory, as the NIC wrote
     * them, whether or not the library took them.
     */
    boolean hasAsyncEvent(final Vi vi, final int resource, final int error)
    {
        final ClusterStatus.ViplVi entry = ClusterStatus.read(dir).vipl().vis().stream()
            .filter(v -> v.node().equals(node) && v.index() == vi.index()).findFirst().orElseThrow();
        final NicSdramLayout layout = new NicSdramLayout(nic.parameters());
        final long structures;
        try (MappedFile sdram = MappedFile.mapExisting(dir.nicSdram(node), 0, layout.managedMemoryOffset()))
        {
            structures = sdram.buffer().getLong((int)layout.processEntryOffset(entry.owner()) +
                ProcessTableLayout.VIA_STRUCTURES_OFFSET);
        }
        try (MappedFile host = MappedFile.mapExisting(dir.hostMemory(node), structures, ViaProcessStructuresLayout.LENGTH))
        {
            final UnsafeBuffer b = host.buffer();
            // Writer: the NIC, the Tail after the event's Valid word, with release.
            final int tail = b.getIntVolatile(ViaProcessStructuresLayout.ASYNC_TAIL_OFFSET);
            for (int i = Math.max(0, tail - ViaProcessStructuresLayout.ASYNC_EVENTS); i < tail; i++)
            {
                final int event = ViaProcessStructuresLayout.asyncEventOffset(i);
                if (vi.index() == b.getInt(event + ViaProcessStructuresLayout.EVENT_VI_OFFSET) &&
                    resource == b.getInt(event + ViaProcessStructuresLayout.EVENT_RESOURCE_OFFSET) &&
                    error == b.getInt(event + ViaProcessStructuresLayout.EVENT_ERROR_OFFSET))
                {
                    return true;
                }
            }
        }
        return false;
    }

    public void close()
    {
        nic.close();
    }
}
