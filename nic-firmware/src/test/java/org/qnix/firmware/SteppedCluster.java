package org.qnix.firmware;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.agrona.concurrent.status.CountersManager;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.DriverCommandEntry;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.RxFifo;
import org.qnix.abi.WireMessageType;

/**
 * A whole cluster of real node images and control programs in one thread, stepped by hand, with a
 * test-side driver that writes the Process Table, the Process Flag Array and Driver Command Queue
 * entries exactly where the real driver does.
 */
final class SteppedCluster implements AutoCloseable
{
    final ClusterParameters params;
    final List<NodeImage> images = new ArrayList<>();
    final List<NicControlProgram> nics = new ArrayList<>();
    final CachedEpochClock clock = new CachedEpochClock();
    /** What each NIC's {@link DutyCycleErrorHandler} logged, by node index. */
    final List<ByteArrayOutputStream> errorLogs = new ArrayList<>();
    private final int[] driverTail;

    SteppedCluster(final Path base, final int width, final int height)
    {
        this(base, smallParameters(width, height).build());
    }

    /**
     * {@link #smallParameters} of a 2x2 torus with the smallest SDRAM a cluster may have: staging room
     * (NIC managed memory) for exactly one largest message, 3 pages.
     */
    static ClusterParameters.Builder tightStagingParameters()
    {
        final ClusterParameters roomy = smallParameters(2, 2).build();
        return smallParameters(2, 2).sdramBytes(new NicSdramLayout(roomy).minimumSdramBytes());
    }

    /** Small enough to step by hand: 1 KiB pages, K=4 (3 KiB messages), 4 contexts each way. */
    static ClusterParameters.Builder smallParameters(final int width, final int height)
    {
        return ClusterParameters.builder().torus(width, height).processes(8).contexts(4).commandQueueEntries(8)
            .descriptorsPerRegion(4).shortThreshold(64).pageSize(1024).bufferPoolPages(4).driverCommandQueueEntries(8)
            .nameTableEntries(64).groupTableEntries(8).sdramBytes(1 << 20).hostMemoryBytes(1 << 20).rxFifoBytes(1 << 16);
    }

    SteppedCluster(final Path base, final ClusterParameters params)
    {
        this.params = params;
        final int width = params.torusWidth();
        final ClusterDirectory dir = new ClusterDirectory(base, "stepped");
        for (int i = 0; i < params.nodeCount(); i++)
        {
            images.add(NodeImage.create(dir, params, NicCoordinates.ofIndex(i, width)));
        }
        final AtomicBuffer[] rings = new AtomicBuffer[params.nodeCount()];
        for (int i = 0; i < rings.length; i++)
        {
            rings[i] = images.get(i).rxRing();
        }
        clock.update(1_000_000);
        for (final NodeImage image : images)
        {
            final ByteArrayOutputStream errorLog = new ByteArrayOutputStream();
            errorLogs.add(errorLog);
            final NicControlProgram nic = new NicControlProgram(new FirmwareContext()
                .nodeImage(image)
                .inputFifos(rings)
                .countersManager(new CountersManager(image.countersMetadata(), image.countersValues()))
                .clock(clock)
                .errorLog(new PrintStream(errorLog, true, StandardCharsets.UTF_8)));
            nic.onStart();
            nics.add(nic);
        }
        driverTail = new int[params.nodeCount()];
    }

    /** One doWork() on every NIC, in node order. @return total work. */
    int step()
    {
        int work = 0;
        for (final NicControlProgram nic : nics)
        {
            work += nic.doWork();
        }
        return work;
    }

    /** Every NIC sends at most one packet a duty cycle, so that a test can act between two packets. */
    void onePacketPerCycle()
    {
        for (final NicControlProgram nic : nics)
        {
            nic.txStepsPerCycle(1);
        }
    }

    /** Steps until no NIC does any work (or a bound is hit). */
    void settle()
    {
        for (int i = 0; i < 1000; i++)
        {
            if (0 == step())
            {
                return;
            }
        }
        throw new AssertionError("cluster did not settle");
    }

    /**
     * Registers process i of {@code nodes} on node {@code nodes[i]}, Process Table index i, named
     * (group, i) in group {@code group} of that many processes, with its area locked; settles.
     *
     * @throws AssertionError unless every registration completed Done.
     */
    SteppedProcess[] registerGroup(final int group, final int... nodes)
    {
        final SteppedProcess[] processes = new SteppedProcess[nodes.length];
        final int[] positions = new int[nodes.length];
        for (int i = 0; i < nodes.length; i++)
        {
            processes[i] = new SteppedProcess(this, nodes[i], i, new ProcessName(group, i));
            processes[i].lockArea(1);
            positions[i] = processes[i].register(group, nodes.length);
        }
        settle();
        for (int i = 0; i < nodes.length; i++)
        {
            final int doorbell = driverDoorbell(nodes[i], positions[i]);
            final int state = processState(nodes[i], i);
            if (Doorbell.DONE != doorbell || ProcessTableLayout.STATE_REGISTERED != state)
            {
                throw new AssertionError("registration of " + processes[i].name + ": " + Doorbell.name(doorbell) +
                    ", " + ProcessTableLayout.stateName(state));
            }
        }
        return processes;
    }

