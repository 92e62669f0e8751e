package org.qnix.firmware;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JDK Flight Recorder events for the steps of a message through the NIC control program, so that a
 * recording of a firmware JVM ({@code jcmd PID JFR.start}, then JDK Mission Control) shows a message's
 * path: the command taken, the permission asked and granted, each packet sent, the doorbell rung.
 * Each step checks first that the Flight Recorder is initialized ({@link FlightRecorder#isInitialized()},
 * one volatile read: it is once anything has asked for it, any {@code jcmd PID JFR.*}, JMC or a
 * recording) and then its event type's {@link EventType#isEnabled()}. Until then nothing is allocated,
 * and of JFR only the class {@code FlightRecorder} is loaded.
 *
 * <pre>{@code
 * jcmd $(pgrep -f 'FirmwareMain.*0-0') JFR.start name=qnix settings=profile
 * jcmd ... JFR.dump name=qnix filename=nic-0-0.jfr      # open in JDK Mission Control: Event Browser, QNIX
 * }</pre>
 */
final class FirmwareEvents
{
    private FirmwareEvents()
    {
    }

    /**
     * The event types, registered with JFR the first time a step finds the Flight Recorder initialized.
     * Registering starts JFR's own machinery, which spins classes with ASM: done at the first registration
     * of a cluster with no recording, it stalled the duty cycle of every NIC of a shared firmware JVM and had
     * the JIT compile ASM on the NICs' CPU while the first streams ran (docs/performance/first-traffic.txt).
     */
    private static final class Types
    {
        static final EventType COMMAND_TAKEN = EventType.getEventType(CommandTaken.class);
        static final EventType PERMISSION_ASKED = EventType.getEventType(PermissionAsked.class);
        static final EventType PERMISSION_GRANTED = EventType.getEventType(PermissionGranted.class);
        static final EventType PACKET_SENT = EventType.getEventType(PacketSent.class);
        static final EventType DOORBELL_RUNG = EventType.getEventType(DoorbellRung.class);
    }

    @Name("org.qnix.CommandTaken")
    @Label("Command taken")
    @Category({"QNIX", "NIC control program"})
    @Description("A command taken from a process's Command Queue (thesis 3.5, TX steps 5-6)")
    @StackTrace(false)
    static final class CommandTaken extends Event
    {
        @Label("Node")
        String node;
        @Label("NIC PID")
        int nicPid;
        @Label("Command")
        String command;
        @Label("Context")
        int context;
    }

    @Name("org.qnix.PermissionAsked")
    @Label("Permission asked")
    @Category({"QNIX", "NIC control program"})
    @Description("A Permission_Request sent for a message (thesis 3.5.1)")
    @StackTrace(false)
    static final class PermissionAsked extends Event
    {
        @Label("Node")
        String node;
        @Label("Destination node index")
        int destination;
        @Label("Operation id")
        long operation;
        @Label("Message length")
        long length;
    }

    @Name("org.qnix.PermissionGranted")
    @Label("Permission granted")
    @Category({"QNIX", "NIC control program"})
    @Description("A Permission_Request granted: a transfer handle given, into a posted receive or staging")
    @StackTrace(false)
    static final class PermissionGranted extends Event
    {
        @Label("Node")
        String node;
        @Label("Source node index")
        int source;
        @Label("Transfer handle")
        int handle;
        @Label("Staged")
        boolean staged;
    }

    @Name("org.qnix.PacketSent")
    @Label("Packet sent")
    @Category({"QNIX", "NIC control program"})
    @Description("A packet appended to a destination NIC's input FIFO")
    @StackTrace(false)
    static final class PacketSent extends Event
    {
        @Label("Node")
        String node;
        @Label("Destination node index")
        int destination;
        @Label("Wire message type")
        int wireType;
        @Label("Bytes")
        int length;
    }

    @Name("org.qnix.DoorbellRung")
    @Label("Doorbell rung")
    @Category({"QNIX", "NIC control program"})
    @Description("A Send or Receive Doorbell written with an operation's outcome")
    @StackTrace(false)
    static final class DoorbellRung extends Event
    {
        @Label("Node")
        String node;
        @Label("Doorbell array")
        long doorbellArray;
        @Label("Context")
        int context;
        @Label("Value")
        String value;
        @Label("Process woken")
        boolean woken;
    }

    static void commandTaken(final String node, final int nicPid, final int command, final int context)
    {
        if (FlightRecorder.isInitialized() && Types.COMMAND_TAKEN.isEnabled())
        {
            final CommandTaken event = new CommandTaken();
            event.node = node;
            event.nicPid = nicPid;
            event.command = org.qnix.abi.ProcessCommand.name(command);
            event.context = context;
            event.commit();
        }
    }

    static void permissionAsked(final String node, final int destination, final long operation, final long length)
    {
        if (FlightRecorder.isInitialized() && Types.PERMISSION_ASKED.isEnabled())
        {
            final PermissionAsked event = new PermissionAsked();
            event.node = node;
            event.destination = destination;
            event.operation = operation;
            event.length = length;
            event.commit();
        }
    }

    static void permissionGranted(final String node, final int source, final int handle, final boolean staged)
    {
        if (FlightRecorder.isInitialized() && Types.PERMISSION_GRANTED.isEnabled())
        {
            final PermissionGranted event = new PermissionGranted();
            event.node = node;
            event.source = source;
            event.handle = handle;
            event.staged = staged;
            event.commit();
        }
    }

    static void packetSent(final String node, final int destination, final int wireType, final int length)
    {
        if (FlightRecorder.isInitialized() && Types.PACKET_SENT.isEnabled())
        {
            final PacketSent event = new PacketSent();
            event.node = node;
            event.destination = destination;
            event.wireType = wireType;
            event.length = length;
            event.commit();
        }
    }

    static void doorbellRung(final String node, final long doorbellArray, final int context, final int value,
        final boolean woken)
    {
        if (FlightRecorder.isInitialized() && Types.DOORBELL_RUNG.isEnabled())
        {
            final DoorbellRung event = new DoorbellRung();
            event.node = node;
            event.doorbellArray = doorbellArray;
            event.context = context;
            event.value = org.qnix.abi.Doorbell.name(value);
            event.woken = woken;
            event.commit();
        }
    }
}
