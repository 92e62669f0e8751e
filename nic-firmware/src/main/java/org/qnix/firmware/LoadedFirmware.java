package org.qnix.firmware;

import java.util.ArrayList;
import java.util.List;

import org.agrona.CloseHelper;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.FileDescriptorBlock;
import org.qnix.abi.HostClock;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.RxFifoLayout;

/**
 * A NIC control program loaded onto an existing node image, with every other NIC's input FIFO mapped,
 * ready to run under an {@link AgentRunner} in its own thread. Used the same way by a firmware JVM
 * ({@link FirmwareMain}) and by the daemon's {@code --firmware threads} mode.
 *
 * <pre>{@code
 * try (LoadedFirmware firmware = LoadedFirmware.load(dir, params, node))
 * {
 *     firmware.start(IdleStrategies.parse("backoff"));
 * }
 * }</pre>
 */
public final class LoadedFirmware implements AutoCloseable
{
    private final NodeImage image;
    private final List<MappedFile> peerFifos;
    private final NicControlProgram program;
    private AgentRunner runner;

    private LoadedFirmware(final NodeImage image, final List<MappedFile> peerFifos, final NicControlProgram program)
    {
        this.image = image;
        this.peerFifos = peerFifos;
        this.program = program;
    }

    public static LoadedFirmware load(final ClusterDirectory dir, final ClusterParameters params, final NicCoordinates node)
    {
        NodeImage image = null;
        final List<MappedFile> fifos = new ArrayList<>();
        try
        {
            image = NodeImage.open(dir, params, node);
            final AtomicBuffer[] rings = new AtomicBuffer[params.nodeCount()];
            final NicWakeUp[] wakeUps = new NicWakeUp[params.nodeCount()];
            final int selfIndex = node.index(params.torusWidth());
            for (int i = 0; i < params.nodeCount(); i++)
            {
                if (i == selfIndex)
                {
                    rings[i] = image.rxRing();
                    continue;
                }
                final NicCoordinates peer = NicCoordinates.ofIndex(i, params.torusWidth());
                final MappedFile fifo = PeerFifoMappings.acquire(dir.rxFifo(peer));
                fifos.add(fifo);
                FileDescriptorBlock.verify(fifo.buffer(), FileDescriptorBlock.TYPE_RX_FIFO, dir.rxFifo(peer).toString());
                rings[i] = new UnsafeBuffer(fifo.buffer(), RxFifoLayout.RING_OFFSET, RxFifoLayout.ringLength(params));
                final MappedFile wake = PeerFifoMappings.acquire(dir.nicWake(peer));
                fifos.add(wake);
                FileDescriptorBlock.verify(wake.buffer(), FileDescriptorBlock.TYPE_NIC_WAKE, dir.nicWake(peer).toString());
                wakeUps[i] = new NicWakeUp(wake.buffer());
            }
            final NicControlProgram program = new NicControlProgram(new FirmwareContext()
                .nodeImage(image)
                .inputFifos(rings)
                .peerWakeUps(wakeUps)
                .countersManager(new CountersManager(image.countersMetadata(), image.countersValues()))
                .clock(HostClock.INSTANCE)
                .errorLog(System.err));
            return new LoadedFirmware(image, fifos, program.logEvents(true));
        }
        catch (final RuntimeException ex)
        {
            fifos.forEach(PeerFifoMappings::release);
            CloseHelper.close(image);
            throw ex;
        }
    }

    public NicControlProgram program()
    {
        return program;
    }

    /** Starts the control program's loop on a new thread named after the NIC. */
    public void start(final IdleStrategy idleStrategy)
    {
        // Errors no role caught (none expected) are logged and counted like theirs; the loop goes on.
        runner = new AgentRunner(idleStrategy, program.context().errorHandler(), null, program);
        AgentRunner.startOnThread(runner);
    }

    /**
     * Starts the control programs of several NICs round-robin on one thread (Aeron's SHARED threading
     * mode, Agrona's {@link CompositeAgent}): each stays its own program with its own memory, tables and
     * counters; a packet one writes to another's input FIFO is taken in the same pass.
     *
     * @return the runner: closing it stops them all; close each {@link LoadedFirmware} after.
     */
    public static AgentRunner startShared(final List<LoadedFirmware> firmware, final IdleStrategy idleStrategy)
    {
        final List<NicControlProgram> programs = new ArrayList<>();
        firmware.forEach(f -> programs.add(f.program));
        for (final LoadedFirmware sender : firmware)
        {
            for (final LoadedFirmware receiver : firmware)
            {
                sender.program.sharesThreadWith(receiver.image.node().index(receiver.image.parameters().torusWidth()));
            }
        }
        final AgentRunner runner =
            new AgentRunner(idleStrategy, programs.get(0).context().errorHandler(), null, new CompositeAgent(programs));
        AgentRunner.startOnThread(runner);
        return runner;
    }

    /** Stops the loop (waiting for it) if it runs on a thread of its own, and unmaps everything. */
    public void close()
    {
        CloseHelper.close(runner);
        peerFifos.forEach(PeerFifoMappings::release);
        CloseHelper.close(image);
    }
}