    /** Registration steps 1 and 5 as the driver does them, then step 2: New_Process. @return position. */
    int newProcess(final int node, final int index, final ProcessName name, final int osPid, final int group,
        final int size)
    {
        final NodeImage image = images.get(node);
        image.hostMemory().putIntRelease((int)image.hostLayout().processFlagOffset(index), osPid);
        image.sdram().putIntRelease((int)image.sdramLayout().processEntryOffset(index) + ProcessTableLayout.PID_OFFSET,
            osPid);
        return post(node, DriverCommand.NEW_PROCESS, name, osPid, index, group, size);
    }

    int deleteProcess(final int node, final int index, final ProcessName name, final int osPid)
    {
        final NodeImage image = images.get(node);
        image.sdram().putIntRelease((int)image.sdramLayout().processEntryOffset(index) + ProcessTableLayout.PID_OFFSET, 0);
        return post(node, DriverCommand.DELETE_PROCESS, name, osPid, index, 0, 0);
    }

    int post(final int node, final int command, final ProcessName name, final int pid, final int index,
        final int group, final int size)
    {
        return post(node, command, name, pid, index, group, size, 0);
    }

    /** A driver command with a Generation, as the driver posts the VIA connection commands. */
    int post(final int node, final int command, final ProcessName name, final int pid, final int index,
        final int group, final int size, final int generation)
    {
        final NodeImage image = images.get(node);
        final int position = driverTail[node];
        driverTail[node] = (position + 1) % params.driverCommandQueueEntries();
        image.hostMemory().putIntRelease((int)image.hostLayout().driverDoorbellOffset(position), Doorbell.USED);
        new DriverCommandEntry().wrap(image.sdram(), (int)image.sdramLayout().driverCommandOffset(position))
            .publish(command, name, pid, index, group, size, generation);
        return position;
    }

    /** @return the value of the NIC counter labelled {@code label} on node {@code node}, or -1. */
    long counter(final int node, final String label)
    {
        final NodeImage image = images.get(node);
        final CountersReader reader = new CountersReader(image.countersMetadata(), image.countersValues());
        final long[] value = { -1 };
        reader.forEach((id, type, key, l) ->
        {
            if (l.equals(label))
            {
                value[0] = reader.getCounterValue(id);
            }
        });
        return value[0];
    }

    /**
     * Puts a system message into node {@code to}'s input FIFO as if NIC {@code from} had sent it.
     *
     * @param payload the message's payload, written at offset 0 with its qnix-abi flyweight, e.g.
     *                {@code new BarrierFlyweight().wrap(payload, 0).group(7)...}.
     */
    void injectSystemMessage(final int from, final int to, final int code, final DirectBuffer payload, final int length)
    {
        final UnsafeBuffer packet = new UnsafeBuffer(new byte[PacketHeader.LENGTH + length]);
        new PacketHeader().wrap(packet, 0)
            .destination(NicCoordinates.ofIndex(to, params.torusWidth()).packed()).receiverPid(0)
            .source(NicCoordinates.ofIndex(from, params.torusWidth()).packed()).senderPid(0)
            .contextTag(code).packetLength(length).counter(0);
        packet.putBytes(PacketHeader.LENGTH, payload, 0, length);
        if (!new RxFifo(images.get(to).rxRing()).write(
            WireMessageType.SYSTEM_MESSAGE, packet, 0, packet.capacity()))
        {
            throw new IllegalStateException("FIFO of node " + to + " is full");
        }
    }

    /** @return what NIC {@code node}'s error handler logged so far. */
    String errorLog(final int node)
    {
        return errorLogs.get(node).toString(StandardCharsets.UTF_8);
    }

    /** @return the Registration State the NIC wrote into Process Table entry {@code index}. */
    int processState(final int node, final int index)
    {
        final NodeImage image = images.get(node);
        return image.sdram().getIntVolatile(
            (int)image.sdramLayout().processEntryOffset(index) + ProcessTableLayout.STATE_OFFSET);
    }

    int driverDoorbell(final int node, final int position)
    {
        final NodeImage image = images.get(node);
        return image.hostMemory().getIntVolatile((int)image.hostLayout().driverDoorbellOffset(position));
    }

    public void close()
    {
        CloseHelper.closeAll(images);
    }
}
