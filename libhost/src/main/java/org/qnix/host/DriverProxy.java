package org.qnix.host;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Timer;
import java.util.TimerTask;
import java.util.function.BiConsumer;

import org.agrona.CloseHelper;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ViplResult;

/**
 * A process's end of its node's driver socket: the "system calls" of {@code DriverProtocol}, each a
 * request and its reply: QNIX's (register, de-register, group query, buffers: allocate, pool, lock,
 * unlock, free) and VIA's kernel agent's ({@code via*}: register, ptags, memory regions, CQs, VIs and
 * their connections, issue 14),
 * like Aeron's {@code DriverProxy} for its media driver. Nothing here knows an API: libqnix and libvipl
 * both speak to the driver through it and turn its {@link DriverException}s into their own errors.
 *
 * <p>Every exchange has a watchdog: if the driver does not answer within the request's time (a grace of
 * {@link #DRIVER_GRACE_MS} for the quick ones), the connection is closed, which ends the exchange with
 * a {@link DriverException}. The connection lives as long as the registration: when it closes, for any
 * reason, the driver de-registers the process (thesis 3.4).
 *
 * <pre>{@code
 * try (DriverProxy driver = DriverProxy.connect(dir.driverSocket(node), 5_000, "the driver of node " + node))
 * {
 *     Registration registration = driver.register(new ProcessName(7, 0), 7, 1, 5_000, 64);
 *     BufferRegion region = driver.allocateBuffer(4096, 0, true, 1);
 *     int lockCount = driver.lockBuffer(region.id(), true);
 * }
 * }</pre>
 *
 * <p>Thread safe: one exchange at a time (the methods are synchronized), as the socket is one stream.
 */
public final class DriverProxy implements AutoCloseable
{
    /**
     * Extra time a reply from the driver may take beyond the request's own timeout: the longest a request
     * takes in a driver that runs, two NIC commands each waiting for queue room and for their NIC
     * ({@link DriverProtocol#NIC_COMMAND_TIMEOUT_MS}), and 5 s more. The watchdog must not fire before
     * that: the connection it closes is the registration's, which is lost with it (the driver keeps
     * the process's pages from others until it exits, as the library still maps them). Only a driver
     * that stopped (SIGSTOP, a debugger) takes this long to be given up.
     */
    public static final long DRIVER_GRACE_MS = 4 * DriverProtocol.NIC_COMMAND_TIMEOUT_MS + 5_000;
    /** Longer timeouts are taken as this: the driver's own cap, {@link DriverProtocol#LONGEST_WAIT_MS}. */
    public static final long LONGEST_TIMEOUT_MS = DriverProtocol.LONGEST_WAIT_MS;
    private static final Timer WATCHDOG = new Timer("qnix-driver-watchdog", true);

    private final SocketChannel channel;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final String what;

    private DriverProxy(final SocketChannel channel, final String what)
    {
        this.channel = channel;
        // Buffered: a DataInputStream over a channel makes a system call per byte of every field.
        this.in = new DataInputStream(new BufferedInputStream(Channels.newInputStream(channel)));
        this.out = new DataOutputStream(new BufferedOutputStream(Channels.newOutputStream(channel)));
        this.what = what;
    }

    /**
     * Connects to a driver socket. A driver that does not accept (stopped, or its queue of connections
     * full) leaves {@code connect()} blocked: the watchdog closes the channel when {@code timeoutMs} is over.
     *
     * @param what names the driver in messages, e.g. "the driver of node 1-0".
     * @throws DriverException if it cannot connect in time; its cause is the I/O error.
     */
    public static DriverProxy connect(final Path socket, final long timeoutMs, final String what)
    {
        final SocketChannel channel;
        try
        {
            channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        }
        catch (final IOException ex)
        {
            throw new DriverException("cannot open a socket for " + what, ex);
        }
        try
        {
            exchange(channel, () -> channel.connect(UnixDomainSocketAddress.of(socket)), timeoutMs, what);
            return new DriverProxy(channel, what);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(channel);
            throw ex;
        }
    }

