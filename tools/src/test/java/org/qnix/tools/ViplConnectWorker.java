package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.Vi;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplAddress;
import org.qnix.vipl.ViplNic;

/**
 * A VIA client for {@link ViplConnectionsTest}: on NIC {@code args[1]} of cluster {@code args[0]},
 * connects a Reliable Delivery VI to the server at node {@code args[2]}, discriminator {@code args[3]},
 * says "connected" and waits to be killed.
 */
public final class ViplConnectWorker
{
    private ViplConnectWorker()
    {
    }

    /** Starts the worker on NIC 0-0 of {@code dir}'s cluster, asking the server at 1-0 under {@code discriminator}. */
    static Process start(final ClusterDirectory dir, final String discriminator) throws IOException
    {
        return ChildCommand.start(ViplConnectWorker.class, dir.name(), "0-0", "1-0", discriminator);
    }

    /** @return the worker's VI index, once it said it is connected (the server accepted it first). */
    static int connected(final Process worker) throws IOException
    {
        final String line = ChildCommand.output(worker).readLine();
        assertTrue(null != line && line.startsWith("connected "), "the worker said: " + line);
        return Integer.parseInt(line.substring("connected ".length()));
    }

    public static void main(final String[] args) throws Exception
    {
        final ViplNic nic = Vipl.openNic(args[1], args[0]);
        final Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, nic.createPtag(), false, false),
            null, null);
        nic.connectRequest(vi, new ViplAddress(NicCoordinates.parse(args[2]), args[3].getBytes(StandardCharsets.US_ASCII)),
            60_000);
        System.out.println("connected " + vi.index());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
