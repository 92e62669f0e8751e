package org.qnix.firmware;

import java.util.ArrayList;
import java.util.List;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NewGroupFlyweight;
import org.qnix.abi.NewProcessFlyweight;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableEntry;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.SystemMessage;

/**
 * Processes coming and going (thesis 3.5.3, the New_Process and Delete_Process driver commands; 3.5.1,
 * the New_Process, New_Process_Ack, New_Group, New_Group_Ack and Delete_Process system messages):
 * the Name and Group Tables of every NIC kept in step, the pending {@link Registration}s and their
 * Registration State in the Process Table, and the working state of each Process Table entry
 * ({@link ProcessSlot}) made active and inactive. A process deleted here or elsewhere ends the
 * operations that involve it in each role ({@link SendScheduler}, {@link CastSender},
 * {@link ReceiveTable}, {@link GroupOperations}).
 *
 * <pre>{@code
 * int doorbell = registrations.newProcess(name, pid, index, group, size);  // from the driver
 * registrations.onNewProcessAck(sourceIndex, newProcess);                  // from another NIC
 * }</pre>
 */
final class ProcessRegistrations
{
    private final ClusterParameters params;
    private final NicSdramLayout layout;
    private final AtomicBuffer sdram;
    private final ProcessTableEntry processEntry = new ProcessTableEntry();
    private final NicCoordinates self;
    private final int selfIndex;
    private final NicCounters counters;
    private final NameTable names;
    private final GroupTable groups;
    private final ProcessSlot[] slots;
    private final ActiveProcesses activeProcesses;
    private final SystemMessageSender messages;
    private final SendScheduler scheduler;
    private final CastSender casts;
    private final ReceiveTable receives;
    private final GroupOperations groupOperations;
    private final Int2ObjectHashMap<Registration> registrations = new Int2ObjectHashMap<>();
    /** The process living in each Process Table entry, or null: the firmware's view of the table. */
    private final ProcessName[] residents;
    /** The Process Table entries a VIA process lives in (issue 14): active, but nameless. */
    private final boolean[] viaResidents;
    private final ViaEngine via;
    /** Scratch: groups an application's registration put other processes out of. */
    private final List<GroupTable.Group> evictedGroups = new ArrayList<>();
    private boolean logEvents;

    /** @param via a VIA process's VIs are the VIA role's to forget when it leaves. */
    ProcessRegistrations(final FirmwareContext ctx, final SendScheduler scheduler, final CastSender casts,
        final ReceiveTable receives, final GroupOperations groupOperations, final ViaEngine via)
    {
        this.via = via;
        this.params = ctx.parameters();
        this.layout = ctx.sdramLayout();
        this.sdram = ctx.sdram();
        this.self = ctx.self();
        this.selfIndex = ctx.selfIndex();
        this.counters = ctx.counters();
        this.names = ctx.nameTable();
        this.groups = ctx.groupTable();
        this.slots = ctx.processSlots();
        this.activeProcesses = ctx.activeProcesses();
        this.messages = ctx.systemMessages();
        this.scheduler = scheduler;
        this.casts = casts;
        this.receives = receives;
        this.groupOperations = groupOperations;
        this.residents = new ProcessName[params.maxProcessesPerNic()];
        this.viaResidents = new boolean[params.maxProcessesPerNic()];
    }

    // ---------------------------------------------------------------------------------------------
    // Driver commands (thesis 3.5.3)
    // ---------------------------------------------------------------------------------------------

    /**
     * Thesis 3.5.3, New_Process steps 1-5.
     *
     * @return the driver doorbell for the command: {@link Doorbell#DONE} once it is taken (the outcome
     * of the registration goes into the Process Table entry's Registration State, issue 17, item 5), or
     * the error it is refused with.
     */
    int newProcess(final ProcessName name, final int pid, final int index, final int group, final int size)
    {
        if (index < 0 || index >= residents.length || pid <= 0 || size < 1 || size > params.nameTableEntries() ||
            null != residents[index] || viaResidents[index] ||
            processEntry(index).pid() != pid)
        {
            return Doorbell.BAD_COMMAND;
        }
        final int nicPid = ProcessTableLayout.nicPid(index);
        final int incarnation = nextIncarnation(index);
        if (null == names.put(name, self, nicPid, pid, incarnation))
        {
            return Doorbell.NO_RESOURCES;
        }
        evictedGroups.clear();
        final GroupTable.AddResult added =
            groups.addMember(group, size, new GroupTable.Member(name, self, nicPid, incarnation), evictedGroups);
        groupOperations.membersLeft(evictedGroups);
        if (GroupTable.AddResult.FULL == added || GroupTable.AddResult.REFUSED == added)
        {
            names.remove(name, self, nicPid);
            return GroupTable.AddResult.FULL == added ? Doorbell.NO_RESOURCES : Doorbell.BAD_COMMAND;
        }

        residents[index] = name;
        activate(index, name.ai(), name.pi(), incarnation);
        setProcessState(index, ProcessTableLayout.STATE_REGISTERING);
        final Registration registration = new Registration(index, name, pid, group, size, params.nodeCount());
        registration.processAck(selfIndex);
        registrations.put(index, registration);

        messages.newProcess().name(name).nicPid(nicPid).osPid(pid).group(group).groupSize(size)
            .incarnation(incarnation);
        messages.broadcast(SystemMessage.NEW_PROCESS_LENGTH);
        messages.newGroup().group(group).groupSize(size).memberAi(name.ai()).memberPi(name.pi()).memberNicPid(nicPid)
            .memberIncarnation(incarnation);
        messages.broadcast(SystemMessage.NEW_GROUP_LENGTH);

        if (GroupTable.AddResult.COMPLETED == added)
        {
            acknowledgeGroup(groups.lookup(group));
        }
        completeIfDone(registration);
        return Doorbell.DONE;
    }