    /**
     * REGISTER: waits up to {@code timeoutMs} (plus a grace) for the driver to register the process and
     * its whole group on every NIC.
     *
     * @param maxMissing the most missing names read from a TIMED_OUT reply (the Name Table's size).
     * @throws RegistrationTimeoutException if the group was not complete in time.
     * @throws DriverException              if the driver refuses (FAILED, with its code) or is lost.
     */
    public synchronized Registration register(final ProcessName name, final int group, final int groupSize,
        final long timeoutMs, final int maxMissing)
    {
        final Object reply = call(() ->
        {
            out.writeInt(DriverProtocol.REGISTER);
            out.writeInt(name.ai());
            out.writeInt(name.pi());
            out.writeInt(group);
            out.writeInt(groupSize);
            out.writeInt((int)ProcessHandle.current().pid());
            out.writeLong(timeoutMs);
            out.flush();
            final int type = in.readInt();
            switch (type)
            {
                case DriverProtocol.REGISTERED:
                    return new Registration(in.readInt(), in.readInt(), in.readLong(), in.readInt(), in.readLong(),
                        DriverProtocol.readPlacement(in));

                case DriverProtocol.TIMED_OUT:
                {
                    final String message = DriverProtocol.readText(in);
                    final int count = in.readInt();
                    final List<ProcessName> missing = new ArrayList<>();
                    for (int i = 0; i < Math.min(count, maxMissing); i++)
                    {
                        missing.add(new ProcessName(in.readInt(), in.readInt()));
                    }
                    return new RegistrationTimeoutException(message, missing);
                }

                case DriverProtocol.FAILED:
                {
                    final int code = in.readInt();
                    return new DriverException(code, DriverProtocol.readText(in));
                }

                default:
                    return new DriverException(type, "unexpected driver reply " + type);
            }
        }, replyWithin(timeoutMs));
        if (reply instanceof DriverException)
        {
            throw (DriverException)reply;
        }
        return (Registration)reply;
    }

    /**
     * DEREGISTER, best effort: a driver that is gone de-registers the process anyway when it sees the
     * connection close.
     */
    public synchronized void deregister()
    {
        try
        {
            call(() ->
            {
                out.writeInt(DriverProtocol.DEREGISTER);
                out.flush();
                return in.readInt();
            }, DRIVER_GRACE_MS);
        }
        catch (final DriverException ex)
        {
            // The driver is gone: it de-registers us anyway when it sees the connection close.
        }
    }

    /**
     * GROUP_QUERY: the members of a group as this node's NIC knows them, each given to {@code member}
     * with its node, or a null node if the NIC does not know it.
     */
    public synchronized void groupMembers(final int group, final BiConsumer<ProcessName, NicCoordinates> member)
    {
        call(() ->
        {
            out.writeInt(DriverProtocol.GROUP_QUERY);
            out.writeInt(group);
            out.flush();
            final int type = in.readInt();
            if (DriverProtocol.GROUP_INFO != type)
            {
                // FAILED (the NIC's tables had no consistent snapshot) read whole; anything else closes.
                throw failure(type, "a group query");
            }
            in.readInt();
            final int count = in.readInt();
            for (int i = 0; i < count; i++)
            {
                final ProcessName name = new ProcessName(in.readInt(), in.readInt());
                final int packed = in.readInt();
                member.accept(name, packed < 0 ? null : NicCoordinates.unpack(packed));
            }
            return null;
        }, DRIVER_GRACE_MS);
    }

    /**
     * BUFFER_ALLOCATE: {@code length} bytes from {@code firstPageOffset} into the first page, physically
     * contiguous or scattered.
     *
     * @param expectedPages the pages such a buffer spans; a reply of another count is out of protocol.
     */
    public synchronized BufferRegion allocateBuffer(final int length, final int firstPageOffset,
        final boolean contiguous, final int expectedPages)
    {
        return call(() ->
        {
            out.writeInt(DriverProtocol.BUFFER_ALLOCATE);
            out.writeInt(length);
            out.writeInt(firstPageOffset);
            out.writeInt(contiguous ? 1 : 0);
            out.flush();
            return readRegion(expectedPages, "a buffer of " + length + " bytes");
        }, DRIVER_GRACE_MS);
    }

