package org.qnix.tools;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.agrona.MutableDirectBuffer;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ViplDescriptor;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.vipl.CompletionQueue;
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
 * One JVM holding a {@link Qnix} and a {@link ViplNic} at once, both moving data, for
 * {@link ViplMixedTest}: on node {@code args[1]} of cluster {@code args[0]} it registers as QNIX
 * process {@code ViplMixedTest.WORKER} and opens the NIC for VIA, connects a Reliable Delivery VI to the
 * server at {@code args[2]} with discriminator {@code args[3]}, then sends {@code ViplMixedTest.MESSAGES}
 * messages through each API from two threads at once, message k of {@code ViplMixedTest.length(k)}
 * bytes of {@link ViplEnd#pattern} (seed k for VIPL, 1000 + k for QNIX) to the test's process. It says
 * "sent", holds everything while file {@code args[4]} exists, then closes both and exits 0.
 */
public final class ViplMixedWorker
{
    private ViplMixedWorker()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        try (Qnix qnix = Qnix.options().name(ViplMixedTest.WORKER).group(ViplMixedTest.WORKER.ai(), 1).cluster(args[0])
            .node(args[1]).timeout(Duration.ofSeconds(120)).init();
            ViplNic nic = Vipl.openNic(args[1], args[0]))
        {
            final ProtectionTag ptag = nic.createPtag();
            final int bytes = 256 * 1024;
            final ViplMemory memory = nic.allocate(bytes);
            final MemoryRegion region = nic.registerMem(memory, 0, bytes, new MemoryAttributes(ptag, false, false));
            final CompletionQueue cq = nic.createCq(64);
            final Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, bytes, ptag, false, false), cq, null);
            nic.connectRequest(vi, new ViplAddress(NicCoordinates.parse(args[2]), args[3].getBytes(StandardCharsets.US_ASCII)),
                60_000);
            System.out.println("connected " + vi.index());

            final Throwable[] failed = new Throwable[1];
            final Thread viaSender = new Thread(() ->
            {
                try
                {
                    final Descriptor send = memory.descriptor(0);
                    for (int k = 0; k < ViplMixedTest.MESSAGES; k++)
                    {
                        final int length = ViplMixedTest.length(k);
                        for (int i = 0; i < length; i++)
                        {
                            memory.buffer().putByte(4096 + i, ViplEnd.pattern(k, i));
                        }
                        send.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(length)
                            .dataSegment(0, memory.address(4096), region.handle(), length);
                        vi.postSend(send, region);
                        if (send != vi.sendWait(60_000) || send.hasError() || cq.await(60_000).vi() != vi)
                        {
                            throw new IllegalStateException("VIPL send " + k + ": status 0x" +
                                Integer.toHexString(send.status()));
                        }
                    }
                }
                catch (final Throwable t)
                {
                    failed[0] = t;
                }
            }, "vipl-sender");
            viaSender.start();
            final ProcessName peer = ViplMixedTest.SERVER;
            try (QnixBuffer buffer = qnix.allocateBuffer(bytes))
            {
                buffer.lock();
                final MutableDirectBuffer b = buffer.buffer();
                for (int k = 0; k < ViplMixedTest.MESSAGES; k++)
                {
                    final int length = ViplMixedTest.length(k);
                    for (int i = 0; i < length; i++)
                    {
                        b.putByte(i, ViplEnd.pattern(1000 + k, i));
                    }
                    final int tx = qnix.sendContext(peer, k, true, buffer, 0, length);
                    qnix.send(tx);
                    qnix.waitForSend(tx, 60, TimeUnit.SECONDS);
                }
            }
            viaSender.join();
            if (null != failed[0])
            {
                throw new IllegalStateException(failed[0]);
            }
            System.out.println("sent");
            final Path hold = Path.of(args[4]);
            while (Files.exists(hold))
            {
                Thread.sleep(20);
            }
            vi.disconnect();
        }
    }
}
