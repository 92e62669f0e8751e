package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.junit.jupiter.api.Test;
import org.qnix.abi.Doorbell;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.TraceLayout;
import org.qnix.abi.WireMessageType;

/**
 * What the firmware shows of itself, stepped by hand. The NIC's side of {@code qnix trace}: a copy of
 * every packet sent and taken, cut to the capture length, in order; nothing while off; a full trace
 * ring costs the cluster nothing but a counted drop. And its JFR events, in a message's order.
 */
class FirmwareObservabilityTest extends SteppedClusterTest
{
    private static final int GROUP = 7;
    private static final int PAGE = 1024;
    private static final int LENGTH = 2 * PAGE + 100;

    /** One record: direction, wire type, wire length, the captured header's tag and counter, bytes kept. */
    private record Traced(int direction, int wireType, int wireLength, int tag, int counter, int captured)
    {
    }

    @Test
    void everyPacketSentAndTakenIsCopiedInOrderWhileOnAndNoneWhileOff()
    {
        cluster = new SteppedCluster(base, SteppedCluster.smallParameters(2, 2).build());
        final SteppedProcess[] p = cluster.registerGroup(GROUP, 0, 1);
        final int captureLength = PacketHeader.LENGTH + 64;
        control(0).putIntRelease(TraceLayout.CAPTURE_LENGTH_OFFSET, captureLength);
        control(1).putIntRelease(TraceLayout.CAPTURE_LENGTH_OFFSET, captureLength);

        exchange(p, 1);
        final List<Traced> sender = drain(0);
        final List<Traced> receiver = drain(1);

        // The sender's NIC: Permission_Request out, Permission_Reply in, then three data packets out.
        assertEquals(TraceLayout.DIRECTION_SENT, sender.get(0).direction());
        assertEquals(SystemMessage.PERMISSION_REQUEST, sender.get(0).tag());
        assertEquals(TraceLayout.DIRECTION_TAKEN, sender.get(1).direction());
        assertEquals(SystemMessage.PERMISSION_REPLY, sender.get(1).tag());
        final List<Traced> dataOut = sender.stream().filter(t -> WireMessageType.DATA_PACKET == t.wireType()).toList();
        final List<Traced> dataIn = receiver.stream().filter(t -> WireMessageType.DATA_PACKET == t.wireType()).toList();
        assertEquals(3, dataOut.size(), sender.toString());
        assertEquals(3, dataIn.size(), receiver.toString());
        long bytes = 0;
        for (int i = 0; i < 3; i++)
        {
            assertEquals(i, dataOut.get(i).counter(), "data packets leave in order");
            assertEquals(i, dataIn.get(i).counter(), "and are taken in order");
            assertEquals(TraceLayout.DIRECTION_SENT, dataOut.get(i).direction());
            assertEquals(TraceLayout.DIRECTION_TAKEN, dataIn.get(i).direction());
            assertEquals(Math.min(captureLength, dataOut.get(i).wireLength()), dataOut.get(i).captured(), "cut");
            assertEquals(dataOut.get(i).wireLength(), dataIn.get(i).wireLength());
            bytes += dataOut.get(i).wireLength() - PacketHeader.LENGTH;
        }
        assertEquals(LENGTH, bytes, "the wire lengths are the packets' whole lengths");
        assertEquals(5, sender.size(), "nothing else: " + sender);
        assertEquals(5, receiver.size(), "the request in, the reply out, three data packets in: " + receiver);
        for (final Traced system : sender.subList(0, 2))
        {
            assertEquals(system.wireLength(), system.captured(), "a system message is kept whole");
        }

        // Off: the same exchange leaves nothing in the rings.
        control(0).putIntRelease(TraceLayout.CAPTURE_LENGTH_OFFSET, 0);
        control(1).putIntRelease(TraceLayout.CAPTURE_LENGTH_OFFSET, 0);
        exchange(p, 2);
        assertEquals(0, drain(0).size());
        assertEquals(0, drain(1).size());
        assertEquals(0, cluster.counter(0, NicCounters.TRACE_RECORDS_DROPPED));
    }

