package org.qnix.tools;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.agrona.CloseHelper;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.CountersLayout;
import org.qnix.abi.HostClock;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.ProcessStartTicks;
import org.qnix.abi.TraceLayout;
import org.qnix.firmware.NicCounters;

/**
 * The tracer's side of the packet trace ({@link TraceLayout}): takes the trace of some NICs (one
 * tracer per NIC at a time; a dead tracer's claim is taken over), switches it on with a snap length,
 * drains each NIC's trace ring, and on {@link #close()} switches it off, waits until each running NIC
 * has finished the duty cycle that may still have been writing, drains the rest and gives the trace
 * back. The NICs never wait for it; what did not fit their rings is counted by them and reported by
 * {@link #dropped()}.
 *
 * <pre>{@code
 * try (PacketTracer tracer = PacketTracer.attach(dir, List.of(NicCoordinates.parse("0-0")), 128)) {
 *     while (running) { if (0 == tracer.poll(packets::add)) Thread.sleep(1); }
 * }
 * }</pre>
 */
public final class PacketTracer implements AutoCloseable
{
    /**
     * One traced packet: the NIC that sent or took it, when, its wire message type, its length on the
     * wire (header and whole payload), and its captured bytes (the 16-byte header, then the payload up
     * to the snap length).
     */
    public record Packet(NicCoordinates node, int direction, int wireType, long epochNanos, int wireLength,
        byte[] bytes)
    {
        public boolean isSent()
        {
            return TraceLayout.DIRECTION_SENT == direction;
        }
    }

    private static final long STOP_WAIT_MS = 1000;

    private final ClusterDirectory dir;
    private final List<Nic> nics = new ArrayList<>();
    private final List<Packet> pass = new ArrayList<>();
    private boolean closed;
    private Map<NicCoordinates, Long> droppedAtClose = Map.of();

    private static final class Nic
    {
        final NicCoordinates node;
        final MappedFile counters;
        final MappedFile sdram;
        final MappedFile wake;
        final NicWakeUp wakeUp;
        final AtomicBuffer control;
        final OneToOneRingBuffer ring;
        /** The NIC Control Program segment: its duty cycle count. */
        final ControlProgramSegment controlProgram;
        long droppedAtStart;
        boolean taken;

        Nic(final ClusterDirectory dir, final NicCoordinates node, final NicSdramLayout layout)
        {
            this.node = node;
            this.counters = MappedFile.mapExisting(dir.counters(node));
            this.sdram = MappedFile.mapExisting(dir.nicSdram(node));
            this.wake = MappedFile.mapExisting(dir.nicWake(node));
            this.wakeUp = new NicWakeUp(wake.buffer());
            this.control = new UnsafeBuffer(counters.buffer(), CountersLayout.TRACE_CONTROL_OFFSET,
                TraceLayout.CONTROL_LENGTH);
            this.ring = new OneToOneRingBuffer(
                new UnsafeBuffer(counters.buffer(), CountersLayout.TRACE_RING_OFFSET, TraceLayout.RING_LENGTH));
            this.controlProgram = new ControlProgramSegment().wrap(sdram.buffer(), (int)layout.controlProgramOffset());
        }
    }

    private PacketTracer(final ClusterDirectory dir)
    {
        this.dir = dir;
    }

    /**
     * @param snapLength payload bytes kept per packet, 0 .. {@link TraceLayout#MAX_SNAP_LENGTH}.
     * @throws IllegalStateException if a live tracer already traces one of the NICs (nothing is taken then).
     */
    public static PacketTracer attach(final ClusterDirectory dir, final List<NicCoordinates> nodes, final int snapLength)
    {
        if (snapLength < 0 || snapLength > TraceLayout.MAX_SNAP_LENGTH)
        {
            throw new IllegalArgumentException("snap length " + snapLength + ": give 0 to " + TraceLayout.MAX_SNAP_LENGTH);
        }
        final ClusterParameters params = ClusterStatus.liveProperties(dir).parameters();
        final NicSdramLayout layout = new NicSdramLayout(params);
        final PacketTracer tracer = new PacketTracer(dir);
        final long self = ProcessHandle.current().pid();
        try
        {
            for (final NicCoordinates node : nodes)
            {
                if (!params.hasNode(node))
                {
                    throw new IllegalArgumentException("cluster '" + dir.name() + "' has no node " + node + ": it is a " +
                        params.torus() + " torus");
                }
                final Nic nic = new Nic(dir, node, layout);
                tracer.nics.add(nic);
                take(nic, self);
                // Records a dead tracer left behind are not ours.
                nic.ring.read((type, buffer, index, length) -> { }, Integer.MAX_VALUE);
                nic.droppedAtStart = droppedCount(nic);
                // Reader: the NIC control program, once per duty cycle.
                nic.control.putIntRelease(TraceLayout.CAPTURE_LENGTH_OFFSET, PacketHeader.LENGTH + snapLength);
            }
        }
        catch (final RuntimeException ex)
        {
            tracer.close();
            throw ex;
        }
        return tracer;
    }

