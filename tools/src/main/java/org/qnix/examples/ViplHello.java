package org.qnix.examples;

import static java.nio.charset.StandardCharsets.US_ASCII;

import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplDescriptor;
import org.qnix.vipl.AsyncError;
import org.qnix.vipl.AsyncErrorHandler;
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
 * A VIPL client and server: rank 0 waits for a connection and answers the client's greeting, rank 1
 * connects to it and greets it. Run with {@code ./qnix run -n 2 -- ViplHello [SERVER_NODE]} (the
 * server's node, 0-0 by default, where qnix run puts rank 0); README.md quotes this file.
 */
public final class ViplHello
{
    public static void main(final String[] args)
    {
        final boolean server = "0".equals(System.getenv("QNIX_PI"));              // set by qnix run
        final ViplAddress serverAddress =
            new ViplAddress(NicCoordinates.parse(args.length > 0 ? args[0] : "0-0"), "hello".getBytes(US_ASCII));

        try (ViplNic nic = Vipl.openNic(System.getenv("QNIX_NODE")))              // VipOpenNic, on $QNIX_CLUSTER
        {
            // VipErrorCallback: the first to disconnect puts the other's VI in Error (CONN_LOST); no news here.
            nic.onError(AsyncErrorHandler.DEFAULT.ignoring(AsyncError.Code.CONN_LOST));
            final ProtectionTag ptag = nic.createPtag();
            final ViplMemory memory = nic.allocate(4096);                        // descriptors and data
            final MemoryRegion region = nic.registerMem(memory, 0, 4096, new MemoryAttributes(ptag, false, false));
            final Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_RECEPTION, 1024, ptag, false, false),
                null, null);

            // A receive into bytes 1024..2047, posted before connecting: the peer may send at once.
            final Descriptor receive = memory.descriptor(0);
            receive.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, memory.address(1024), region.handle(), 1024);
            vi.postRecv(receive, region);

            if (server)
            {
                nic.connectWait(serverAddress.discriminator(), 30_000).accept(vi);   // VipConnectWait, Accept
                final Descriptor got = vi.recvWait(30_000);
                final String greeting = memory.buffer().getStringWithoutLengthAscii(1024, got.length());
                send(vi, memory, region, "hello, " + greeting);
            }
            else
            {
                nic.connectRequest(vi, serverAddress, 30_000);                      // VipConnectRequest
                send(vi, memory, region, "client on " + nic.node());
                final Descriptor got = vi.recvWait(30_000);
                System.out.println(memory.buffer().getStringWithoutLengthAscii(1024, got.length()));
            }
            vi.disconnect();
        }                                                                        // VipCloseNic frees everything
    }

    /** Sends {@code text} from bytes 2048.. of the memory and waits until it is in the peer's memory. */
    private static void send(final Vi vi, final ViplMemory memory, final MemoryRegion region, final String text)
    {
        final int length = memory.buffer().putStringWithoutLengthAscii(2048, text);
        final Descriptor send = memory.descriptor(64);
        send.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(length)
            .dataSegment(0, memory.address(2048), region.handle(), length);
        vi.postSend(send, region);
        final Descriptor done = vi.sendWait(30_000);                             // Reliable Reception: received
        if (done.hasError())
        {
            throw new IllegalStateException("send failed, status 0x" + Integer.toHexString(done.status()));
        }
    }
}
