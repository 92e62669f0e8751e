package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import org.qnix.abi.DriverProtocol;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.firmware.NodeImage;

/**
 * One process's connection to its driver with the socket taken out: each request written as a client
 * writes it ({@link DriverProtocol}), handed to a {@link DriverRequests}, and its reply decoded from the
 * bytes the driver wrote. The reply methods take the next reply, fail the test naming the text of a
 * FAILED that came instead of the expected one, and return its fields.
 *
 * <pre>{@code
 * SocketlessConnection c = cluster.connect(0);
 * Registered r = c.register(1, 0, 1, 1, 10_000).registered();
 * int region = c.send(DriverProtocol.BUFFER_ALLOCATE, 2048, 0, 1).buffer().id();
 * assertEquals(1, c.send(DriverProtocol.BUFFER_LOCK, region).lockCount());
 * }</pre>
 */
final class SocketlessConnection implements AutoCloseable
{
    final DriverRequests requests;
    private final ByteArrayOutputStream replyBytes = new ByteArrayOutputStream();
    private int replyRead;
    private boolean registerRequestSeen;
    private boolean registrationHeld;
    private boolean open = true;
    /** The process closed its end: replies fail as on a socket whose peer went (EPIPE). */
    private volatile boolean repliesFail;
    /** ... and the driver can see it ({@link ClientHangUp}). */
    private volatile boolean hungUp;

    record Registered(int index, int nicPid, long vniAddress, int vniLength, long hpsAddress, boolean onNicCpu)
    {
    }

    record Failed(int code, String message)
    {
    }

    record TimedOut(String message, List<ProcessName> missing)
    {
    }

    record Buffer(int id, long[] addresses)
    {
    }

    record Member(ProcessName name, NicCoordinates node)
    {
    }

    record GroupInfo(int expectedSize, List<Member> members)
    {
    }

    SocketlessConnection(final NodeImage image, final ProcessRegistrar registrar, final PeerCredentials caller)
    {
        final DriverRequests.Registrations registrations = new DriverRequests.Registrations()
        {
            public void registering()
            {
                registerRequestSeen = true;
            }

            public void settled(final boolean held)
            {
                registrationHeld = held;
            }
        };
        final OutputStream replies = breakablePipe(replyBytes, () -> repliesFail);
        requests = new DriverRequests(image, registrar, caller, new DriverReplies(replies), registrations, () -> hungUp);
    }

    /**
     * A connection's reply stream as the driver sees it: each write fails as on a socket whose peer went
     * (EPIPE) while {@code broken} says so, and goes to {@code out} otherwise.
     *
     * <pre>{@code
     * OutputStream gone = SocketlessConnection.breakablePipe(OutputStream.nullOutputStream(), () -> true);
     * DriverReplies replies = new DriverReplies(gone);
     * }</pre>
     */
    static OutputStream breakablePipe(final OutputStream out, final BooleanSupplier broken)
    {
        return new OutputStream()
        {
            public void write(final int b) throws IOException
            {
                write(new byte[] {(byte)b}, 0, 1);
            }

            public void write(final byte[] b, final int off, final int len) throws IOException
            {
                if (broken.getAsBoolean())
                {
                    throw new IOException("Broken pipe (the process closed its connection)");
                }
                out.write(b, off, len);
            }
        };
    }

    /**
     * The process closes its end of the connection, the driver's thread still in a request: from now on
     * every reply fails, and if {@code seen} the driver's look for a hang-up finds it too.
     */
    void hangUp(final boolean seen)
    {
        repliesFail = true;
        hungUp = seen;
    }

    /** REGISTER claiming this process's own pid. */
    SocketlessConnection register(final int ai, final int pi, final int group, final int groupSize, final long timeoutMs)
    {
        return send(DriverProtocol.REGISTER, ai, pi, group, groupSize, (int)ProcessHandle.current().pid(), timeoutMs);
    }

    /**
     * Sends a request: its type, then each field as an int, or a long for a {@link Long}.
     *
     * @throws AssertionError if the driver ends the connection (an unknown request).
     */
    SocketlessConnection send(final int type, final Number... fields)
    {
        if (!request(type, fields))
        {
            fail("the driver ended the connection after request " + type + ": " + failed().message());
        }
        return this;
    }

