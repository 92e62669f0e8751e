package org.qnix.abi;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The "system calls" of the emulated node: the request and reply messages on a node's driver socket
 * ({@code node-X-Y/driver.sock}, DESIGN.md 2). Each message is a type code followed by its fields,
 * big-endian as written by {@link DataOutputStream}. A process holds its connection for its whole
 * registered life: when the connection closes, for any reason, the driver de-registers it (thesis
 * 3.4).
 *
 * <pre>
 *  REGISTER        ai, pi, group, groupSize, osPid, timeoutMs (long)
 *    REGISTERED    index, nicPid, vniAddress (long), vniLength, hpsAddress (long), placement
 *    TIMED_OUT     message (UTF), missing count, then (ai, pi) per missing member
 *    FAILED        Doorbell or error code, message (UTF)
 *  DEREGISTER      (no fields)
 *    DEREGISTERED
 *  GROUP_QUERY     group
 *    GROUP_INFO    expectedSize, count, then (ai, pi, node coordinates) per member
 *  BUFFER_ALLOCATE length, first page offset, contiguous (0/1)
 *    BUFFER        region id, page count, then each page's physical address (long)
 *  BUFFER_POOL     pages (at most Q; once per process; locked for life, written into the VNI)
 *    BUFFER        region id, page count, then each page's physical address (long)
 *  BUFFER_LOCK     region id                  (nests)
 *  BUFFER_UNLOCK   region id
 *    LOCK_COUNT    the region's lock count after the call
 *  BUFFER_FREE     region id                  (a locked region is unlocked first)
 *    OK
 *  Any of the buffer requests may instead be answered with FAILED.
 *
 *  VIA (issue 14), on a connection of its own (a JVM may hold a QNIX and a VIA registration at once):
 *  VIA_REGISTER            osPid, timeoutMs (long)
 *    VIA_REGISTERED        index, nicPid, vniAddress (long), vniLength, hpsAddress (long),
 *                          structuresAddress (long), structuresPages, placement
 *  VIA_PTAG_CREATE         (no fields)
 *    VIA_HANDLE            the ptag
 *  VIA_PTAG_DESTROY        ptag                                   (refused while a VI or region uses it)
 *  VIA_REGISTER_MEM        allocation id, offset (long), length (long), ptag, attributes
 *    VIA_HANDLE            the memory handle
 *  VIA_DEREGISTER_MEM      memory handle
 *  VIA_SET_MEM_ATTRIBUTES  memory handle, ptag, attributes
 *  VIA_CQ_CREATE           entries
 *    VIA_CQ                cq, page count, then each ring page's physical address (long)
 *  VIA_CQ_DESTROY          cq                                     (refused while a VI uses it)
 *  VIA_CQ_RESIZE           cq, entries      (the NIC moves the queued entries to a new ring: Via_Resize_Cq)
 *    VIA_CQ                cq, page count, then each page of the new ring (long)
 *  VIA_VI_CREATE           ptag, attributes, reliability, maxTransfer, sendCq, receiveCq (-1: none)
 *    VIA_VI                vi (NIC VI table index), number (its completion lines' position)
 *  VIA_VI_DESTROY          vi                                     (refused unless Idle)
 *  VIA_CONNECT_WAIT        discriminator (length, bytes), timeoutMs (long)       (server; blocks)
 *    VIA_CONNECTION_ASKED  handle, client node (packed), client VI's reliability, maxTransfer, attributes
 *  VIA_CONNECT_ACCEPT      handle, vi                              (both VIs Connected)
 *  VIA_CONNECT_REJECT      handle
 *  VIA_CONNECT_REQUEST     vi, server node (packed), discriminator (length, bytes), timeoutMs (long)
 *    VIA_CONNECTED         server node (packed), server VI's reliability, maxTransfer, attributes
 *  VIA_DISCONNECT          vi                                      (Idle; a connected peer goes to Error)
 *  VIA_CONNECT_PEER_REQUEST vi, local discriminator (length, bytes), remote node (packed),
 *                          remote discriminator (length, bytes), timeoutMs (long)   (does not block)
 *    OK                    the VI is Connect Pending
 *  VIA_CONNECT_PEER_DONE   vi            (does not block; VIA_FAILED NOT_DONE while unmatched)
 *  VIA_CONNECT_PEER_WAIT   vi            (blocks until matched or the request's timeout)
 *    VIA_CONNECTED         the peer's node (packed), its VI's reliability, maxTransfer, attributes
 *  VIA_VI_QUERY            vi
 *    VIA_HANDLE            the VI's State in its NIC's VI table (ViTableEntry.STATE_*)
 *    OK                    for each request with no other answer
 *  Any VIA request may instead be answered VIA_FAILED: ViplResult code, message (UTF). BUFFER_ALLOCATE
 *  and BUFFER_FREE serve a VIA process too; BUFFER_FREE of memory with registered regions is refused.
 *
 *  placement: OFF_NIC_CPU or ON_NIC_CPU, where the driver advises the process to run while it is
 *  registered (issue 13); the libraries follow it with NicProcessor.place. When other processes
 *  leave, the driver may move a process to the other side itself (NicProcessor.moveProcess).
 * </pre>
 */
public final class DriverProtocol
{
    public static final int REGISTER = 1;
    public static final int REGISTERED = 2;
    public static final int TIMED_OUT = 3;
    public static final int FAILED = 4;
    public static final int DEREGISTER = 5;
    public static final int DEREGISTERED = 6;
    public static final int GROUP_QUERY = 7;
    public static final int GROUP_INFO = 8;
    public static final int BUFFER_ALLOCATE = 9;
    public static final int BUFFER_POOL = 10;
    public static final int BUFFER = 11;
    public static final int BUFFER_LOCK = 12;
    public static final int BUFFER_UNLOCK = 13;
    public static final int LOCK_COUNT = 14;
    public static final int BUFFER_FREE = 15;
    public static final int OK = 16;

    public static final int VIA_REGISTER = 32;
    public static final int VIA_REGISTERED = 33;
    public static final int VIA_PTAG_CREATE = 34;
    public static final int VIA_HANDLE = 35;
    public static final int VIA_PTAG_DESTROY = 36;
    public static final int VIA_REGISTER_MEM = 37;
    public static final int VIA_DEREGISTER_MEM = 38;
    public static final int VIA_SET_MEM_ATTRIBUTES = 39;
    public static final int VIA_CQ_CREATE = 40;
    public static final int VIA_CQ = 41;
    public static final int VIA_CQ_DESTROY = 42;
    public static final int VIA_VI_CREATE = 43;
    public static final int VIA_VI = 44;
    public static final int VIA_VI_DESTROY = 45;
    public static final int VIA_FAILED = 46;
    public static final int VIA_CONNECT_WAIT = 47;
    public static final int VIA_CONNECTION_ASKED = 48;
    public static final int VIA_CONNECT_ACCEPT = 49;
    public static final int VIA_CONNECT_REJECT = 50;
    public static final int VIA_CONNECT_REQUEST = 51;
    public static final int VIA_CONNECTED = 52;
    public static final int VIA_DISCONNECT = 53;
    public static final int VIA_VI_QUERY = 54;
    public static final int VIA_CONNECT_PEER_REQUEST = 55;
    public static final int VIA_CONNECT_PEER_DONE = 56;
    public static final int VIA_CONNECT_PEER_WAIT = 57;
    public static final int VIA_CQ_RESIZE = 58;
    /** The last VIA request or reply code. */
    public static final int VIA_LAST = VIA_CQ_RESIZE;

    /** FAILED code for a request the driver refuses before touching the NIC. */
    public static final int REFUSED = 1;
    /** FAILED code for a request that needs a NIC whose control program does not run its loop. */
    public static final int NIC_DEAD = 2;

    /** Placement in REGISTERED and VIA_REGISTERED: run off the NICs' CPU. */
    public static final int OFF_NIC_CPU = 0;
    /** Placement in REGISTERED and VIA_REGISTERED: run on the NICs' CPU, beside the firmware. */
    public static final int ON_NIC_CPU = 1;

    /** Longest accepted message text, so a bad peer cannot make the other side allocate much. */
    public static final int MAX_TEXT = 64 * 1024;

    /**
     * The longest wait a request's {@code timeoutMs} may ask for (a century): long enough to mean "for
     * ever", short enough to add to a clock. Both ends cap at it: the driver the {@code timeoutMs} it reads,
     * whatever a client sent, and libhost's {@code DriverProxy} how long it waits for the reply (this plus
     * its grace), so that neither side's deadline overflows.
     */
    public static final long LONGEST_WAIT_MS = 36_500L * 24 * 3600 * 1000;

    /**
     * How long the driver waits, within one request, for room in its NIC's Driver Command Queue, and as
     * long again for the NIC's Driver Doorbell once the command is posted, before it gives the NIC up (a
     * dead NIC ends the second wait sooner). A client's grace for a reply covers the requests that post
     * two commands ({@code VIA_CONNECT_ACCEPT} and {@code VIA_DISCONNECT}, one per NIC of the connection):
     * a client that gave up first would close its connection, which the driver takes for the process's
     * death, and the driver would free pages the library still maps.
     */
    public static final long NIC_COMMAND_TIMEOUT_MS = 10_000;

    private DriverProtocol()
    {
    }

    /** @return the placement field for {@code onNicCpu}. */
    public static int placement(final boolean onNicCpu)
    {
        return onNicCpu ? ON_NIC_CPU : OFF_NIC_CPU;
    }

    /**
     * @return whether a placement field read from {@code in} says the NICs' CPU.
     * @throws IOException if it is neither placement.
     */
    public static boolean readPlacement(final DataInputStream in) throws IOException
    {
        final int placement = in.readInt();
        if (OFF_NIC_CPU != placement && ON_NIC_CPU != placement)
        {
            throw new IOException("bad placement " + placement + " on the driver socket");
        }
        return ON_NIC_CPU == placement;
    }

    public static void writeText(final DataOutputStream out, final String text) throws IOException
    {
        final byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        final int length = Math.min(bytes.length, MAX_TEXT);
        out.writeInt(length);
        out.write(bytes, 0, length);
    }

    public static String readText(final DataInputStream in) throws IOException
    {
        final int length = in.readInt();
        if (length < 0 || length > MAX_TEXT)
        {
            throw new IOException("bad text length " + length + " on the driver socket");
        }
        final byte[] bytes = new byte[length];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