    /** BUFFER_POOL: the process's Buffer Pool of {@code pages} pages, locked for life. */
    public synchronized BufferRegion bufferPool(final int pages)
    {
        return call(() ->
        {
            out.writeInt(DriverProtocol.BUFFER_POOL);
            out.writeInt(pages);
            out.flush();
            return readRegion(pages, "a buffer pool of " + pages + " pages");
        }, DRIVER_GRACE_MS);
    }

    /** BUFFER_LOCK or BUFFER_UNLOCK. @return the region's lock count after it. */
    public synchronized int lockBuffer(final int regionId, final boolean lock)
    {
        return call(() ->
        {
            out.writeInt(lock ? DriverProtocol.BUFFER_LOCK : DriverProtocol.BUFFER_UNLOCK);
            out.writeInt(regionId);
            out.flush();
            final int type = in.readInt();
            if (DriverProtocol.LOCK_COUNT == type)
            {
                return in.readInt();
            }
            throw failure(type, lock ? "a buffer lock" : "a buffer unlock");
        }, DRIVER_GRACE_MS);
    }

    /** BUFFER_FREE: gives a region's pages back (a locked region is unlocked first). */
    public synchronized void freeBuffer(final int regionId)
    {
        call(() ->
        {
            out.writeInt(DriverProtocol.BUFFER_FREE);
            out.writeInt(regionId);
            out.flush();
            final int type = in.readInt();
            if (DriverProtocol.OK != type)
            {
                throw failure(type, "freeing buffer region " + regionId);
            }
            return null;
        }, DRIVER_GRACE_MS);
    }

    /**
     * VIA_REGISTER (issue 14): makes this connection's process a VIA process of the node; no name and no
     * group, so it does not wait for other NICs.
     *
     * @throws ViaDriverException if the driver refuses with a VIPL code.
     * @throws DriverException    if the NIC refuses or is dead, or the driver is lost.
     */
    public synchronized ViaRegistration viaRegister(final long timeoutMs)
    {
        return call(() ->
        {
            out.writeInt(DriverProtocol.VIA_REGISTER);
            out.writeInt((int)ProcessHandle.current().pid());
            out.writeLong(timeoutMs);
            out.flush();
            viaReply(DriverProtocol.VIA_REGISTERED, "a VIA registration");
            return new ViaRegistration(in.readInt(), in.readInt(), in.readLong(), in.readInt(), in.readLong(),
                in.readLong(), in.readInt(), DriverProtocol.readPlacement(in));
        }, replyWithin(timeoutMs));
    }

    /** VIA_PTAG_CREATE. @return the ptag. */
    public synchronized int viaCreatePtag()
    {
        return viaInt(DriverProtocol.VIA_PTAG_CREATE, DriverProtocol.VIA_HANDLE, "a ptag");
    }

    /** VIA_PTAG_DESTROY. */
    public synchronized void viaDestroyPtag(final int ptag)
    {
        viaInt(DriverProtocol.VIA_PTAG_DESTROY, DriverProtocol.OK, "destroying ptag " + ptag, ptag);
    }

    /** VIA_REGISTER_MEM: bytes {@code [offset, offset + length)} of DMA allocation {@code allocation}. @return the memory handle. */
    public synchronized int viaRegisterMem(final int allocation, final long offset, final long length, final int ptag,
        final int attributes)
    {
        return call(() ->
        {
            out.writeInt(DriverProtocol.VIA_REGISTER_MEM);
            out.writeInt(allocation);
            out.writeLong(offset);
            out.writeLong(length);
            out.writeInt(ptag);
            out.writeInt(attributes);
            out.flush();
            viaReply(DriverProtocol.VIA_HANDLE, "registering memory");
            return in.readInt();
        }, DRIVER_GRACE_MS);
    }

    /** VIA_DEREGISTER_MEM. */
    public synchronized void viaDeregisterMem(final int handle)
    {
        viaInt(DriverProtocol.VIA_DEREGISTER_MEM, DriverProtocol.OK, "deregistering memory", handle);
    }