    /**
     * Thesis 3.5.3, Delete_Process steps 1-5; DESIGN.md 8, item 12.
     *
     * @return the driver doorbell for the command.
     */
    int deleteProcess(final ProcessName name, final int index)
    {
        if (index < 0 || index >= residents.length || null == residents[index] || !residents[index].equals(name))
        {
            return Doorbell.BAD_COMMAND;
        }
        final int nicPid = ProcessTableLayout.nicPid(index);
        log("Delete_Process " + name + " index " + index);
        final Registration pending = registrations.remove(index);
        if (null != pending)
        {
            abort(pending);
        }

        // Steps 3-5 before step 1's broadcast: on the thesis' NIC they follow it within the same command,
        // before any packet could reach another NIC; here this NIC's thread may be descheduled between the
        // two, and another NIC would then end its waits on the process with Peer Gone while this one still
        // lists it. Done first, a peer that saw Peer Gone finds the process gone here too.
        residents[index] = null;
        deactivate(index);
        groupOperations.processLeaving(slots[index]);
        peerDeleted(selfIndex, nicPid, name.ai(), name.pi());
        setProcessState(index, ProcessTableLayout.STATE_FREE);
        names.remove(name, self, nicPid);
        groupOperations.membersLeft(groups.removeMember(name, self, nicPid));

        messages.deleteProcess().name(name).nicPid(nicPid);
        messages.broadcast(SystemMessage.DELETE_PROCESS_LENGTH);
        counters.deletions.increment();
        return Doorbell.DONE;
    }

    /**
     * New_Via_Process (issue 14): a VIA process lives in entry {@code index}. Its Command Queue is
     * scanned from now on and its Registration State is registered at once: it has no name for any
     * other NIC to learn, so nothing is broadcast. Its VIs, regions and CQs are in the VIA tables,
     * which the driver writes and this NIC only reads.
     *
     * @return the driver doorbell for the command.
     */
    int newViaProcess(final int pid, final int index)
    {
        if (index < 0 || index >= residents.length || pid <= 0 || null != residents[index] || viaResidents[index])
        {
            return Doorbell.BAD_COMMAND;
        }
        // Written by the driver at registration, the PID last with release, before it posted the command.
        final ProcessTableEntry entry = processEntry(index);
        if (entry.pid() != pid || ProcessTableLayout.KIND_VIA != entry.kind())
        {
            return Doorbell.BAD_COMMAND;
        }
        log("New_Via_Process pid " + pid + " index " + index);
        viaResidents[index] = true;
        // A VIA process is the entry's next one too: a late request for the QNIX process before it is not its.
        activate(index, 0, 0, nextIncarnation(index));
        slots[index].via = true;
        setProcessState(index, ProcessTableLayout.STATE_REGISTERED);
        counters.registrations.increment();
        return Doorbell.DONE;
    }

    /**
     * Delete_Via_Process (issue 14): the VIA process of entry {@code index} is gone; its work is dropped
     * as a deleted QNIX process's is, and nothing is broadcast.
     *
     * @return the driver doorbell for the command.
     */
    int deleteViaProcess(final int index)
    {
        if (index < 0 || index >= residents.length || !viaResidents[index])
        {
            return Doorbell.BAD_COMMAND;
        }
        log("Delete_Via_Process index " + index);
        viaResidents[index] = false;
        deactivate(index);
        via.processDeleted(index);
        setProcessState(index, ProcessTableLayout.STATE_FREE);
        counters.deletions.increment();
        return Doorbell.DONE;
    }

