package org.qnix.tools;

import org.qnix.pcicomm.PciBuffer;
import org.qnix.pcicomm.PciComm;
import org.qnix.pcicomm.PciCommException;
import org.qnix.pcicomm.PciConnection;

/**
 * The other end of a {@link PciCommConnectionsTest} in a JVM of its own, to be killed with -9 or to
 * hold a cid from another process. Arguments: cluster, {@code listen} or {@code connect}, this
 * process's node, the listener's node, cid. A listener says "listening", then "connected", and receives
 * (reposting) until the connection ends; a client says "connected" and streams 4 KiB sends until it
 * ends. Either says "ended REASON" when the connection ends, and exits.
 */
public final class PciCommWorker
{
    private PciCommWorker()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final String cluster = args[0];
        final boolean listen = "listen".equals(args[1]);
        final int cid = Integer.parseInt(args[4]);
        try (PciConnection connection = listen ? PciComm.options().cluster(cluster).listen(args[2], cid) :
            PciComm.options().cluster(cluster).localNode(args[2]).connectTimeoutMs(60_000).connect(args[3], cid))
        {
            if (listen)
            {
                say("listening");
                connection.awaitConnected(120_000);
            }
            say("connected");
            try
            {
                if (listen)
                {
                    for (int i = 0; i < 4; i++)
                    {
                        connection.prepostRecv(connection.allocate(4096), 4096);
                    }
                    while (true)
                    {
                        final PciBuffer got = connection.recv(1_000);
                        if (null != got)
                        {
                            connection.prepostRecv(got, got.capacity());
                        }
                    }
                }
                final PciBuffer[] buffers = {connection.allocate(4096), connection.allocate(4096)};
                for (final PciBuffer b : buffers)
                {
                    connection.send(b, 4096);
                }
                while (true)
                {
                    final PciBuffer back = connection.sendRecycle(1_000);
                    if (null != back)
                    {
                        connection.send(back, 4096);
                    }
                }
            }
            catch (final PciCommException ex)
            {
                say("ended " + ex.reason());
            }
        }
    }

    private static void say(final String line)
    {
        System.out.println(line);
        System.out.flush();
    }
}
