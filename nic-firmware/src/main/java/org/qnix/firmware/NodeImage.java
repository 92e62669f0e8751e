package org.qnix.firmware;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;

import org.agrona.CloseHelper;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.CountersLayout;
import org.qnix.abi.DriverCommandQueueLayout;
import org.qnix.abi.FileDescriptorBlock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.NicTableLayout;
import org.qnix.abi.NicWakeLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessTableEntry;
import org.qnix.abi.RxFifoLayout;
import org.qnix.abi.TraceLayout;
import org.qnix.abi.VniLayout;

/**
 * The memory of one emulated node, mapped whole: NIC SDRAM, host memory, input FIFO and counters.
 * {@link #create} lays the files out the way the driver does when it loads the NIC control program
 * (thesis 3.3.3: the VNI Info pointers of every Process Table entry are pre-initialised, the NIC Table
 * is copied from the topology, the Driver Info points at the host-side structures) and marks each
 * file ready last. {@link #open} maps files that exist and checks them.
 *
 * <pre>{@code
 * try (NodeImage image = NodeImage.create(dir, params, node))
 * {
 *     AtomicBuffer sdram = image.sdram();
 * }
 * }</pre>
 */
public final class NodeImage implements AutoCloseable
{
    private final NicCoordinates node;
    private final ClusterParameters params;
    private final NicSdramLayout sdramLayout;
    private final HostMemoryLayout hostLayout;
    private final MappedFile sdramFile;
    private final MappedFile hostFile;
    private final MappedFile rxFile;
    private final MappedFile countersFile;
    private final MappedFile wakeFile;
    /** Wrapped once: immutable from then on, so the driver's threads share it. */
    private final ControlProgramSegment controlSegment = new ControlProgramSegment();

    private NodeImage(
        final NicCoordinates node, final ClusterParameters params, final MappedFile sdramFile,
        final MappedFile hostFile, final MappedFile rxFile, final MappedFile countersFile,
        final MappedFile wakeFile)
    {
        this.node = node;
        this.params = params;
        this.sdramLayout = new NicSdramLayout(params);
        this.hostLayout = new HostMemoryLayout(params);
        this.sdramFile = sdramFile;
        this.hostFile = hostFile;
        this.rxFile = rxFile;
        this.countersFile = countersFile;
        this.wakeFile = wakeFile;
        controlSegment.wrap(sdramFile.buffer(), (int)sdramLayout.controlProgramOffset());
    }

    /**
     * Creates the node directory and its five files, initialised and marked ready.
     */
    public static NodeImage create(final ClusterDirectory dir, final ClusterParameters params, final NicCoordinates node)
    {
        try
        {
            Files.createDirectories(dir.nodeDirectory(node));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create " + dir.nodeDirectory(node), ex);
        }
        MappedFile sdram = null;
        MappedFile host = null;
        MappedFile rx = null;
        MappedFile counters = null;
        MappedFile wake = null;
        try
        {
            sdram = MappedFile.create(dir.nicSdram(node), params.sdramBytes());
            host = MappedFile.create(dir.hostMemory(node), params.hostMemoryBytes());
            rx = MappedFile.create(dir.rxFifo(node), RxFifoLayout.fileLength(params));
            counters = MappedFile.create(dir.counters(node), CountersLayout.FILE_LENGTH);
            wake = MappedFile.create(dir.nicWake(node), NicWakeLayout.FILE_LENGTH);
            final NodeImage image = new NodeImage(node, params, sdram, host, rx, counters, wake);
            image.initialise();
            return image;
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.closeAll(sdram, host, rx, counters, wake);
            throw ex;
        }
    }

    /**
     * Maps the existing files of a node and verifies their descriptors.
     */
    public static NodeImage open(final ClusterDirectory dir, final ClusterParameters params, final NicCoordinates node)
    {
        MappedFile sdram = null;
        MappedFile host = null;
        MappedFile rx = null;
        MappedFile counters = null;
        MappedFile wake = null;
        try
        {
            sdram = MappedFile.mapExisting(dir.nicSdram(node));
            FileDescriptorBlock.verify(sdram.buffer(), FileDescriptorBlock.TYPE_NIC_SDRAM, dir.nicSdram(node).toString());
            host = MappedFile.mapExisting(dir.hostMemory(node));
            FileDescriptorBlock.verify(host.buffer(), FileDescriptorBlock.TYPE_HOST_MEMORY, dir.hostMemory(node).toString());
            rx = MappedFile.mapExisting(dir.rxFifo(node));
            FileDescriptorBlock.verify(rx.buffer(), FileDescriptorBlock.TYPE_RX_FIFO, dir.rxFifo(node).toString());
            counters = MappedFile.mapExisting(dir.counters(node));
            FileDescriptorBlock.verify(counters.buffer(), FileDescriptorBlock.TYPE_COUNTERS, dir.counters(node).toString());
            wake = MappedFile.mapExisting(dir.nicWake(node));
            FileDescriptorBlock.verify(wake.buffer(), FileDescriptorBlock.TYPE_NIC_WAKE, dir.nicWake(node).toString());
            if (sdram.buffer().capacity() != params.sdramBytes() || host.buffer().capacity() != params.hostMemoryBytes())
            {
                throw new IllegalStateException("files of node " + node + " do not match the cluster parameters");
            }
            return new NodeImage(node, params, sdram, host, rx, counters, wake);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.closeAll(sdram, host, rx, counters, wake);
            throw ex;
        }
    }

