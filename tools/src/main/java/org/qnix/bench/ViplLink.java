package org.qnix.bench;

import java.nio.charset.StandardCharsets;

import org.qnix.abi.NicCoordinates;
import org.qnix.vipl.AsyncError;
import org.qnix.vipl.AsyncErrorHandler;
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
import org.qnix.vipl.ViplNic;

/**
 * One end of the VIPL connection of a benchmark: this node's NIC opened, a ptag, a page of registered
 * memory for descriptors and small messages, and a Reliable Delivery VI (the level MVICH and the
 * CHEMPI device of seed 004 ran on), its queues reporting to a CQ if asked. The benchmark JVM is the
 * server ({@link #accept}), its peer the client ({@link #request}); the discriminator names the pair.
 *
 * <pre>{@code
 * try (ViplLink link = ViplLink.open(cluster, "0-0", 65536, true, 0))
 * {
 *     MemoryRegion in = link.register(65536, true);
 *     link.accept(discriminator);
 * }
 * }</pre>
 */
final class ViplLink implements AutoCloseable
{
    static final long CONNECT_TIMEOUT_MS = 60_000;
    static final int CONTROL_BYTES = 16384;

    final ViplNic nic;
    final ProtectionTag ptag;
    final MemoryRegion control;
    final CompletionQueue cq;
    final Vi vi;

    private ViplLink(final ViplNic nic, final int maxTransfer, final boolean rdmaWrite, final int cqEntries)
    {
        this.nic = nic;
        this.ptag = nic.createPtag();
        this.control = register(CONTROL_BYTES, false);
        this.cq = cqEntries > 0 ? nic.createCq(cqEntries) : null;
        this.vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, maxTransfer, ptag, rdmaWrite, false), cq,
            cq);
    }

    /**
     * @param rdmaWrite  whether the VI takes RDMA writes.
     * @param cqEntries  the entries of a CQ both queues report to, or 0 for none.
     */
    static ViplLink open(final String cluster, final String node, final int maxTransfer, final boolean rdmaWrite,
        final int cqEntries)
    {
        final ViplNic nic = Vipl.openNic(node, cluster);
        // The bench ends a VIPL pair by closing one end's NIC: the other's CONN_LOST is how it stops
        // (its receive is flushed), not an error worth a line in the report.
        nic.onError(AsyncErrorHandler.DEFAULT.ignoring(AsyncError.Code.CONN_LOST));
        try
        {
            return new ViplLink(nic, Math.max(1, maxTransfer), rdmaWrite, cqEntries);
        }
        catch (final RuntimeException ex)
        {
            nic.close();
            throw ex;
        }
    }

    /** @return a discriminator of its own for a benchmark's pair: a previous pair may still be disconnecting. */
    static byte[] discriminator(final String kind, final int instance)
    {
        return (kind + Long.toHexString(ProcessHandle.current().pid()) + ":" + instance)
            .getBytes(StandardCharsets.US_ASCII);
    }

    /** @return {@code bytes} of this node's memory, registered whole. */
    MemoryRegion register(final int bytes, final boolean rdmaWrite)
    {
        return nic.registerMem(nic.allocate(Math.max(1, bytes)), 0, Math.max(1, bytes),
            new MemoryAttributes(ptag, rdmaWrite, false));
    }

    /** @return the descriptor at {@code offset} of the control memory (64-byte aligned). */
    Descriptor descriptor(final int offset)
    {
        return control.memory().descriptor(offset);
    }

    /** The server: waits for the peer's request and accepts it. */
    void accept(final byte[] discriminator)
    {
        nic.connectWait(discriminator, CONNECT_TIMEOUT_MS).accept(vi);
    }

    /** The peer: asks the server at {@code serverNode}. */
    void request(final String serverNode, final byte[] discriminator)
    {
        nic.connectRequest(vi, new ViplAddress(NicCoordinates.parse(serverNode), discriminator), CONNECT_TIMEOUT_MS);
    }

    /** {@code VipCloseNic}: the peer's VI goes to Error, which ends its waits. */
    public void close()
    {
        nic.close();
    }
}