    /** @return what {@link DriverRequests#onRequest} returned: false if the driver ends the connection. */
    boolean request(final int type, final Number... fields)
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes))
        {
            for (final Number field : fields)
            {
                if (field instanceof Long)
                {
                    out.writeLong(field.longValue());
                }
                else
                {
                    out.writeInt(field.intValue());
                }
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        try
        {
            return requests.onRequest(type, new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
    }

    /** @return whether a whole REGISTER request reached the driver (the connection no longer idle). */
    boolean registerRequestSeen()
    {
        return registerRequestSeen;
    }

    /** @return what the driver last told the idle rule: whether the connection holds a registration. */
    boolean registrationHeld()
    {
        return registrationHeld;
    }

    /** @return whether the driver wrote a reply not taken yet. */
    boolean hasReply()
    {
        return replyBytes.size() > replyRead;
    }

    /** @return the type of the next reply, which stays to be taken. */
    int nextReplyType()
    {
        final byte[] all = replyBytes.toByteArray();
        if (all.length - replyRead < Integer.BYTES)
        {
            fail("no reply from the driver");
        }
        return ((all[replyRead] & 0xFF) << 24) | ((all[replyRead + 1] & 0xFF) << 16) | ((all[replyRead + 2] & 0xFF) << 8) |
            (all[replyRead + 3] & 0xFF);
    }

    Registered registered()
    {
        final DataInputStream in = expect(DriverProtocol.REGISTERED);
        return read(in, () -> new Registered(in.readInt(), in.readInt(), in.readLong(), in.readInt(), in.readLong(),
            DriverProtocol.readPlacement(in)));
    }

    Failed failed()
    {
        final DataInputStream in = expect(DriverProtocol.FAILED);
        return read(in, () -> new Failed(in.readInt(), DriverProtocol.readText(in)));
    }

    TimedOut timedOut()
    {
        final DataInputStream in = expect(DriverProtocol.TIMED_OUT);
        return read(in, () ->
        {
            final String message = DriverProtocol.readText(in);
            final List<ProcessName> missing = new ArrayList<>();
            for (int i = in.readInt(); i > 0; i--)
            {
                missing.add(new ProcessName(in.readInt(), in.readInt()));
            }
            return new TimedOut(message, missing);
        });
    }

    Buffer buffer()
    {
        final DataInputStream in = expect(DriverProtocol.BUFFER);
        return read(in, () ->
        {
            final int id = in.readInt();
            final long[] addresses = new long[in.readInt()];
            for (int i = 0; i < addresses.length; i++)
            {
                addresses[i] = in.readLong();
            }
            return new Buffer(id, addresses);
        });
    }

    int lockCount()
    {
        final DataInputStream in = expect(DriverProtocol.LOCK_COUNT);
        return read(in, in::readInt);
    }

    void ok()
    {
        read(expect(DriverProtocol.OK), () -> null);
    }

    void deregistered()
    {
        read(expect(DriverProtocol.DEREGISTERED), () -> null);
    }

    GroupInfo groupInfo()
    {
        final DataInputStream in = expect(DriverProtocol.GROUP_INFO);
        return read(in, () ->
        {
            final int expectedSize = in.readInt();
            final List<Member> members = new ArrayList<>();
            for (int i = in.readInt(); i > 0; i--)
            {
                members.add(new Member(new ProcessName(in.readInt(), in.readInt()), NicCoordinates.unpack(in.readInt())));
            }
            return new GroupInfo(expectedSize, members);
        });
    }

    /** VIA_REGISTERED (issue 14). */
    record ViaRegistered(int index, int nicPid, long vniAddress, int vniLength, long hpsAddress, long structuresAddress,
        int structuresPages, boolean onNicCpu)
    {
    }

    /** VIA_CQ: the CQ and its ring's pages. */
    record ViaCq(int cq, long[] pages)
    {
    }

    /** VIA_VI: the VI's table index and its number in the process. */
    record ViaVi(int vi, int number)
    {
    }

    /** VIA_REGISTER with this process's pid. */
    SocketlessConnection viaRegister(final long timeoutMs)
    {
        return send(DriverProtocol.VIA_REGISTER, (int)ProcessHandle.current().pid(), timeoutMs);
    }

    ViaRegistered viaRegistered()
    {
        final DataInputStream in = expect(DriverProtocol.VIA_REGISTERED);
        return read(in, () -> new ViaRegistered(in.readInt(), in.readInt(), in.readLong(), in.readInt(), in.readLong(),
            in.readLong(), in.readInt(), DriverProtocol.readPlacement(in)));
    }

    /** @return the VIPL code of a VIA_FAILED reply, after checking its message names {@code expected}. */
    int viaFailed(final String expected)
    {
        final DataInputStream in = expect(DriverProtocol.VIA_FAILED);
        final Failed failed = read(in, () -> new Failed(in.readInt(), DriverProtocol.readText(in)));
        if (!failed.message().contains(expected))
        {
            fail("VIA_FAILED " + failed.code() + " says \"" + failed.message() + "\", not \"" + expected + "\"");
        }
        return failed.code();
    }

    int viaHandle()
    {
        final DataInputStream in = expect(DriverProtocol.VIA_HANDLE);
        return read(in, in::readInt);
    }

    ViaCq viaCq()
    {
        final DataInputStream in = expect(DriverProtocol.VIA_CQ);
        return read(in, () ->
        {
            final int cq = in.readInt();
            final long[] pages = new long[in.readInt()];
            for (int i = 0; i < pages.length; i++)
            {
                pages[i] = in.readLong();
            }
            return new ViaCq(cq, pages);
        });
    }

    ViaVi viaVi()
    {
        final DataInputStream in = expect(DriverProtocol.VIA_VI);
        return read(in, () -> new ViaVi(in.readInt(), in.readInt()));
    }

    /** A VI's end as a connection reply gives it: its node (packed) and attributes. */
    record ViaEndpoint(int node, int reliability, int maxTransfer, int attributes)
    {
    }

    /** VIA_CONNECTION_ASKED: the request's handle and the client's end. */
    record ViaAsked(int handle, ViaEndpoint client)
    {
    }

    ViaAsked viaConnectionAsked()
    {
        final DataInputStream in = expect(DriverProtocol.VIA_CONNECTION_ASKED);
        return read(in, () -> new ViaAsked(in.readInt(),
            new ViaEndpoint(in.readInt(), in.readInt(), in.readInt(), in.readInt())));
    }

    /** VIA_CONNECTED: the other end. */
    ViaEndpoint viaConnected()
    {
        final DataInputStream in = expect(DriverProtocol.VIA_CONNECTED);
        return read(in, () -> new ViaEndpoint(in.readInt(), in.readInt(), in.readInt(), in.readInt()));
    }

    /** The connection ends: the driver de-registers its process, as at process exit. */
    public void close() throws InterruptedException
    {
        if (open)
        {
            open = false;
            requests.close();
        }
    }

    private DataInputStream expect(final int type)
    {
        final byte[] all = replyBytes.toByteArray();
        if (all.length == replyRead)
        {
            fail("no reply from the driver, expected type " + type);
        }
        final DataInputStream in = new DataInputStream(new ByteArrayInputStream(all, replyRead, all.length - replyRead));
        final int actual = read(in, in::readInt);
        if (actual != type)
        {
            if (DriverProtocol.VIA_FAILED == actual)
            {
                final Failed failed = read(in, () -> new Failed(in.readInt(), DriverProtocol.readText(in)));
                fail("expected reply type " + type + ", the driver answered VIA_FAILED " + failed.code() + ": " +
                    failed.message());
            }
            if (DriverProtocol.FAILED == actual)
            {
                final Failed failed = read(in, () -> new Failed(in.readInt(), DriverProtocol.readText(in)));
                fail("expected reply type " + type + ", the driver answered FAILED " + failed.code() + ": " +
                    failed.message());
            }
            assertEquals(type, actual, "reply type");
        }
        return in;
    }

    private interface Field<T>
    {
        T read() throws IOException;
    }

    private <T> T read(final DataInputStream in, final Field<T> field)
    {
        try
        {
            final T value = field.read();
            replyRead = replyBytes.size() - in.available();
            if (replyRead == replyBytes.size())
            {
                // Every reply taken: start again, so that thousands of requests do not copy a growing array.
                replyBytes.reset();
                replyRead = 0;
            }
            return value;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("a reply ended before its fields", ex);
        }
    }
}
