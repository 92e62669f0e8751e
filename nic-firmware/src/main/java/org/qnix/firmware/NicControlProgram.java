package org.qnix.firmware;

import java.util.ArrayList;
import java.util.List;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.MessageHandler;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.DriverCommandEntry;
import org.qnix.abi.DriverCommandQueueLayout;
import org.qnix.abi.FileDescriptorBlock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.WireMessageType;

/**
 * The NIC control program of thesis section 3.5, as an Agrona {@link Agent}. Each {@link #doWork()}
 * checks the Driver Command Queue, runs TX, checks the Driver Command Queue again, runs RX, and keeps
 * the heartbeat (DESIGN.md 4). It runs under an {@code AgentRunner} in a firmware JVM or in the
 * daemon, or is stepped by hand in tests; all its state hangs off this object, so a debugger attached
 * to a firmware JVM sees the Name Table, Group Table and pending registrations as plain objects.
 *
 * <p>Everything read from shared memory (driver commands, packets) is validated; a bad one is
 * counted and answered with an error doorbell where it has one, and the loop carries on.
 *
 * <pre>{@code
 * NicControlProgram nic = new NicControlProgram(image, rings, counters, SystemEpochClock.INSTANCE);
 * nic.onStart();
 * while (running) { nic.doWork(); }
 * }</pre>
 */
public final class NicControlProgram implements Agent
{
    /** The NIC writes the Driver Command Queue Head back to the driver every eight commands (3.5). */
    static final int HEAD_UPDATE_INTERVAL = 8;
    private static final int RX_BATCH = 64;

    private final NodeImage image;
    private final ClusterParameters params;
    private final NicSdramLayout layout;
    private final HostMemoryLayout hostLayout;
    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    private final NicCoordinates self;
    private final int selfIndex;
    private final Wire wire;
    private final NicCounters counters;
    private final EpochClock clock;
    private final NameTable names;
    private final GroupTable groups;
    private final MessageEngine engine;
    private final GroupOperations groupOperations;
    private final Int2ObjectHashMap<Registration> registrations = new Int2ObjectHashMap<>();
    /** The process living in each Process Table entry, or null: the firmware's view of the table. */
    private final ProcessName[] residents;
    private final int controlArea;
    private final SystemMessageSender messages;
    private final PacketHeader inHeader = new PacketHeader();
    /** Scratch: groups an application's registration put other processes out of. */
    private final List<GroupTable.Group> evictedGroups = new ArrayList<>();
    private final DriverCommandEntry driverCommand = new DriverCommandEntry();
    private final MessageHandler rxHandler = this::onPacket;
    private int mode = ControlProgramLayout.MODE_THREAD;
    private int debugPort;
    private int driverHead;
    private int driverHeadPublished = -1;
    private int commandsSinceHeadUpdate;
    private long lastHeartbeatMs;
    private long heartbeat;
    private long dutyCycles;
    private boolean logEvents;

    /**
     * @param image    this node's mapped memory.
     * @param rings    the ring buffer region of every node's input FIFO, by node index.
     * @param counters where to count.
     * @param clock    wall clock for the heartbeat.
     */
    public NicControlProgram(
        final NodeImage image, final AtomicBuffer[] rings, final NicCounters counters, final EpochClock clock)
    {
        this.image = image;
        this.params = image.parameters();
        this.layout = image.sdramLayout();
        this.hostLayout = image.hostLayout();
        this.sdram = image.sdram();
        this.host = image.hostMemory();
        this.self = image.node();
        this.selfIndex = self.index(params.torusWidth());
        this.wire = new Wire(rings, selfIndex);
        this.counters = counters;
        this.clock = clock;
        this.names = new NameTable(sdram, layout);
        this.groups = new GroupTable(sdram, layout);
        this.messages = new SystemMessageSender(wire, counters, self, params.torusWidth());
        final ProcessSlot[] slots = new ProcessSlot[params.maxProcessesPerNic()];
        final Doorbells doorbells = new Doorbells(host, counters);
        this.groupOperations =
            new GroupOperations(params, groups, slots, messages, doorbells, counters, self, names, this::acknowledgeGroup);
        this.engine = new MessageEngine(image, wire, messages, counters, clock, names, groups, slots, groupOperations,
            doorbells);
        this.residents = new ProcessName[params.maxProcessesPerNic()];
        this.controlArea = (int)layout.controlProgramOffset();
        if (rings.length != params.nodeCount())
        {
            throw new IllegalArgumentException(rings.length + " FIFOs for " + params.nodeCount() + " nodes");
        }
    }