    private static void take(final Nic nic, final long self)
    {
        while (true)
        {
            final long holder = nic.control.getLongVolatile(TraceLayout.TRACER_PID_OFFSET);
            // A zombie holder (killed, not yet reaped) traces nothing any more.
            if (0 != holder && 0 != ProcessStartTicks.ofLiving(holder))
            {
                throw new IllegalStateException("node " + nic.node + " is already traced by pid " + holder +
                    " (another qnix trace): stop it first");
            }
            if (nic.control.compareAndSetLong(TraceLayout.TRACER_PID_OFFSET, holder, self))
            {
                nic.taken = true;
                return;
            }
        }
    }

    private static long droppedCount(final Nic nic)
    {
        return NicStatistics.counters(nic.counters.buffer(), "counters of node " + nic.node)
            .getOrDefault(NicCounters.TRACE_RECORDS_DROPPED, 0L);
    }

    /**
     * Drains every traced NIC's ring and hands the packets to {@code sink}, in time order within the pass.
     *
     * @return packets handed over.
     */
    public int poll(final Consumer<Packet> sink)
    {
        pass.clear();
        for (final Nic nic : nics)
        {
            nic.ring.read((direction, buffer, index, length) ->
            {
                final byte[] bytes = new byte[length - TraceLayout.PACKET_OFFSET];
                buffer.getBytes(index + TraceLayout.PACKET_OFFSET, bytes);
                pass.add(new Packet(nic.node, direction, buffer.getInt(index + TraceLayout.WIRE_TYPE_OFFSET),
                    buffer.getLong(index + TraceLayout.TIME_OFFSET), buffer.getInt(index + TraceLayout.WIRE_LENGTH_OFFSET),
                    bytes));
            }, Integer.MAX_VALUE);
        }
        // Stable: packets of one NIC with the same time keep their ring order.
        pass.sort(Comparator.comparingLong(Packet::epochNanos));
        pass.forEach(sink);
        return pass.size();
    }

    /**
     * @return trace records the NICs could not put into their rings since this tracer attached, by node;
     * after {@link #close()}, as they were when it closed.
     */
    public Map<NicCoordinates, Long> dropped()
    {
        if (closed)
        {
            return droppedAtClose;
        }
        final Map<NicCoordinates, Long> dropped = new java.util.LinkedHashMap<>();
        for (final Nic nic : nics)
        {
            dropped.put(nic.node, droppedCount(nic) - nic.droppedAtStart);
        }
        return dropped;
    }

    /**
     * Switches tracing off, waits (at most a second) until each NIC has finished the duty cycle that
     * may still have been writing, and hands the last packets to {@code sink}. Then {@link #close()}.
     */
    public void stop(final Consumer<Packet> sink)
    {
        final long[] cycles = new long[nics.size()];
        for (int i = 0; i < nics.size(); i++)
        {
            nics.get(i).control.putIntRelease(TraceLayout.CAPTURE_LENGTH_OFFSET, 0);
            cycles[i] = nics.get(i).controlProgram.dutyCycles();
        }
        final long deadline = HostClock.millis() + STOP_WAIT_MS;
        for (int i = 0; i < nics.size(); i++)
        {
            // Writer: the NIC, after each duty cycle; two more cycles and none can still see tracing on.
            while (nics.get(i).controlProgram.dutyCycles() < cycles[i] + 2 &&
                HostClock.millis() < deadline)
            {
                // An idle NIC sleeps and runs no duty cycle until woken.
                nics.get(i).wakeUp.ring();
                Thread.onSpinWait();
                Thread.yield();
            }
        }
        poll(sink);
        close();
    }

    /** Switches tracing off and gives every NIC's trace back; what is still in the rings is discarded. */
    public void close()
    {
        if (closed)
        {
            return;
        }
        // Read while the counters files are still mapped.
        droppedAtClose = dropped();
        closed = true;
        final long self = ProcessHandle.current().pid();
        for (final Nic nic : nics)
        {
            if (nic.taken)
            {
                nic.control.putIntRelease(TraceLayout.CAPTURE_LENGTH_OFFSET, 0);
                nic.control.compareAndSetLong(TraceLayout.TRACER_PID_OFFSET, self, 0);
            }
            CloseHelper.closeAll(nic.counters, nic.sdram, nic.wake);
        }
    }
}