    /**
     * The incarnation of the next process in entry {@code index}: how many processes, QNIX or VIA, it
     * will have held. Every request to that process carries it (New_Process), so that one for an earlier
     * process is not delivered to it. The entry's {@link ProcessSlot} keeps the count across processes.
     */
    private int nextIncarnation(final int index)
    {
        final ProcessSlot slot = slots[index];
        return (null == slot ? 0 : slot.incarnation) + 1;
    }

    /** A process now lives in Process Table entry {@code index}: its queues start empty. */
    private void activate(final int index, final int ai, final int pi, final int incarnation)
    {
        ProcessSlot slot = slots[index];
        if (null == slot)
        {
            final int contextCount = params.contextsPerProcess();
            slot = new ProcessSlot(index, contextCount, params.descriptorsPerRegion(), index * contextCount);
            scheduler.adopt(slot);
            slots[index] = slot;
        }
        final ProcessTableEntry entry = processEntry(index);
        slot.aiName = ai;
        slot.piName = pi;
        slot.incarnation = incarnation;
        // Written by the driver at registration step 5, before it posted New_Process.
        slot.sendDoorbells = entry.sendDoorbells();
        slot.receiveDoorbells = entry.receiveDoorbells();
        slot.commandQueueHeadAddress = entry.commandQueueHeadAddress();
        CommandQueueReader.resetQueue(slot);
        slot.barrierSequences.clear();
        slot.via = false;
        slot.active = true;
        activeProcesses.add(index);
    }

    /**
     * The process of entry {@code index} is being deleted (DESIGN.md 8, item 12): its operations are
     * dropped without doorbells (its Host Process Structures page goes back to the driver) and its
     * staging space is freed.
     */
    private void deactivate(final int index)
    {
        final ProcessSlot slot = slots[index];
        if (null == slot || !slot.active)
        {
            return;
        }
        slot.active = false;
        activeProcesses.remove(index);
        scheduler.processDeleted(slot);
        casts.processDeleted(slot);
        receives.processDeleted(slot);
    }