    @Test
    void aFullTraceRingDropsCopiesNotPackets()
    {
        cluster = new SteppedCluster(base, SteppedCluster.smallParameters(2, 2).build());
        final SteppedProcess[] p = cluster.registerGroup(GROUP, 0, 1);
        // A tracer that stopped reading: its ring is full.
        final OneToOneRingBuffer ring = new OneToOneRingBuffer(cluster.images.get(0).traceRing());
        final UnsafeBuffer filler = new UnsafeBuffer(new byte[ring.maxMsgLength()]);
        while (ring.write(TraceLayout.DIRECTION_SENT, filler, 0, filler.capacity()))
        {
            // Fill it.
        }
        while (ring.write(TraceLayout.DIRECTION_SENT, filler, 0, 8))
        {
            // To the last bytes.
        }
        control(0).putIntRelease(TraceLayout.CAPTURE_LENGTH_OFFSET, PacketHeader.LENGTH + 64);

        exchange(p, 3);
        assertEquals(5, cluster.counter(0, NicCounters.TRACE_RECORDS_DROPPED), "every copy of the exchange dropped");
        assertEquals(0, cluster.counter(1, NicCounters.PACKETS_DROPPED));
    }

    @Test
    void aMessagesStepsAreJfrEventsInItsOrder() throws Exception
    {
        cluster = new SteppedCluster(base, SteppedCluster.smallParameters(2, 2).build());
        final SteppedProcess[] p = cluster.registerGroup(GROUP, 0, 1);
        final Path file = base.resolve("steps.jfr");
        try (Recording recording = new Recording())
        {
            for (final String name : List.of("CommandTaken", "PermissionAsked", "PermissionGranted", "PacketSent",
                "DoorbellRung"))
            {
                recording.enable("org.qnix." + name);
            }
            recording.start();
            exchange(p, 4);
            recording.stop();
            recording.dump(file);
        }
        final List<String> steps = new ArrayList<>();
        for (final RecordedEvent event : RecordingFile.readAllEvents(file).stream()
            .sorted(java.util.Comparator.comparing(RecordedEvent::getStartTime)).toList())
        {
            final String name = event.getEventType().getName().substring("org.qnix.".length());
            steps.add(event.getString("node") + " " + name + switch (name)
            {
                case "CommandTaken" -> " " + event.getString("command");
                case "DoorbellRung" -> " " + event.getString("value");
                case "PacketSent" -> " type " + event.getInt("wireType");
                default -> "";
            });
        }
        assertEquals(List.of(
            "1-0 CommandTaken Receive",
            "0-0 CommandTaken Send",
            "0-0 PermissionAsked",
            "0-0 PacketSent type " + WireMessageType.SYSTEM_MESSAGE,
            "1-0 PermissionGranted",
            "1-0 PacketSent type " + WireMessageType.SYSTEM_MESSAGE,
            "0-0 PacketSent type " + WireMessageType.DATA_PACKET,
            "0-0 PacketSent type " + WireMessageType.DATA_PACKET,
            "0-0 PacketSent type " + WireMessageType.DATA_PACKET,
            "0-0 DoorbellRung Done",
            "1-0 DoorbellRung Done"), steps.stream().filter(s -> !s.contains("Doorbell") || s.endsWith("Done")).toList(),
            steps.toString());
    }

    /** A Send of {@link #LENGTH} bytes from p[0] to p[1], its receive posted first, checked delivered. */
    private void exchange(final SteppedProcess[] p, final int seed)
    {
        final SteppedProcess sender = p[0];
        final SteppedProcess receiver = p[1];
        sender.fill(0, LENGTH, seed);
        receiver.receiveContext(0, GROUP, 0, seed, 8 * PAGE, LENGTH);
        receiver.post(ProcessCommand.RECEIVE, 0);
        cluster.settle();
        sender.sendContext(0, receiver.name, seed, 0, LENGTH);
        sender.post(ProcessCommand.SEND, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, sender.sendDoorbell(0));
        assertEquals(Doorbell.DONE, receiver.receiveDoorbell(0));
        for (int i = 0; i < LENGTH; i++)
        {
            assertEquals(SteppedProcess.pattern(seed, i), receiver.areaByte(8 * PAGE + i), "byte " + i);
        }
        sender.freeDoorbells();
        receiver.freeDoorbells();
    }

    private AtomicBuffer control(final int node)
    {
        return cluster.images.get(node).traceControl();
    }

    private List<Traced> drain(final int node)
    {
        final List<Traced> traced = new ArrayList<>();
        final PacketHeader header = new PacketHeader();
        new OneToOneRingBuffer(cluster.images.get(node).traceRing()).read((direction, buffer, index, length) ->
        {
            header.wrap(buffer, index + TraceLayout.PACKET_OFFSET);
            traced.add(new Traced(direction, buffer.getInt(index + TraceLayout.WIRE_TYPE_OFFSET),
                buffer.getInt(index + TraceLayout.WIRE_LENGTH_OFFSET), header.contextTag(), header.counter(),
                length - TraceLayout.PACKET_OFFSET));
        }, Integer.MAX_VALUE);
        assertTrue(traced.stream().allMatch(t -> t.captured() >= PacketHeader.LENGTH), "headers kept");
        return traced;
    }
}