    /** Records how this control program runs, for {@code qnix cluster status}. */
    public NicControlProgram runMode(final int mode, final int debugPort)
    {
        this.mode = mode;
        this.debugPort = debugPort;
        return this;
    }

    public String roleName()
    {
        return "nic-" + self;
    }

    public void onStart()
    {
        final long now = clock.time();
        sdram.putLong(controlArea + ControlProgramLayout.PID_OFFSET, ProcessHandle.current().pid());
        sdram.putLong(controlArea + ControlProgramLayout.START_TIME_OFFSET, now);
        sdram.putInt(controlArea + ControlProgramLayout.VERSION_OFFSET, FileDescriptorBlock.LAYOUT_VERSION);
        sdram.putInt(controlArea + ControlProgramLayout.MODE_OFFSET, mode);
        sdram.putInt(controlArea + ControlProgramLayout.DEBUG_PORT_OFFSET, debugPort);
        writeHeartbeat(now);
        // Readers: the daemon waiting for this NIC at `cluster up`, and `cluster status`.
        sdram.putIntRelease(controlArea + ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
    }

    public void onClose()
    {
        // Readers: the daemon and `cluster status`: this NIC no longer runs its loop.
        sdram.putIntRelease(controlArea + ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_STOPPED);
    }

    public int doWork()
    {
        int work = heartbeat();
        work += driverCommands();
        work += tx();
        work += driverCommands();
        work += rx();
        // Reader: the driver, holding back pages it took from a process until no DMA that checked
        // them before they were taken can still be copying (ControlProgramLayout, DMA epoch). A
        // volatile store: the cycle's Protection Table loads come before it.
        sdram.putLongVolatile(controlArea + ControlProgramLayout.DUTY_CYCLES_OFFSET, ++dutyCycles);
        return work;
    }

    // ---------------------------------------------------------------------------------------------
    // Driver Command Queue (thesis 3.5: checked before TX and before RX; 3.5.3: the commands)
    // ---------------------------------------------------------------------------------------------

    private int driverCommands()
    {
        final DriverCommandEntry entry = driverCommand.wrap(sdram, (int)layout.driverCommandOffset(driverHead));
        final int command = entry.command();
        if (DriverCommand.NONE == command)
        {
            if (driverHeadPublished != driverHead)
            {
                publishDriverHead();
            }
            return 0;
        }

        final int position = driverHead;
        final ProcessName name = entry.name();
        final int pid = entry.pid();
        final int index = entry.index();
        final int group = entry.group();
        final int size = entry.size();
        entry.consume();
        driverHead = (driverHead + 1) % params.driverCommandQueueEntries();
        if (++commandsSinceHeadUpdate == HEAD_UPDATE_INTERVAL)
        {
            publishDriverHead();
        }
        counters.driverCommands.increment();

        switch (command)
        {
            case DriverCommand.NEW_PROCESS:
                newProcess(position, name, pid, index, group, size);
                break;

            case DriverCommand.DELETE_PROCESS:
                deleteProcess(position, name, index);
                break;

            default:
                rejectDriverCommand(position);
        }
        return 1;
    }

    private void publishDriverHead()
    {
        // Reader: the driver, checking how far the NIC has read its queue.
        host.putIntRelease((int)hostLayout.driverCommandQueueHeadAddress(), driverHead);
        sdram.putInt((int)layout.driverInfoOffset() + DriverCommandQueueLayout.INFO_NIC_HEAD_OFFSET, driverHead);
        driverHeadPublished = driverHead;
        commandsSinceHeadUpdate = 0;
    }

    private void driverDoorbell(final int position, final int value)
    {
        // Reader: the driver thread polling this doorbell (thesis 3.4, registration step 6).
        host.putIntRelease((int)hostLayout.driverDoorbellOffset(position), value);
    }

    private void rejectDriverCommand(final int position)
    {
        counters.driverCommandsRejected.increment();
        driverDoorbell(position, Doorbell.BAD_COMMAND);
    }

    /** Thesis 3.5.3, New_Process steps 1-5. */
    private void newProcess(
        final int position, final ProcessName name, final int pid, final int index, final int group, final int size)
    {
        if (index < 0 || index >= residents.length || pid <= 0 || size < 1 || size > params.nameTableEntries() ||
            null != residents[index] ||
            sdram.getIntVolatile((int)layout.processEntryOffset(index) + ProcessTableLayout.PID_OFFSET) != pid)
        {
            rejectDriverCommand(position);
            return;
        }
        final int nicPid = ProcessTableLayout.nicPid(index);
        if (null == names.put(name, self, nicPid, pid))
        {
            counters.driverCommandsRejected.increment();
            driverDoorbell(position, Doorbell.NO_RESOURCES);
            return;
        }
        evictedGroups.clear();
        final GroupTable.AddResult added =
            groups.addMember(group, size, new GroupTable.Member(name, self, nicPid), evictedGroups);
        groupOperations.membersLeft(evictedGroups);
        if (GroupTable.AddResult.FULL == added || GroupTable.AddResult.REFUSED == added)
        {
            names.remove(name, self, nicPid);
            counters.driverCommandsRejected.increment();
            driverDoorbell(position, GroupTable.AddResult.FULL == added ? Doorbell.NO_RESOURCES : Doorbell.BAD_COMMAND);
            return;
        }

        residents[index] = name;
        engine.activate(index, name.ai(), name.pi());
        setProcessState(index, ProcessTableLayout.STATE_REGISTERING);
        final Registration registration = new Registration(index, name, pid, group, size, params.nodeCount());
        registration.processAck(selfIndex);
        registrations.put(index, registration);
        // The command is taken: its position is free again, and the registration's outcome goes into
        // the Process Table entry's Registration State (issue 17, item 5).
        driverDoorbell(position, Doorbell.DONE);

        nameMessage(SystemMessage.NEW_PROCESS, name, nicPid)
            .putInt(SystemMessage.NEW_PROCESS_OS_PID_OFFSET, pid)
            .putInt(SystemMessage.NEW_PROCESS_GROUP_OFFSET, group)
            .putInt(SystemMessage.NEW_PROCESS_GROUP_SIZE_OFFSET, size)
            .broadcast(SystemMessage.NEW_PROCESS_LENGTH);

        messages.begin(SystemMessage.NEW_GROUP)
            .putInt(SystemMessage.GROUP_OFFSET, group)
            .putInt(SystemMessage.GROUP_SIZE_OFFSET, size)
            .putInt(SystemMessage.GROUP_MEMBER_AI_OFFSET, name.ai())
            .putInt(SystemMessage.GROUP_MEMBER_PI_OFFSET, name.pi())
            .putInt(SystemMessage.GROUP_MEMBER_NIC_PID_OFFSET, nicPid)
            .broadcast(SystemMessage.NEW_GROUP_LENGTH);

        if (GroupTable.AddResult.COMPLETED == added)
        {
            acknowledgeGroup(groups.lookup(group));
        }
        completeIfDone(registration);
    }

    /** Thesis 3.5.3, Delete_Process steps 1-5; DESIGN.md 8, item 12. */
    private void deleteProcess(final int position, final ProcessName name, final int index)
    {
        if (index < 0 || index >= residents.length || null == residents[index] || !residents[index].equals(name))
        {
            rejectDriverCommand(position);
            return;
        }
        final int nicPid = ProcessTableLayout.nicPid(index);
        log("Delete_Process " + name + " index " + index);
        final Registration pending = registrations.remove(index);
        if (null != pending)
        {
            abort(pending);
        }

        nameMessage(SystemMessage.DELETE_PROCESS, name, nicPid).broadcast(SystemMessage.DELETE_PROCESS_LENGTH);

        residents[index] = null;
        engine.deactivate(index);
        groupOperations.processLeaving(engine.slot(index));
        engine.peerDeleted(selfIndex, nicPid, name.ai(), name.pi());
        setProcessState(index, ProcessTableLayout.STATE_FREE);
        names.remove(name, self, nicPid);
        groupOperations.membersLeft(groups.removeMember(name, self, nicPid));
        counters.deletions.increment();
        driverDoorbell(position, Doorbell.DONE);
    }

    private void abort(final Registration registration)
    {
        log("registration aborted: " + registration);
        counters.registrationsAborted.increment();
        setProcessState(registration.index, ProcessTableLayout.STATE_FAILED);
    }

    private void completeIfDone(final Registration registration)
    {
        if (registration.isComplete() && registrations.remove(registration.index) == registration)
        {
            log("registration complete: " + registration);
            setProcessState(registration.index, ProcessTableLayout.STATE_REGISTERED);
            counters.registrations.increment();
        }
    }

    private void setProcessState(final int index, final int state)
    {
        // Readers: `cluster status`, and the driver waiting for a registration (thesis 3.4, step 6).
        sdram.putIntRelease((int)layout.processEntryOffset(index) + ProcessTableLayout.STATE_OFFSET, state);
    }

    /**
     * A registration whose process was de-registered meanwhile (the driver cleared the Process Table
     * PID, de-registration step 1) ends in the Registration State failed, even before the
     * Delete_Process command can be posted.
     */
    private void abortOrphanedRegistrations()
    {
        if (registrations.isEmpty())
        {
            return;
        }
        List<Registration> orphaned = null;
        for (final Registration registration : registrations.values())
        {
            final int pid = sdram.getIntVolatile(
                (int)layout.processEntryOffset(registration.index) + ProcessTableLayout.PID_OFFSET);
            if (pid != registration.osPid)
            {
                orphaned = null == orphaned ? new ArrayList<>() : orphaned;
                orphaned.add(registration);
            }
        }
        if (null != orphaned)
        {
            for (final Registration registration : orphaned)
            {
                registrations.remove(registration.index);
                abort(registration);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // TX (thesis 3.5 steps 1-7); RX (steps 1-4) and system messages (3.5.1)
    // ---------------------------------------------------------------------------------------------

    /** Thesis 3.5, TX: waiting system messages, then steps 1-4 and 7 (one packet), then 5-6 (one command). */
    private int tx()
    {
        int work = wire.flush();
        work += engine.startWaitingCasts();
        work += engine.injectPacket();
        work += engine.readCommand();
        return work;
    }

    private int rx()
    {
        return wire.receive(rxHandler, RX_BATCH);
    }

    private void onPacket(final int messageType, final MutableDirectBuffer buffer, final int index, final int length)
    {
        counters.packetsReceived.increment();
        try
        {
            if (length < PacketHeader.LENGTH)
            {
                counters.packetsDropped.increment();
                return;
            }
            inHeader.wrap(buffer, index);
            if (inHeader.destination() != self.packed() || inHeader.packetLength() != length - PacketHeader.LENGTH)
            {
                counters.packetsDropped.increment();
                return;
            }
            if (WireMessageType.SYSTEM_MESSAGE == messageType && inHeader.isSystemMessage())
            {
                onSystemMessage(buffer, index + PacketHeader.LENGTH, length - PacketHeader.LENGTH);
            }
            else if (WireMessageType.DATA_PACKET == messageType && !inHeader.isSystemMessage())
            {
                engine.onDataPacket(inHeader, buffer, index);
            }
            else
            {
                counters.packetsDropped.increment();
            }
        }
        catch (final RuntimeException ex)
        {
            // A malformed packet must never stop the loop (DESIGN.md 4).
            counters.systemMessagesRejected.increment();
        }
    }

    private void onSystemMessage(final DirectBuffer buffer, final int payload, final int length)
    {
        counters.systemMessagesReceived.increment();
        final int sourcePacked = inHeader.source();
        final NicCoordinates source = NicCoordinates.unpack(sourcePacked);
        final int sourceIndex = source.index(params.torusWidth());
        if (source.x() >= params.torusWidth() || source.y() >= params.torusHeight())
        {
            counters.systemMessagesRejected.increment();
            return;
        }

        switch (inHeader.contextTag())
        {
            case SystemMessage.PERMISSION_REQUEST:
            {
                if (length < SystemMessage.PERMISSION_REQUEST_LENGTH)
                {
                    break;
                }
                engine.onPermissionRequest(sourceIndex, buffer, payload);
                return;
            }

            case SystemMessage.PERMISSION_REPLY:
            {
                if (length < SystemMessage.PERMISSION_REPLY_LENGTH)
                {
                    break;
                }
                engine.onPermissionReply(buffer, payload);
                return;
            }

            case SystemMessage.TRANSFER_ABORT:
            {
                if (length < SystemMessage.TRANSFER_ABORT_LENGTH)
                {
                    break;
                }
                engine.onTransferAbort(sourceIndex, buffer, payload);
                return;
            }

            case SystemMessage.NEW_PROCESS:
            {
                if (length < SystemMessage.NEW_PROCESS_LENGTH)
                {
                    break;
                }
                final ProcessName name = readName(buffer, payload);
                final int nicPid = buffer.getInt(payload + SystemMessage.NAME_NIC_PID_OFFSET);
                final int osPid = buffer.getInt(payload + SystemMessage.NEW_PROCESS_OS_PID_OFFSET);
                if (null == names.put(name, source, nicPid, osPid))
                {
                    // No room: no acknowledgement, so the registering NIC never claims success.
                    counters.systemMessagesRejected.increment();
                    return;
                }
                nameMessage(SystemMessage.NEW_PROCESS_ACK, name, nicPid)
                    .sendTo(sourceIndex, SystemMessage.NEW_PROCESS_ACK_LENGTH);
                return;
            }

            case SystemMessage.NEW_PROCESS_ACK:
            {
                if (length < SystemMessage.NEW_PROCESS_ACK_LENGTH)
                {
                    break;
                }
                final ProcessName name = readName(buffer, payload);
                final Registration registration = pendingRegistration(
                    buffer.getInt(payload + SystemMessage.NAME_NIC_PID_OFFSET));
                if (null != registration && registration.name.equals(name))
                {
                    registration.processAck(sourceIndex);
                    completeIfDone(registration);
                }
                return;
            }

            case SystemMessage.NEW_GROUP:
            {
                if (length < SystemMessage.NEW_GROUP_LENGTH)
                {
                    break;
                }
                final int group = buffer.getInt(payload + SystemMessage.GROUP_OFFSET);
                final int size = buffer.getInt(payload + SystemMessage.GROUP_SIZE_OFFSET);
                final ProcessName member = new ProcessName(
                    buffer.getInt(payload + SystemMessage.GROUP_MEMBER_AI_OFFSET),
                    buffer.getInt(payload + SystemMessage.GROUP_MEMBER_PI_OFFSET));
                final int nicPid = buffer.getInt(payload + SystemMessage.GROUP_MEMBER_NIC_PID_OFFSET);
                if (size < 1 || size > params.nameTableEntries())
                {
                    break;
                }
                evictedGroups.clear();
                final GroupTable.AddResult added =
                    groups.addMember(group, size, new GroupTable.Member(member, source, nicPid), evictedGroups);
                groupOperations.membersLeft(evictedGroups);
                if (GroupTable.AddResult.COMPLETED == added)
                {
                    acknowledgeGroup(groups.lookup(group));
                }
                else if (GroupTable.AddResult.DUPLICATE == added && groups.lookup(group).isComplete())
                {
                    // A member joining again (a retried Join_Group) waits for every NIC's acknowledgement
                    // afresh: this NIC gave its own when the group completed, so it gives it again.
                    messages.begin(SystemMessage.NEW_GROUP_ACK)
                        .putInt(SystemMessage.GROUP_OFFSET, group)
                        .putInt(SystemMessage.GROUP_ACK_NIC_PID_OFFSET, nicPid)
                        .sendTo(sourceIndex, SystemMessage.NEW_GROUP_ACK_LENGTH);
                }
                else if (GroupTable.AddResult.FULL == added || GroupTable.AddResult.REFUSED == added)
                {
                    counters.systemMessagesRejected.increment();
                }
                return;
            }

            case SystemMessage.NEW_GROUP_ACK:
            {
                if (length < SystemMessage.NEW_GROUP_ACK_LENGTH)
                {
                    break;
                }
                onGroupAck(sourceIndex, buffer.getInt(payload + SystemMessage.GROUP_OFFSET),
                    buffer.getInt(payload + SystemMessage.GROUP_ACK_NIC_PID_OFFSET));
                return;
            }

            case SystemMessage.DELETE_PROCESS:
            {
                if (length < SystemMessage.DELETE_PROCESS_LENGTH)
                {
                    break;
                }
                final ProcessName name = readName(buffer, payload);
                final int nicPid = buffer.getInt(payload + SystemMessage.NAME_NIC_PID_OFFSET);
                log("Delete_Process message from " + source + ": " + name + " NIC PID " + nicPid);
                names.remove(name, source, nicPid);
                groupOperations.membersLeft(groups.removeMember(name, source, nicPid));
                engine.peerDeleted(sourceIndex, nicPid, name.ai(), name.pi());
                return;
            }

            case SystemMessage.BARRIER:
            {
                if (length < SystemMessage.BARRIER_LENGTH)
                {
                    break;
                }
                groupOperations.onBarrierMessage(sourceIndex, buffer, payload);
                return;
            }

            default:
                break;
        }
        counters.systemMessagesRejected.increment();
    }

    /**
     * Every NIC that sees a group complete acknowledges it to each member's NIC (thesis 3.5.1,
     * New_Group), so a member's registration completes only once every NIC knows the whole group.
     */
    private void acknowledgeGroup(final GroupTable.Group group)
    {
        log("group " + group.name + " complete: " + group.members);
        for (final GroupTable.Member member : group.members)
        {
            if (member.node().equals(self))
            {
                onGroupAck(selfIndex, group.name, member.nicPid());
            }
            else
            {
                messages.begin(SystemMessage.NEW_GROUP_ACK)
                    .putInt(SystemMessage.GROUP_OFFSET, group.name)
                    .putInt(SystemMessage.GROUP_ACK_NIC_PID_OFFSET, member.nicPid())
                    .sendTo(member.node().index(params.torusWidth()), SystemMessage.NEW_GROUP_ACK_LENGTH);
            }
        }
    }

    /** A New_Group_Ack counts for the member's registration and for its Join_Group operations. */
    private void onGroupAck(final int sourceIndex, final int group, final int nicPid)
    {
        final Registration registration = pendingRegistration(nicPid);
        if (null != registration && registration.group == group)
        {
            registration.groupAck(sourceIndex);
            completeIfDone(registration);
        }
        groupOperations.onGroupAck(sourceIndex, group, nicPid);
    }

    private Registration pendingRegistration(final int nicPid)
    {
        return registrations.get(ProcessTableLayout.index(nicPid));
    }

    private static ProcessName readName(final DirectBuffer buffer, final int payload)
    {
        return new ProcessName(
            buffer.getInt(payload + SystemMessage.NAME_AI_OFFSET), buffer.getInt(payload + SystemMessage.NAME_PI_OFFSET));
    }

    private SystemMessageSender nameMessage(final int code, final ProcessName name, final int nicPid)
    {
        return messages.begin(code)
            .putInt(SystemMessage.NAME_AI_OFFSET, name.ai())
            .putInt(SystemMessage.NAME_PI_OFFSET, name.pi())
            .putInt(SystemMessage.NAME_NIC_PID_OFFSET, nicPid);
    }

    /** Control-plane events only (registration, deletion): rare, and what one wants in firmware.log. */
    private void log(final String event)
    {
        if (logEvents)
        {
            System.out.println(clock.time() + " NIC " + self + ": " + event);
        }
    }

    /** Turns the control-plane event log on (firmware JVMs) or off (stepped tests). */
    public NicControlProgram logEvents(final boolean on)
    {
        this.logEvents = on;
        return this;
    }

    // ---------------------------------------------------------------------------------------------
    // Heartbeat
    // ---------------------------------------------------------------------------------------------

    private int heartbeat()
    {
        final long now = clock.time();
        if (now - lastHeartbeatMs < ControlProgramLayout.HEARTBEAT_INTERVAL_MS)
        {
            return 0;
        }
        writeHeartbeat(now);
        abortOrphanedRegistrations();
        return 1;
    }

    private void writeHeartbeat(final long now)
    {
        lastHeartbeatMs = now;
        sdram.putLong(controlArea + ControlProgramLayout.HEARTBEAT_COUNTER_OFFSET, ++heartbeat);
        // Readers: the daemon, `cluster status` and user libraries checking that the NIC is alive.
        sdram.putLongRelease(controlArea + ControlProgramLayout.HEARTBEAT_TIME_OFFSET, now);
        counters.heartbeats.increment();
    }

    // ---------------------------------------------------------------------------------------------
    // Inspection (tests, debugger, `qnix inspect`)
    // ---------------------------------------------------------------------------------------------

    public NicCoordinates node()
    {
        return self;
    }

    NameTable nameTable()
    {
        return names;
    }

    GroupTable groupTable()
    {
        return groups;
    }

    int pendingRegistrations()
    {
        return registrations.size();
    }

    ProcessName resident(final int index)
    {
        return residents[index];
    }

    NodeImage image()
    {
        return image;
    }

    MessageEngine engine()
    {
        return engine;
    }

    GroupOperations groupOperations()
    {
        return groupOperations;
    }
}
