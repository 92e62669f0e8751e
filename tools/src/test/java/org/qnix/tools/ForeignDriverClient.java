package org.qnix.tools;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * A driver client for {@link DriverPeerCredentialsTest} to run as another user: it uses the JDK only,
 * since that user cannot read the Maven repository of the test's, so the protocol codes come as
 * arguments. It sends one REGISTER, claiming a pid that is not its own, and prints what happened:
 * {@code cannot connect: ...}, {@code reply REGISTERED}, or {@code reply FAILED CODE: TEXT}.
 *
 * <pre>
 * java -cp test-classes org.qnix.tools.ForeignDriverClient SOCKET AI CLAIMED_PID REGISTER REGISTERED FAILED
 * </pre>
 */
public final class ForeignDriverClient
{
    private ForeignDriverClient()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final String socket = args[0];
        final int ai = Integer.parseInt(args[1]);
        final int claimedPid = Integer.parseInt(args[2]);
        final int register = Integer.parseInt(args[3]);
        final int registered = Integer.parseInt(args[4]);
        final int failed = Integer.parseInt(args[5]);
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX))
        {
            try
            {
                channel.connect(UnixDomainSocketAddress.of(socket));
            }
            catch (final IOException ex)
            {
                System.out.println("cannot connect: " + ex);
                return;
            }
            final DataOutputStream out = new DataOutputStream(Channels.newOutputStream(channel));
            final DataInputStream in = new DataInputStream(Channels.newInputStream(channel));
            try
            {
                out.writeInt(register);
                out.writeInt(ai);
                out.writeInt(0);
                out.writeInt(ai);
                out.writeInt(1);
                out.writeInt(claimedPid);
                out.writeLong(60_000);
                out.flush();
            }
            catch (final IOException ex)
            {
                // A refused connection's output may be shut already: its reply is still there to read.
                System.out.println("request not sent: " + ex);
            }
            final int type = in.readInt();
            if (registered == type)
            {
                System.out.println("reply REGISTERED");
            }
            else if (failed == type)
            {
                printFailure(in, "FAILED");
            }
            else
            {
                System.out.println("reply " + type);
            }
        }
    }

    /**
     * Prints a failure reply's code and text (DriverProtocol's FAILED and VIA_FAILED: code, then the text
     * as its length and UTF-8 bytes) as {@code reply NAME CODE: TEXT}.
     */
    static void printFailure(final DataInputStream in, final String name) throws IOException
    {
        final int code = in.readInt();
        final byte[] text = new byte[in.readInt()];
        in.readFully(text);
        System.out.println("reply " + name + " " + code + ": " + new String(text, StandardCharsets.UTF_8));
    }
}
