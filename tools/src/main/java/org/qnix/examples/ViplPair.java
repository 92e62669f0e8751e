package org.qnix.examples;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.lib.GroupMember;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.ReceiveStatus;
import org.qnix.vipl.AsyncError;
import org.qnix.vipl.AsyncErrorHandler;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.MemoryRegion;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplAddress;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * The two ranks of a VIPL example started by {@code qnix run}: rank 0 the server, rank 1 the client,
 * each with its node's NIC opened ({@code VipOpenNic}) and one protection tag. VIA leaves naming to the
 * application (a server is a node and a discriminator its clients know), so the ranks find each other
 * through the QNIX group {@code qnix run} registers them in: the client learns the server's node from
 * it, and the discriminator is a short name of the example and the group's AI, unique per run. The same
 * registration ends the run ({@link #finish()}): the client tells the server, over QNIX, that it took
 * its last completion, so neither disconnects while the other still waits for a VIA completion.
 *
 * <pre>{@code
 * try (ViplPair pair = ViplPair.join("pingpng"))
 * {
 *     if (pair.isExtra()) return;                   // ranks above 1 have nothing to do
 *     Vi vi = pair.nic().createVi(attributes, null, null);
 *     pair.connect(vi, 10_000);                     // connectWait + accept, or connectRequest
 *     ...
 *     pair.finish();
 * }
 * }</pre>
 */
final class ViplPair implements AutoCloseable
{
    private static final int DONE_TAG = 0x5649;
    private static final long TIMEOUT_S = 120;

    private final Qnix qnix;
    private final ViplNic nic;
    private final ProtectionTag ptag;
    private final NicCoordinates serverNode;
    private final byte[] discriminator;

    private ViplPair(final Qnix qnix, final ViplNic nic, final NicCoordinates serverNode, final byte[] discriminator)
    {
        this.qnix = qnix;
        this.nic = nic;
        if (null != nic)
        {
            // VIA: one end's disconnect puts the other's VI in Error with CONN_LOST. At the end of a run
            // that is the peer's ordinary disconnect (which may come while this side still prints its
            // last line); before it, the flushed descriptor fails the run (ViplCompletions.expectDone) and says it all.
            nic.onError(AsyncErrorHandler.DEFAULT.ignoring(AsyncError.Code.CONN_LOST));
        }
        this.ptag = null == nic ? null : nic.createPtag();
        this.serverNode = serverNode;
        this.discriminator = discriminator;
    }

    /**
     * Registers in the QNIX group of {@code qnix run} and, as rank 0 or 1, opens this node's NIC.
     *
     * @param program a short name of the example (at most 7 characters), part of the discriminator.
     */
    static ViplPair join(final String program)
    {
        final Qnix qnix = Qnix.initFromEnvironment();
        try
        {
            final int me = qnix.name().pi();
            if (me > 1)
            {
                return new ViplPair(qnix, null, null, null);
            }
            NicCoordinates server = null;
            for (final GroupMember member : qnix.groupMembers(qnix.name().ai()))
            {
                if (0 == member.name().pi())
                {
                    server = member.node();
                }
            }
            if (null == server)
            {
                throw new IllegalStateException("rank 0, the server, is not in group " + qnix.name().ai());
            }
            // At most 16 bytes (the NIC's maxDiscriminatorLength): the program's short name and the AI in hex.
            final byte[] discriminator = (program + ":" + Integer.toHexString(qnix.name().ai()))
                .getBytes(StandardCharsets.US_ASCII);
            // The cluster is $QNIX_CLUSTER, as for Qnix.
            return new ViplPair(qnix, Vipl.openNic(qnix.node().toString()), server, discriminator);
        }
        catch (final RuntimeException ex)
        {
            qnix.close();
            throw ex;
        }
    }

    /** The largest message the examples take: a transfer of the cluster's default largest. */
    static final int MAX_SIZE = 2 * 1024 * 1024;

    /** {@code --reliability unreliable|reliable-delivery|reliable-reception}. */
    static Reliability reliability(final Arguments a)
    {
        final String text = a.oneOf("unreliable", "reliable-delivery", "reliable-reception");
        return Reliability.valueOf(text.toUpperCase(Locale.ROOT).replace('-', '_'));
    }

    /** @return the level as the options name it. */
    static String name(final Reliability reliability)
    {
        return reliability.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** @throws IllegalArgumentException for a size above {@link #MAX_SIZE}. */
    static void checkSizes(final int[] sizes)
    {
        for (final int size : sizes)
        {
            if (size > MAX_SIZE)
            {
                throw new IllegalArgumentException("--sizes: " + size + " is more than " + MAX_SIZE + " bytes (2 MiB)");
            }
        }
    }

    /** @return true for ranks above 1, which have no part in the example. */
    boolean isExtra()
    {
        return null == nic;
    }

    boolean isServer()
    {
        return 0 == qnix.name().pi();
    }

    ViplNic nic()
    {
        return nic;
    }

    ProtectionTag ptag()
    {
        return ptag;
    }

    /** @return {@code bytes} of memory of this node, registered whole under the pair's ptag. */
    MemoryRegion register(final int bytes, final boolean rdmaWrite)
    {
        final ViplMemory memory = nic.allocate(bytes);
        return nic.registerMem(memory, 0, bytes, new MemoryAttributes(ptag, rdmaWrite, false));
    }

    /** Connects {@code vi}, Idle: the server waits for the client's request and accepts it; the client asks. */
    void connect(final Vi vi, final long timeoutMs)
    {
        if (isServer())
        {
            nic.connectWait(discriminator, timeoutMs).accept(vi);
        }
        else
        {
            nic.connectRequest(vi, new ViplAddress(serverNode, discriminator), timeoutMs);
        }
    }

    /**
     * The end of the run, once this side took its last VIA completion: the client says so to the server
     * with a QNIX Send_Short, which the server waits for. Then either may disconnect.
     */
    void finish()
    {
        final ProcessName peer = new ProcessName(qnix.name().ai(), 1 - qnix.name().pi());
        if (isServer())
        {
            try (QnixBuffer buffer = qnix.allocateBuffer(64))
            {
                buffer.lock();
                final int rx = qnix.recvContext(peer, DONE_TAG, true, buffer, 0, 0);
                qnix.receive(rx);
                qnix.waitForReceive(rx, new ReceiveStatus(), TIMEOUT_S, TimeUnit.SECONDS);
            }
        }
        else
        {
            final int tx = qnix.sendContextShort(peer, DONE_TAG, true, new org.agrona.concurrent.UnsafeBuffer(new byte[1]),
                0, 0);
            qnix.sendShort(tx);
            qnix.waitForSend(tx, TIMEOUT_S, TimeUnit.SECONDS);
        }
    }

    /** Closes the NIC ({@code VipCloseNic}: every VI, region, CQ and ptag of it) and de-registers. */
    public void close()
    {
        try
        {
            if (null != nic)
            {
                nic.close();
            }
        }
        finally
        {
            qnix.close();
        }
    }
}