    /** VIA_SET_MEM_ATTRIBUTES. */
    public synchronized void viaSetMemAttributes(final int handle, final int ptag, final int attributes)
    {
        viaInt(DriverProtocol.VIA_SET_MEM_ATTRIBUTES, DriverProtocol.OK, "setting memory attributes", handle, ptag,
            attributes);
    }

    /** VIA_CQ_CREATE. @return the CQ (as the region's id) and the pages of its ring. */
    public synchronized BufferRegion viaCreateCq(final int entries, final int expectedPages)
    {
        return call(() ->
        {
            out.writeInt(DriverProtocol.VIA_CQ_CREATE);
            out.writeInt(entries);
            out.flush();
            return readCq(entries, expectedPages);
        }, DRIVER_GRACE_MS);
    }

    /**
     * VIA_CQ_RESIZE: the NIC moves the CQ's queued entries to a new ring (Via_Resize_Cq).
     *
     * @return the CQ and the pages of its new ring.
     */
    public synchronized BufferRegion viaResizeCq(final int cq, final int entries, final int expectedPages)
    {
        return call(() ->
        {
            out.writeInt(DriverProtocol.VIA_CQ_RESIZE);
            out.writeInt(cq);
            out.writeInt(entries);
            out.flush();
            return readCq(entries, expectedPages);
        }, DRIVER_GRACE_MS);
    }

    /** The VIA_CQ answer: the CQ and the pages of a ring of {@code entries}. */
    private BufferRegion readCq(final int entries, final int expectedPages) throws IOException
    {
        viaReply(DriverProtocol.VIA_CQ, "a completion queue");
        final int cq = in.readInt();
        final int count = in.readInt();
        if (count != expectedPages)
        {
            CloseHelper.quietClose(channel);
            throw new DriverException(DriverProtocol.REFUSED, what + " answered a CQ of " + entries +
                " entries with " + count + " pages, expected " + expectedPages);
        }
        final long[] pages = new long[count];
        for (int i = 0; i < count; i++)
        {
            pages[i] = in.readLong();
        }
        return new BufferRegion(cq, pages);
    }

    /** VIA_CQ_DESTROY. */
    public synchronized void viaDestroyCq(final int cq)
    {
        viaInt(DriverProtocol.VIA_CQ_DESTROY, DriverProtocol.OK, "destroying CQ " + cq, cq);
    }

    /**
     * VIA_VI_CREATE (send and receive CQ -1 for none).
     *
     * @return the VI's index in the NIC's VI table (high 32 bits) and its number in the process (low 32).
     */
    public synchronized long viaCreateVi(final int ptag, final int attributes, final int reliability,
        final int maxTransfer, final int sendCq, final int receiveCq)
    {
        return call(() ->
        {
            out.writeInt(DriverProtocol.VIA_VI_CREATE);
            out.writeInt(ptag);
            out.writeInt(attributes);
            out.writeInt(reliability);
            out.writeInt(maxTransfer);
            out.writeInt(sendCq);
            out.writeInt(receiveCq);
            out.flush();
            viaReply(DriverProtocol.VIA_VI, "a VI");
            final int vi = in.readInt();
            return ((long)vi << 32) | (in.readInt() & 0xFFFF_FFFFL);
        }, DRIVER_GRACE_MS);
    }

    /** VIA_VI_DESTROY. */
    public synchronized void viaDestroyVi(final int vi)
    {
        viaInt(DriverProtocol.VIA_VI_DESTROY, DriverProtocol.OK, "destroying VI " + vi, vi);
    }

    /** VIA_CONNECT_WAIT: blocks up to {@code timeoutMs} for a client's request to this node and discriminator. */
    public synchronized ViaPeer viaConnectWait(final byte[] discriminator, final long timeoutMs)
    {
        return call(() ->
        {
            out.writeInt(DriverProtocol.VIA_CONNECT_WAIT);
            out.writeInt(discriminator.length);
            out.write(discriminator);
            out.writeLong(timeoutMs);
            out.flush();
            viaReply(DriverProtocol.VIA_CONNECTION_ASKED, "waiting for a connection request");
            return new ViaPeer(in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readInt());
        }, replyWithin(timeoutMs));
    }