    /**
     * A process somewhere was deleted (DESIGN.md 8, item 12): sends to it and receives waiting on it
     * complete with Peer Gone; its unfinished staged messages are freed. Messages it finished sending
     * stay deliverable.
     */
    private void peerDeleted(final int nodeIndex, final int nicPid, final int ai, final int pi)
    {
        for (final ProcessSlot slot : slots)
        {
            if (null != slot && slot.active)
            {
                scheduler.peerDeleted(slot, nodeIndex, nicPid);
                receives.peerDeleted(slot, nodeIndex, nicPid, ai, pi);
            }
        }
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

    /** @return the flyweight over Process Table entry {@code index}, wrapped anew: the firmware thread's only. */
    private ProcessTableEntry processEntry(final int index)
    {
        return processEntry.wrap(sdram, (int)layout.processEntryOffset(index));
    }

    private void setProcessState(final int index, final int state)
    {
        // Readers: `cluster status`, and the driver waiting for a registration (thesis 3.4, step 6).
        processEntry(index).state(state);
    }

    /**
     * A registration whose process was de-registered meanwhile (the driver cleared the Process Table
     * PID, de-registration step 1) ends in the Registration State failed, even before the
     * Delete_Process command can be posted. Run with the heartbeat.
     */
    void abortOrphanedRegistrations()
    {
        if (registrations.isEmpty())
        {
            return;
        }
        List<Registration> orphaned = null;
        for (final Registration registration : registrations.values())
        {
            final int pid = processEntry(registration.index).pid();
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
    // System messages (thesis 3.5.1)
    // ---------------------------------------------------------------------------------------------

    void onNewProcess(final NicCoordinates source, final int sourceIndex, final NewProcessFlyweight message)
    {
        final ProcessName name = message.name();
        final int nicPid = message.nicPid();
        if (null == names.put(name, source, nicPid, message.osPid(), message.incarnation()))
        {
            // No room: no acknowledgement, so the registering NIC never claims success.
            counters.systemMessagesRejected.increment();
            return;
        }
        messages.newProcessAck().name(name).nicPid(nicPid).ackIncarnation(message.incarnation());
        messages.sendTo(sourceIndex, SystemMessage.NEW_PROCESS_ACK_LENGTH);
    }

    void onNewProcessAck(final int sourceIndex, final NewProcessFlyweight message)
    {
        final ProcessName name = message.name();
        if (!holds(message.nicPid(), message.ackIncarnation()))
        {
            return;
        }
        final Registration registration = pendingRegistration(message.nicPid());
        if (null != registration && registration.name.equals(name))
        {
            registration.processAck(sourceIndex);
            completeIfDone(registration);
        }
    }

    void onNewGroup(final NicCoordinates source, final int sourceIndex, final NewGroupFlyweight message)
    {
        final int group = message.group();
        final int size = message.groupSize();
        final ProcessName member = new ProcessName(message.memberAi(), message.memberPi());
        final int nicPid = message.memberNicPid();
        final int incarnation = message.memberIncarnation();
        if (size < 1 || size > params.nameTableEntries())
        {
            counters.systemMessagesRejected.increment();
            return;
        }
        evictedGroups.clear();
        // Its own NIC says which process of the entry the member is, as its New_Process did.
        final GroupTable.AddResult added =
            groups.addMember(group, size, new GroupTable.Member(member, source, nicPid, incarnation), evictedGroups);
        groupOperations.membersLeft(evictedGroups);
        if (GroupTable.AddResult.COMPLETED == added)
        {
            acknowledgeGroup(groups.lookup(group));
        }
        else if (GroupTable.AddResult.DUPLICATE == added && groups.lookup(group).isComplete())
        {
            // A member joining again (a retried Join_Group) waits for every NIC's acknowledgement
            // afresh: this NIC gave its own when the group completed, so it gives it again.
            messages.newGroupAck().group(group).ackNicPid(nicPid).ackIncarnation(incarnation);
            messages.sendTo(sourceIndex, SystemMessage.NEW_GROUP_ACK_LENGTH);
        }
        else if (GroupTable.AddResult.FULL == added || GroupTable.AddResult.REFUSED == added)
        {
            counters.systemMessagesRejected.increment();
        }
    }

    void onNewGroupAck(final int sourceIndex, final NewGroupFlyweight message)
    {
        onGroupAck(sourceIndex, message.group(), message.ackNicPid(), message.ackIncarnation());
    }

    void onDeleteProcess(final NicCoordinates source, final int sourceIndex, final NewProcessFlyweight message)
    {
        final ProcessName name = message.name();
        final int nicPid = message.nicPid();
        log("Delete_Process message from " + source + ": " + name + " NIC PID " + nicPid);
        names.remove(name, source, nicPid);
        groupOperations.membersLeft(groups.removeMember(name, source, nicPid));
        peerDeleted(sourceIndex, nicPid, name.ai(), name.pi());
    }

    /**
     * Every NIC that sees a group complete acknowledges it to each member's NIC (thesis 3.5.1,
     * New_Group), so a member's registration completes only once every NIC knows the whole group.
     */
    void acknowledgeGroup(final GroupTable.Group group)
    {
        log("group " + group.name + " complete: " + group.members);
        for (final GroupTable.Member member : group.members)
        {
            if (member.node().equals(self))
            {
                onGroupAck(selfIndex, group.name, member.nicPid(), member.incarnation());
            }
            else
            {
                messages.newGroupAck().group(group.name).ackNicPid(member.nicPid())
                    .ackIncarnation(member.incarnation());
                messages.sendTo(member.node().index(params.torusWidth()), SystemMessage.NEW_GROUP_ACK_LENGTH);
            }
        }
    }

    /** A New_Group_Ack counts for the member's registration and for its Join_Group operations. */
    private void onGroupAck(final int sourceIndex, final int group, final int nicPid, final int incarnation)
    {
        if (!holds(nicPid, incarnation))
        {
            return;
        }
        final Registration registration = pendingRegistration(nicPid);
        if (null != registration && registration.group == group)
        {
            registration.groupAck(sourceIndex);
            completeIfDone(registration);
        }
        groupOperations.onGroupAck(sourceIndex, group, nicPid);
    }

    /**
     * @return whether the entry of NIC PID {@code nicPid} holds, now, the process {@code incarnation} an
     * acknowledgement is for. One for the process before it, late (it travels from the other NIC, so
     * nothing orders it before that process's Delete_Process here), must not complete the registration
     * or join of the next one while that NIC does not know it or its group yet.
     */
    private boolean holds(final int nicPid, final int incarnation)
    {
        return null != ProcessSlot.holding(slots, ProcessTableLayout.index(nicPid), incarnation);
    }

    private Registration pendingRegistration(final int nicPid)
    {
        return registrations.get(ProcessTableLayout.index(nicPid));
    }

    // ---------------------------------------------------------------------------------------------
    // Event log and inspection
    // ---------------------------------------------------------------------------------------------

    void logEvents(final boolean on)
    {
        logEvents = on;
    }

    /** Control-plane events only (registration, deletion): rare, and what one wants in firmware.log. */
    private void log(final String event)
    {
        if (logEvents)
        {
            // Wall-clock ms, as a log line is read beside the daemon's and the programs' output.
            System.out.println(System.currentTimeMillis() + " NIC " + self + ": " + event);
        }
    }

    int pendingRegistrations()
    {
        return registrations.size();
    }

    ProcessName resident(final int index)
    {
        return residents[index];
    }
}
