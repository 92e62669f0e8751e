package org.qnix.daemon;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

import com.sun.jna.Native;

import org.qnix.abi.CLibrary;

/**
 * Who is at the other end of a driver connection, as the kernel recorded it when the peer connected
 * ({@code getsockopt(SO_PEERCRED)}: its pid, effective uid and gid). A process cannot forge these,
 * unlike the pid its REGISTER request claims (issue 17, item 8).
 *
 * <p>Java's {@code jdk.net.ExtendedSocketOptions.SO_PEERCRED} gives the user and group but not the
 * pid, so the call goes through JNA on the channel's file descriptor, which {@code sun.nio.ch}
 * gives to a JVM started with qnix's flags ({@code --add-exports java.base/sun.nio.ch}, JvmFlags).
 *
 * <pre>{@code
 * PeerCredentials peer = PeerCredentials.of(channel);
 * if (peer.uid() != PeerCredentials.ownUid()) { ... refuse ... }
 * }</pre>
 *
 * @param pid the process that connected.
 * @param uid its effective user id then.
 * @param gid its effective group id then.
 */
record PeerCredentials(int pid, int uid, int gid)
{
    private static final int SOL_SOCKET = 1;
    private static final int SO_PEERCRED = 17;

    /** The libc calls, JNA direct mapping (a record cannot declare native methods). */
    private static final class Libc
    {
        static final String UNAVAILABLE;
        static final Method FD_VALUE;

        static
        {
            String reason = CLibrary.link(Libc.class, "SO_PEERCRED");
            Method fdValue = null;
            if (null == reason)
            {
                try
                {
                    fdValue = Class.forName("sun.nio.ch.SelChImpl").getMethod("getFDVal");
                }
                catch (final ReflectiveOperationException | RuntimeException ex)
                {
                    reason = "cannot reach a socket's file descriptor: " + ex;
                }
            }
            UNAVAILABLE = reason;
            FD_VALUE = fdValue;
        }

        private Libc()
        {
        }

        static native int getsockopt(int fd, int level, int option, int[] value, int[] length);

        static native int geteuid();

        static native int getegid();
    }

    /**
     * @return the credentials of the process that connected {@code channel}, a Unix-domain channel.
     * @throws IOException naming the reason if the kernel cannot be asked (then nobody is admitted).
     */
    static PeerCredentials of(final SocketChannel channel) throws IOException
    {
        if (null != Libc.UNAVAILABLE)
        {
            throw new IOException(Libc.UNAVAILABLE);
        }
        final int fd;
        try
        {
            fd = (Integer)Libc.FD_VALUE.invoke(channel);
        }
        catch (final ReflectiveOperationException | RuntimeException ex)
        {
            throw new IOException("cannot read the file descriptor of a driver connection (is the daemon's JVM " +
                "missing --add-exports java.base/sun.nio.ch=ALL-UNNAMED?): " + ex, ex);
        }
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: three 32-bit ints.
        final int[] ucred = new int[3];
        final int[] length = { 3 * Integer.BYTES };
        if (0 != Libc.getsockopt(fd, SOL_SOCKET, SO_PEERCRED, ucred, length))
        {
            throw new IOException("getsockopt(SO_PEERCRED) failed on a driver connection: errno " + Native.getLastError());
        }
        return new PeerCredentials(ucred[0], ucred[1], ucred[2]);
    }

    /** @return the effective uid of this process: the owner of the cluster it drives. */
    static int ownUid()
    {
        return null == Libc.UNAVAILABLE ? Libc.geteuid() : -1;
    }

    /** @return the effective gid of this process. */
    static int ownGid()
    {
        return null == Libc.UNAVAILABLE ? Libc.getegid() : -1;
    }

    /**
     * @return whether the peer is in group {@code gid}: its effective group, or one of the supplementary
     * groups {@code /proc/PID/status} lists while it is connected.
     */
    boolean inGroup(final int group)
    {
        if (gid == group)
        {
            return true;
        }
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc", Integer.toString(pid), "status"),
                StandardCharsets.UTF_8))
            {
                if (line.startsWith("Groups:"))
                {
                    for (final String id : line.substring("Groups:".length()).trim().split("\\s+"))
                    {
                        // Unsigned 32-bit ids (4294967294 is common): an int parse would fail the whole scan.
                        if (!id.isEmpty() && Long.parseLong(id) == Integer.toUnsignedLong(group))
                        {
                            return true;
                        }
                    }
                    return false;
                }
            }
        }
        catch (final NoSuchFileException ex)
        {
            return false;
        }
        catch (final IOException | NumberFormatException ex)
        {
            return false;
        }
        return false;
    }
}