    /** VIA_CONNECT_ACCEPT of an asked request with VI {@code vi}. */
    public synchronized void viaConnectAccept(final int handle, final int vi)
    {
        viaInt(DriverProtocol.VIA_CONNECT_ACCEPT, DriverProtocol.OK, "accepting a connection", handle, vi);
    }

    /** VIA_CONNECT_REJECT of an asked request. */
    public synchronized void viaConnectReject(final int handle)
    {
        viaInt(DriverProtocol.VIA_CONNECT_REJECT, DriverProtocol.OK, "rejecting a connection", handle);
    }

    /** VIA_CONNECT_REQUEST: blocks up to {@code timeoutMs} until a server on the node and discriminator answers. */
    public synchronized ViaPeer viaConnectRequest(final int vi, final int serverNode, final byte[] discriminator,
        final long timeoutMs)
    {
        return call(() ->
        {
            out.writeInt(DriverProtocol.VIA_CONNECT_REQUEST);
            out.writeInt(vi);
            out.writeInt(serverNode);
            out.writeInt(discriminator.length);
            out.write(discriminator);
            out.writeLong(timeoutMs);
            out.flush();
            viaReply(DriverProtocol.VIA_CONNECTED, "a connection request");
            return new ViaPeer(0, in.readInt(), in.readInt(), in.readInt(), in.readInt());
        }, replyWithin(timeoutMs));
    }

    /** VIA_CONNECT_PEER_REQUEST: posts a peer-to-peer request and returns at once. */
    public synchronized void viaConnectPeerRequest(final int vi, final byte[] localDiscriminator, final int remoteNode,
        final byte[] remoteDiscriminator, final long timeoutMs)
    {
        call(() ->
        {
            out.writeInt(DriverProtocol.VIA_CONNECT_PEER_REQUEST);
            out.writeInt(vi);
            out.writeInt(localDiscriminator.length);
            out.write(localDiscriminator);
            out.writeInt(remoteNode);
            out.writeInt(remoteDiscriminator.length);
            out.write(remoteDiscriminator);
            out.writeLong(timeoutMs);
            out.flush();
            viaReply(DriverProtocol.OK, "a peer connection request");
            return null;
        }, DRIVER_GRACE_MS);
    }

    /**
     * VIA_CONNECT_PEER_DONE ({@code block} false; a {@link ViaDriverException} NOT_DONE while unmatched) or
     * VIA_CONNECT_PEER_WAIT (blocks up to {@code timeoutMs}, the request's own).
     */
    public synchronized ViaPeer viaConnectPeerOutcome(final int vi, final boolean block, final long timeoutMs)
    {
        return call(() ->
        {
            out.writeInt(block ? DriverProtocol.VIA_CONNECT_PEER_WAIT : DriverProtocol.VIA_CONNECT_PEER_DONE);
            out.writeInt(vi);
            out.flush();
            viaReply(DriverProtocol.VIA_CONNECTED, "a peer connection's outcome");
            return new ViaPeer(0, in.readInt(), in.readInt(), in.readInt(), in.readInt());
        }, replyWithin(timeoutMs));
    }

    /** VIA_VI_QUERY. @return the VI's State in its NIC's VI table. */
    public synchronized int viaQueryVi(final int vi)
    {
        return viaInt(DriverProtocol.VIA_VI_QUERY, DriverProtocol.VIA_HANDLE, "querying VI " + vi, vi);
    }

    /** VIA_DISCONNECT. */
    public synchronized void viaDisconnect(final int vi)
    {
        viaInt(DriverProtocol.VIA_DISCONNECT, DriverProtocol.OK, "disconnecting VI " + vi, vi);
    }

    /** A VIA request of int fields whose reply is {@code replyType} with one int (VIA_HANDLE) or none (OK). */
    private int viaInt(final int type, final int replyType, final String request, final int... fields)
    {
        return call(() ->
        {
            out.writeInt(type);
            for (final int field : fields)
            {
                out.writeInt(field);
            }
            out.flush();
            viaReply(replyType, request);
            return DriverProtocol.OK == replyType ? 0 : in.readInt();
        }, DRIVER_GRACE_MS);
    }

