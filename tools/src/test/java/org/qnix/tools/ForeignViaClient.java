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
 * A VIA process for {@link DriverPeerCredentialsTest} to run as another user, JDK only as
 * {@link ForeignDriverClient} (that user cannot read the Maven repository): it registers for VIA
 * ({@code VipOpenNic}) and waits on a discriminator for a connection request ({@code VipConnectWait},
 * timeout 0), and prints the reply: {@code reply VIA_FAILED CODE: TEXT} or {@code reply TYPE}. The
 * protocol codes come as arguments.
 *
 * <pre>
 * java -cp test-classes org.qnix.tools.ForeignViaClient SOCKET DISCRIMINATOR VIA_REGISTER VIA_REGISTERED VIA_CONNECT_WAIT VIA_FAILED
 * </pre>
 */
public final class ForeignViaClient
{
    /** VIA_REGISTERED's fields: index, nicPid, vniAddress (long), vniLength, hpsAddress (long), three more. */
    private static final int REGISTERED_BYTES = 4 + 4 + 8 + 4 + 8 + 8 + 4 + 4;

    private ForeignViaClient()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final byte[] discriminator = args[1].getBytes(StandardCharsets.US_ASCII);
        final int viaRegister = Integer.parseInt(args[2]);
        final int viaRegistered = Integer.parseInt(args[3]);
        final int viaConnectWait = Integer.parseInt(args[4]);
        final int viaFailed = Integer.parseInt(args[5]);
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX))
        {
            channel.connect(UnixDomainSocketAddress.of(args[0]));
            final DataOutputStream out = new DataOutputStream(Channels.newOutputStream(channel));
            final DataInputStream in = new DataInputStream(Channels.newInputStream(channel));
            out.writeInt(viaRegister);
            out.writeInt((int)ProcessHandle.current().pid());
            out.writeLong(60_000);
            out.flush();
            if (!reply(in, viaRegistered, viaFailed))
            {
                return;
            }
            in.readFully(new byte[REGISTERED_BYTES]);
            out.writeInt(viaConnectWait);
            out.writeInt(discriminator.length);
            out.write(discriminator);
            out.writeLong(0);
            out.flush();
            reply(in, -1, viaFailed);
        }
    }

    /** Prints a reply other than {@code expected}. @return true for {@code expected}. */
    private static boolean reply(final DataInputStream in, final int expected, final int viaFailed) throws IOException
    {
        final int type = in.readInt();
        if (expected == type)
        {
            return true;
        }
        if (viaFailed == type)
        {
            ForeignDriverClient.printFailure(in, "VIA_FAILED");
        }
        else
        {
            System.out.println("reply " + type);
        }
        return false;
    }
}