    private void initialise()
    {
        final AtomicBuffer sdram = sdramFile.buffer();
        final AtomicBuffer host = hostFile.buffer();
        final VniLayout vni = sdramLayout.vni();

        final ProcessTableEntry processEntry = new ProcessTableEntry();
        for (int i = 0; i < params.maxProcessesPerNic(); i++)
        {
            final long vniAddress = sdramLayout.vniOffset(i);
            processEntry.wrap(sdram, (int)sdramLayout.processEntryOffset(i)).vniInfo(
                vniAddress + vni.commandQueueOffset(), vniAddress + vni.sendContextListOffset(),
                vniAddress + vni.receiveContextListOffset(), vniAddress + vni.contextRegionsOffset(),
                vniAddress + vni.bufferPoolOffset());
        }

        final int info = (int)sdramLayout.driverInfoOffset();
        sdram.putLong(info + DriverCommandQueueLayout.INFO_DRIVER_HEAD_POINTER_OFFSET,
            hostLayout.driverCommandQueueHeadAddress());
        sdram.putLong(info + DriverCommandQueueLayout.INFO_DOORBELL_ARRAY_POINTER_OFFSET,
            hostLayout.driverDoorbellArrayOffset());

        for (int i = 0; i < params.nodeCount(); i++)
        {
            final int entry = (int)sdramLayout.nicTableOffset() + i * NicTableLayout.ENTRY_LENGTH;
            sdram.putInt(entry + NicTableLayout.ID_OFFSET, i);
            sdram.putInt(entry + NicTableLayout.COORDINATES_OFFSET,
                NicCoordinates.ofIndex(i, params.torusWidth()).packed());
        }

        FileDescriptorBlock.write(sdram, FileDescriptorBlock.TYPE_NIC_SDRAM, node, params);
        FileDescriptorBlock.write(host, FileDescriptorBlock.TYPE_HOST_MEMORY, node, params);
        FileDescriptorBlock.write(rxFile.buffer(), FileDescriptorBlock.TYPE_RX_FIFO, node, params);
        FileDescriptorBlock.write(countersFile.buffer(), FileDescriptorBlock.TYPE_COUNTERS, node, params);
        FileDescriptorBlock.write(wakeFile.buffer(), FileDescriptorBlock.TYPE_NIC_WAKE, node, params);
        FileDescriptorBlock.markReady(wakeFile.buffer());
        FileDescriptorBlock.markReady(countersFile.buffer());
        FileDescriptorBlock.markReady(rxFile.buffer());
        FileDescriptorBlock.markReady(host);
        FileDescriptorBlock.markReady(sdram);
    }

    public NicCoordinates node()
    {
        return node;
    }

    public ClusterParameters parameters()
    {
        return params;
    }

    public NicSdramLayout sdramLayout()
    {
        return sdramLayout;
    }

    public HostMemoryLayout hostLayout()
    {
        return hostLayout;
    }

    public AtomicBuffer sdram()
    {
        return sdramFile.buffer();
    }

    /** @return the NIC Control Program segment of the SDRAM: who runs the NIC, its heartbeat, its DMA epoch. */
    public ControlProgramSegment controlSegment()
    {
        return controlSegment;
    }

    public AtomicBuffer hostMemory()
    {
        return hostFile.buffer();
    }

    /** @return the ring buffer region of the input FIFO. */
    public AtomicBuffer rxRing()
    {
        return new UnsafeBuffer(rxFile.buffer(), RxFifoLayout.RING_OFFSET, RxFifoLayout.ringLength(params));
    }

    public AtomicBuffer countersMetadata()
    {
        return new UnsafeBuffer(countersFile.buffer(), CountersLayout.METADATA_OFFSET, CountersLayout.METADATA_LENGTH);
    }

    /** The packet trace's control block, written by {@code qnix trace} (TraceLayout). */
    public AtomicBuffer traceControl()
    {
        return new UnsafeBuffer(countersFile.buffer(), CountersLayout.TRACE_CONTROL_OFFSET, TraceLayout.CONTROL_LENGTH);
    }

    /** The packet trace ring, this NIC to {@code qnix trace} (TraceLayout). */
    public AtomicBuffer traceRing()
    {
        return new UnsafeBuffer(countersFile.buffer(), CountersLayout.TRACE_RING_OFFSET, TraceLayout.RING_LENGTH);
    }

    public AtomicBuffer countersValues()
    {
        return new UnsafeBuffer(countersFile.buffer(), CountersLayout.VALUES_OFFSET, CountersLayout.VALUES_LENGTH);
    }

    /** @return the {@code nic.wake} file, from its start ({@link NicWakeLayout}). */
    public AtomicBuffer wake()
    {
        return wakeFile.buffer();
    }

    /** @return a waker of this node's NIC, for whoever gives it work from this JVM. */
    public NicWakeUp wakeUp()
    {
        return new NicWakeUp(wakeFile.buffer());
    }

    public void close()
    {
        CloseHelper.closeAll(sdramFile, hostFile, rxFile, countersFile, wakeFile);
    }
}