    /** Reads a reply's type: {@code expected}, or a VIA_FAILED (thrown as {@link ViaDriverException}) or FAILED. */
    private void viaReply(final int expected, final String request) throws IOException
    {
        final int type = in.readInt();
        if (expected == type)
        {
            return;
        }
        if (DriverProtocol.VIA_FAILED == type)
        {
            final int code = in.readInt();
            final String message = DriverProtocol.readText(in);
            if (code < 0 || code >= ViplResult.values().length)
            {
                CloseHelper.quietClose(channel);
                throw new DriverException(type, what + " answered " + request + " with VIPL code " + code);
            }
            throw new ViaDriverException(ViplResult.of(code), message);
        }
        throw failure(type, request);
    }

    /** Closes the connection: the driver de-registers the process if it has not yet. Idempotent. */
    public void close()
    {
        CloseHelper.quietClose(channel);
    }

    public boolean isOpen()
    {
        return channel.isOpen();
    }

    private BufferRegion readRegion(final int expectedPages, final String request) throws IOException
    {
        final int type = in.readInt();
        if (DriverProtocol.BUFFER != type)
        {
            throw failure(type, request);
        }
        final int id = in.readInt();
        final int count = in.readInt();
        if (count != expectedPages)
        {
            // The stream cannot be trusted past a reply of the wrong shape.
            CloseHelper.quietClose(channel);
            throw new DriverException(DriverProtocol.REFUSED, what + " answered " + request + " with " + count +
                " pages, expected " + expectedPages);
        }
        final long[] pages = new long[count];
        for (int i = 0; i < count; i++)
        {
            pages[i] = in.readLong();
        }
        return new BufferRegion(id, pages);
    }

    /** @return the exception for a FAILED reply (read here), or for an unexpected reply type. */
    private DriverException failure(final int type, final String request) throws IOException
    {
        if (DriverProtocol.FAILED == type)
        {
            final int code = in.readInt();
            return new DriverException(code, DriverProtocol.readText(in));
        }
        // The stream cannot be trusted past an unexpected reply.
        CloseHelper.quietClose(channel);
        return new DriverException(type, "unexpected driver reply " + type + " to " + request);
    }

    private interface Exchange<T>
    {
        T run() throws IOException;
    }

    private <T> T call(final Exchange<T> exchange, final long timeoutMs)
    {
        return exchange(channel, exchange, timeoutMs, what);
    }

    /** Runs a request/reply exchange, closing the connection if the driver does not answer in time. */
    private static <T> T exchange(
        final SocketChannel channel, final Exchange<T> exchange, final long timeoutMs, final String what)
    {
        final TimerTask watchdog = new TimerTask()
        {
            public void run()
            {
                CloseHelper.quietClose(channel);
            }
        };
        WATCHDOG.schedule(watchdog, Math.max(1, Math.min(timeoutMs, LONGEST_TIMEOUT_MS + DRIVER_GRACE_MS)));
        try
        {
            return exchange.run();
        }
        catch (final IOException ex)
        {
            throw new DriverException("lost the connection to " + what +
                " (cluster down, daemon dead, or no answer within " + timeoutMs + " ms)", ex);
        }
        finally
        {
            watchdog.cancel();
        }
    }

    /**
     * @return how long the reply to a request that waits up to {@code timeoutMs} may take: the driver
     * reads a negative timeout as 0 and a longer one than {@link #LONGEST_TIMEOUT_MS} as that, so the
     * watchdog does too, plus the grace.
     */
    private static long replyWithin(final long timeoutMs)
    {
        return saturatedAdd(Math.min(Math.max(0, timeoutMs), LONGEST_TIMEOUT_MS), DRIVER_GRACE_MS);
    }

    private static long saturatedAdd(final long a, final long b)
    {
        final long sum = a + b;
        return sum < a ? Long.MAX_VALUE : sum;
    }
}
