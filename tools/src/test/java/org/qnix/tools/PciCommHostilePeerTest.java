package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplDescriptor;
import org.qnix.pcicomm.ConnectionState;
import org.qnix.pcicomm.PciBuffer;
import org.qnix.pcicomm.PciComm;
import org.qnix.pcicomm.PciCommException;
import org.qnix.pcicomm.PciCommException.Reason;
import org.qnix.pcicomm.PciCommMessage;
import org.qnix.pcicomm.PciConnection;
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
 * A PCIComm peer is untrusted: a client speaking the control protocol through the bare VIPL, keeping
 * to the receive-slot credits (so that nothing but the message itself is wrong), returns a credit
 * count that would wrap the listener's window, exports a buffer of a negative length, or exports more
 * buffers than an end may have preposted; the listener's connection ends in CONNECTION_LOST instead of
 * never sending again or growing its memory without limit. An end itself cannot prepost past that limit.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PciCommHostilePeerTest extends ViplClusterTest
{
    private static final long WAIT_MS = 60_000;
    /** The most buffers an end may have preposted and unfilled (RemoteExports.MAX_EXPORTS). */
    private static final int MAX_EXPORTS = 1 << 16;

    @AfterAll
    static void removeCidLocks() throws Exception
    {
        PciCommTransferTest.removeCidLocks();
    }

    @Test
    void aCreditCountThatWouldWrapTheWindowBreaksTheConnection() throws Exception
    {
        try (PciConnection listener = options().listen("1-0", 41); HostileClient client = new HostileClient(41))
        {
            listener.awaitConnected(WAIT_MS);
            client.send(PciCommMessage.CREDIT, 0x7FFF_FFF0, 0);
            assertConnectionLost(listener, "returned 2147483632 credits");
            TestClusters.await("the listener CLOSED", () -> ConnectionState.CLOSED == listener.state());
        }
    }

    @Test
    void exportsPastTheLimitBreakTheConnectionTheLimitItselfIsTaken() throws Exception
    {
        try (PciConnection listener = options().listen("1-0", 42); HostileClient client = new HostileClient(42))
        {
            listener.awaitConnected(WAIT_MS);
            // 4096 EXPORTs of 16 made-up entries: exactly the limit. Once the listener gave back the 4096
            // credits they took, it took every one of them, and the connection still stands.
            final int perMessage = 16;
            final int messages = MAX_EXPORTS / perMessage;
            for (int i = 0; i < messages; i++)
            {
                client.send(PciCommMessage.EXPORT, HostileClient.OWED, perMessage);
            }
            client.awaitReturned(messages);
            assertEquals(ConnectionState.CONNECTED, listener.state());
            assertNull(listener.tryRecv(), "nothing was written into the listener");

            client.send(PciCommMessage.EXPORT, HostileClient.OWED, 1);
            assertConnectionLost(listener, "exported 1 more buffers with 65536 unfilled");
        }
    }

    @Test
    void anExportOfANegativeLengthBreaksTheConnection() throws Exception
    {
        try (PciConnection listener = options().listen("1-0", 44); HostileClient client = new HostileClient(44))
        {
            listener.awaitConnected(WAIT_MS);
            client.exportLength = -5;
            client.send(PciCommMessage.EXPORT, HostileClient.OWED, 1);
            assertConnectionLost(listener, "an export entry of -5 bytes");
        }
    }

    @Test
    void anEndPrepostsNoMoreThanThePeerTakes() throws Exception
    {
        try (PciConnection listener = options().chunkBytes(8 << 20).listen("1-0", 43))
        {
            for (int i = 0; i < MAX_EXPORTS; i++)
            {
                listener.prepostRecv(listener.allocate(64), 64);
            }
            final PciBuffer one = listener.allocate(64);
            final PciCommException full = assertThrows(PciCommException.class, () -> listener.prepostRecv(one, 64));
            assertEquals(Reason.RESOURCE, full.reason(), full.getMessage());
            assertTrue(full.getMessage().contains("65536 buffers preposted and not filled"), full.getMessage());
            assertEquals(ConnectionState.LISTENING, listener.state(), "the refusal leaves the connection as it was");
        }
    }

    /** The listener's next call ends the connection as CONNECTION_LOST, saying {@code why}. */
    private static void assertConnectionLost(final PciConnection listener, final String why)
    {
        final PciCommException lost = assertThrows(PciCommException.class, () -> listener.recv(WAIT_MS));
        assertEquals(Reason.CONNECTION_LOST, lost.reason(), lost.getMessage());
        assertTrue(lost.getMessage().contains(why), lost.getMessage());
    }

    private static PciComm.Options options()
    {
        return PciComm.options().cluster(dir.name());
    }

    /**
     * A client of a PCIComm listener on node 1-0 written against the bare VIPL: one Reliable Reception
     * VI, 32 receive slots posted before connecting (as PCIComm does), one message sent at a time and
     * only with a credit, every slot the listener filled reposted and owed back in the next message.
     */
    private static final class HostileClient implements AutoCloseable
    {
        static final int OWED = -1;
        private static final int SLOTS = 32;
        private static final int SEND_OFFSET = SLOTS * ViplDescriptor.ALIGNMENT;
        private static final int MESSAGES_OFFSET = SEND_OFFSET + ViplDescriptor.ALIGNMENT;

        private final ViplNic nic;
        private final ViplMemory memory;
        private final MemoryRegion region;
        private final Vi vi;
        private final UnsafeBuffer buffer;
        private final Descriptor send;
        private final PciCommMessage message = new PciCommMessage();
        /** The length of every buffer the client's EXPORTs name. */
        int exportLength = 4096;
        private int credits = SLOTS;
        private int owed;
        private long returned;

        HostileClient(final int cid) throws Exception
        {
            nic = Vipl.openNic("0-0", dir.name());
            try
            {
                final ProtectionTag ptag = nic.createPtag();
                memory = nic.allocate(MESSAGES_OFFSET + (SLOTS + 1) * PciCommMessage.MAX_LENGTH);
                region = nic.registerMem(memory, 0, memory.length(), new MemoryAttributes(ptag, false, false));
                vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_RECEPTION,
                    nic.parameters().maxMessageBytes(), ptag, true, false), null, null);
                buffer = memory.buffer();
                send = memory.descriptor(SEND_OFFSET);
                for (int slot = 0; slot < SLOTS; slot++)
                {
                    postReceive(memory.descriptor(slot * ViplDescriptor.ALIGNMENT));
                }
                final byte[] discriminator = {'P', 'C', 'I', 'C', (byte)cid, (byte)(cid >>> 8), (byte)(cid >>> 16),
                    (byte)(cid >>> 24)};
                nic.connectRequest(vi, new ViplAddress(new NicCoordinates(1, 0), discriminator), WAIT_MS);
            }
            catch (final Exception | Error ex)
            {
                nic.close();
                throw ex;
            }
        }

        /**
         * Sends one control message of {@code type} returning {@code creditsField} credits ({@link #OWED}:
         * those really owed), waiting for a credit first and for its completion after.
         */
        void send(final int type, final int creditsField, final int entries)
        {
            final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (0 == credits)
            {
                assertTrue(System.nanoTime() < deadline, "no credit from the listener");
                takeReceive(vi.recvWait(WAIT_MS));
            }
            takeReceives();
            final int at = MESSAGES_OFFSET + SLOTS * PciCommMessage.MAX_LENGTH;
            message.wrap(buffer, at).type(type).entryCount(entries).credits(OWED == creditsField ? owed : creditsField);
            for (int i = 0; i < entries; i++)
            {
                message.entry(i, 0x1000L * i, 7, exportLength);
            }
            owed = 0;
            credits--;
            send.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1).length(message.length())
                .dataSegment(0, memory.address(at), region.handle(), message.length());
            vi.postSend(send, region);
            assertSame(send, vi.sendWait(WAIT_MS));
            assertEquals(ViplDescriptor.STATUS_DONE, send.status() & ~ViplDescriptor.STATUS_OP_MASK,
                "the send's status 0x" + Integer.toHexString(send.status()));
        }

        /**
         * Sends CREDITs, each returning only what is owed, until the listener has given back {@code count}
         * credits in all. It gives them back 16 or more at a time, so the last few of a burst stay owed
         * until more messages arrive; those it took in order, so every message before them was taken.
         */
        void awaitReturned(final long count)
        {
            while (returned < count)
            {
                send(PciCommMessage.CREDIT, OWED, 0);
            }
        }

        private void takeReceives()
        {
            for (Descriptor d = vi.recvDone(); null != d; d = vi.recvDone())
            {
                takeReceive(d);
            }
        }

        private void takeReceive(final Descriptor d)
        {
            assertTrue(null != d && !d.hasError(), "a receive of the client: " + (null == d ? "none" :
                "status 0x" + Integer.toHexString(d.status())));
            final int slot = d.offset() / ViplDescriptor.ALIGNMENT;
            final PciCommMessage m = message.wrap(buffer, MESSAGES_OFFSET + slot * PciCommMessage.MAX_LENGTH);
            credits += m.credits();
            returned += m.credits();
            postReceive(d);
            owed++;
        }

        private void postReceive(final Descriptor d)
        {
            final int slot = d.offset() / ViplDescriptor.ALIGNMENT;
            d.fields().reset().control(ViplDescriptor.OP_SEND).segmentCount(1)
                .dataSegment(0, memory.address(MESSAGES_OFFSET + slot * PciCommMessage.MAX_LENGTH), region.handle(),
                    PciCommMessage.MAX_LENGTH);
            vi.postRecv(d, region);
        }

        public void close()
        {
            nic.close();
        }
    }
}
