package org.qnix.daemon;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.agrona.CloseHelper;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.firmware.IdleStrategies;
import org.qnix.firmware.NodeImage;

/**
 * A small cluster of real node images in a temporary directory, each node with its driver's
 * {@link ProcessRegistrar} and, unless asked for dead NICs, its NIC control program running on a thread
 * of this JVM exactly as {@code --firmware threads} runs it: the driver's request handling with
 * everything real but the socket.
 *
 * <pre>{@code
 * try (DriverTestCluster cluster = new DriverTestCluster(base, 1, true))
 * {
 *     SocketlessConnection process = cluster.connect(0);
 *     process.register(1, 0, 1, 1, 10_000).registered();
 * }
 * }</pre>
 */
final class DriverTestCluster implements AutoCloseable
{
    final ClusterParameters params;
    final ClusterDirectory dir;
    final List<NodeImage> images = new ArrayList<>();
    final List<ProcessRegistrar> registrars = new ArrayList<>();
    /** Placed as on a machine of two CPUs whose CPU 1 is the NICs'. */
    final ClusterRegistry registry = new ClusterRegistry(new NicCpuPlacement(1, 1, ProcessCpus.OS));
    private final List<FirmwareLauncher> firmware = new ArrayList<>();
    private final List<SocketlessConnection> connections = new ArrayList<>();

    /** P=3 processes per node, 1 KiB pages, K=4 (3 KiB messages), Q=4 buffer pool pages, 256 host pages. */
    static ClusterParameters parameters(final int width)
    {
        return ClusterParameters.builder().torus(width, 1).processes(3).contexts(4).commandQueueEntries(8)
            .descriptorsPerRegion(4).shortThreshold(64).pageSize(1024).bufferPoolPages(4).driverCommandQueueEntries(8)
            .nameTableEntries(16).groupTableEntries(8).sdramBytes(1 << 20).hostMemoryBytes(256 << 10)
            .rxFifoBytes(1 << 16).build();
    }

    /** @param runningNics false for NICs whose control program never started: every NIC is dead. */
    DriverTestCluster(final Path base, final int width, final boolean runningNics) throws InterruptedException
    {
        this.params = parameters(width);
        this.dir = new ClusterDirectory(base, "driver");
        try
        {
            for (int i = 0; i < params.nodeCount(); i++)
            {
                images.add(NodeImage.create(dir, params, NicCoordinates.ofIndex(i, width)));
            }
            if (runningNics)
            {
                for (final NodeImage image : images)
                {
                    final FirmwareLauncher launcher = new FirmwareLauncher(dir, params, List.of(image));
                    firmware.add(launcher);
                    launcher.startThread(IdleStrategies.BACKOFF);
                }
                for (final FirmwareLauncher launcher : firmware)
                {
                    launcher.awaitRunning(60_000);
                }
            }
            final NicHeartbeats heartbeats = new NicHeartbeats(images);
            for (final NodeImage image : images)
            {
                registrars.add(new ProcessRegistrar(image, registry, heartbeats));
            }
        }
        catch (final RuntimeException | InterruptedException ex)
        {
            close();
            throw ex;
        }
    }

    /** @return a new connection to the driver of node {@code node} from this JVM's process. */
    SocketlessConnection connect(final int node)
    {
        return connect(node, (int)ProcessHandle.current().pid());
    }

    /** @param pid the caller's pid as the kernel would give it. */
    SocketlessConnection connect(final int node, final int pid)
    {
        return connect(node, new PeerCredentials(pid, PeerCredentials.ownUid(), PeerCredentials.ownGid()));
    }

    /** @param caller the caller's pid and uid as the kernel would give them (another uid: a shared cluster's). */
    SocketlessConnection connect(final int node, final PeerCredentials caller)
    {
        final SocketlessConnection connection = new SocketlessConnection(images.get(node), registrars.get(node), caller);
        connections.add(connection);
        return connection;
    }

    /** Stops the NIC control program of node {@code node} (its state STOPPED): the NIC is dead from now on. */
    void stopNic(final int node)
    {
        firmware.set(node, null).close();
    }

    public void close()
    {
        for (final SocketlessConnection connection : connections)
        {
            try
            {
                connection.close();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        CloseHelper.quietCloseAll(firmware);
        CloseHelper.quietCloseAll(images);
    }
}
