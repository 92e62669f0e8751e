package org.qnix.tools;

import java.nio.charset.StandardCharsets;

import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplDescriptor;
import org.qnix.vipl.Descriptor;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplAddress;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * A VIA sender for {@link ViplKillTest}: on NIC {@code args[1]} of cluster {@code args[0]}, connects a
 * VI of level {@code args[4]} to the server at node {@code args[2]}, discriminator {@code args[3]}, and
 * streams messages until killed: message k is {@code ViplKillTest.length(k)} bytes, its first 4 bytes
 * k, the rest {@link ViplEnd#pattern}(k, i). Before each message it posts the receive for the server's
 * credit (posted first on the same Command Queue, so the NIC has it before the message leaves) and
 * sends the next only once the credit came: the server always has a receive for it.
 */
public final class ViplStreamWorker
{
    private ViplStreamWorker()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final ViplNic nic = Vipl.openNic(args[1], args[0]);
        final ProtectionTag ptag = nic.createPtag();
        final int bytes = nic.parameters().maxMessageBytes();
        final ViplMemory memory = nic.allocate(bytes);
        final MemoryRegion region = nic.registerMem(memory, 0, bytes, new MemoryAttributes(ptag, false, false));
        final ViplMemory descriptors = nic.allocate(4096);
        final MemoryRegion descriptorRegion =
            nic.registerMem(descriptors, 0, 4096, new MemoryAttributes(ptag, false, false));
        final Vi vi = nic.createVi(new ViAttributes(Reliability.valueOf(args[4]), bytes, ptag, false, false), null, null);
        nic.connectRequest(vi, new ViplAddress(NicCoordinates.parse(args[2]), args[3].getBytes(StandardCharsets.US_ASCII)),
            60_000);
        System.out.println("connected " + vi.index());
        final Descriptor credit = descriptors.descriptor(0);
        final Descriptor send = descriptors.descriptor(1024);
        final UnsafeBuffer data = memory.buffer();
        for (int k = 0; ; k++)
        {
            final int length = ViplKillTest.length(k);
            data.putInt(0, k);
            for (int i = 4; i < length; i++)
            {
                data.putByte(i, ViplEnd.pattern(k, i));
            }
            credit.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, memory.address(bytes - 64), region.handle(), 64);
            vi.postRecv(credit, descriptorRegion);
            send.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(length)
                .dataSegment(0, memory.address(0), region.handle(), length);
            vi.postSend(send, descriptorRegion);
            check(vi.sendWait(60_000), ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_SEND, k);
            check(vi.recvWait(60_000), ViplDescriptor.STATUS_DONE | ViplDescriptor.STATUS_OP_RECEIVE, k);
        }
    }

    private static void check(final Descriptor d, final int status, final int k)
    {
        if (d.status() != status)
        {
            throw new IllegalStateException("message " + k + ": status 0x" + Integer.toHexString(d.status()));
        }
    }
}
