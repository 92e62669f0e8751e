package org.qnix.firmware;

import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

import org.agrona.collections.Int2ObjectHashMap;
import org.qnix.abi.BarrierFlyweight;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.abi.SystemMessage;

/**
 * Join_Group and Barrier (thesis 3.5.2) and the system messages that complete them: New_Group_Ack for
 * a join, Barrier for a barrier (3.5.1). Both complete through the Send Doorbell of the Send Context
 * named by the command.
 *
 * <p>A Join_Group completes when every NIC of the cluster has seen the whole group (the same rule as
 * a registration's group), so that once it returns every member can use the group anywhere. A Barrier
 * completes when every member of the group has entered the barrier with the same sequence number;
 * every NIC with a member counts the arrivals itself, from its own processes' commands and from the
 * Barrier messages of the others. A member that leaves breaks the group: whatever waits on it
 * completes with Peer Gone (DESIGN.md 8, item 12).
 */
final class GroupOperations
{
    private final GroupTable groups;
    private final ProcessSlot[] slots;
    private final SystemMessageSender messages;
    private final Doorbells doorbells;
    private final NicCounters counters;
    private final NicCoordinates self;
    private final int selfIndex;
    private final int nodeCount;
    private final int torusWidth;
    private final int maxGroupSize;
    private final Consumer<GroupTable.Group> groupCompleted;
    private final Int2ObjectHashMap<BarrierRounds> barriers = new Int2ObjectHashMap<>();
    private final NameTable names;
    /** Scratch: the NICs a Barrier message already went to. */
    private final boolean[] notified;

    /**
     * @param groupCompleted what to do when a group becomes complete on this NIC: acknowledge it to every
     *                       member's NIC (New_Group_Ack, {@link ProcessRegistrations}).
     */
    GroupOperations(final FirmwareContext ctx, final Consumer<GroupTable.Group> groupCompleted)
    {
        final ClusterParameters params = ctx.parameters();
        this.groups = ctx.groupTable();
        this.names = ctx.nameTable();
        this.slots = ctx.processSlots();
        this.messages = ctx.systemMessages();
        this.doorbells = ctx.doorbells();
        this.counters = ctx.counters();
        this.self = ctx.self();
        this.torusWidth = params.torusWidth();
        this.selfIndex = self.index(torusWidth);
        this.nodeCount = params.nodeCount();
        this.maxGroupSize = params.nameTableEntries();
        this.groupCompleted = groupCompleted;
        this.notified = new boolean[nodeCount];
    }

    // ---------------------------------------------------------------------------------------------
    // Join_Group (thesis 3.5.2, steps 1-3)
    // ---------------------------------------------------------------------------------------------

    void joinGroup(final ProcessSlot slot, final int context, final int group, final int size)
    {
        final GroupWait wait = slot.groupWaits[context];
        final GroupTable.Group existing = groups.lookup(group);
        if (size < 1 || size > maxGroupSize)
        {
            complete(slot, wait, Doorbell.BAD_COMMAND);
            return;
        }
        if (null != existing && existing.broken)
        {
            complete(slot, wait, Doorbell.PEER_GONE);
            return;
        }
        final ProcessName name = new ProcessName(slot.aiName, slot.piName);
        if (group != slot.aiName && (names.hasApplication(group) || null != existing && existing.isApplicationGroup()))
        {
            // The group of another application, named by its AI (issue 17, item 4): not to be joined.
            complete(slot, wait, Doorbell.BAD_COMMAND);
            return;
        }
        if ((null == existing || existing.indexOf(name) < 0) && groups.joinedGroups(name) >= ClusterParameters.MAX_JOINED_GROUPS_PER_PROCESS)
        {
            complete(slot, wait, Doorbell.NO_RESOURCES);
            return;
        }
        // Step 1, before the member is added: the group may complete at once and acknowledge it.
        wait.startJoin(group, nodeCount);
        final GroupTable.AddResult added =
            groups.addMember(group, size, new GroupTable.Member(name, self, slot.nicPid, slot.incarnation));
        switch (added)
        {
            case FULL:
                complete(slot, wait, Doorbell.NO_RESOURCES);
                return;

            case REFUSED:
                complete(slot, wait, Doorbell.BAD_COMMAND);
                return;

            case DUPLICATE:
                if (groups.lookup(group).isComplete())
                {
                    // Already a member of the complete group: every NIC knows it already.
                    complete(slot, wait, Doorbell.DONE);
                    return;
                }
                break;

            default:
                break;
        }
        // Step 2.
        messages.newGroup().group(group).groupSize(size).memberAi(slot.aiName).memberPi(slot.piName)
            .memberNicPid(slot.nicPid).memberIncarnation(slot.incarnation);
        messages.broadcast(SystemMessage.NEW_GROUP_LENGTH);
        // Step 3.
        if (GroupTable.AddResult.COMPLETED == added)
        {
            groupCompleted.accept(groups.lookup(group));
        }
    }

    /**
     * New_Group_Ack from NIC {@code node} for the member with NIC PID {@code nicPid} of this NIC
     * ({@link ProcessRegistrations} has checked that it is for the process the entry holds now).
     */
    void onGroupAck(final int node, final int group, final int nicPid)
    {
        final int index = nicPid - 1;
        final ProcessSlot slot = index >= 0 && index < slots.length ? slots[index] : null;
        if (null == slot || !slot.active)
        {
            return;
        }
        for (final GroupWait wait : slot.groupWaits)
        {
            if (wait.active && GroupWait.JOIN == wait.kind && wait.group == group && wait.ack(node))
            {
                counters.groupJoinsCompleted.increment();
                complete(slot, wait, Doorbell.DONE);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Barrier (thesis 3.5.2, steps 1-2; 3.5.1, Barrier)
    // ---------------------------------------------------------------------------------------------

    void barrier(final ProcessSlot slot, final int context, final int group, final int size)
    {
        final GroupWait wait = slot.groupWaits[context];
        final GroupTable.Group entry = groups.lookup(group);
        if (null == entry || entry.expectedSize != size || entry.indexOf(slot.aiName, slot.piName) < 0)
        {
            // Not a group this process is in, or the wrong size: a program error.
            complete(slot, wait, Doorbell.BAD_COMMAND);
            return;
        }
        if (entry.broken)
        {
            complete(slot, wait, Doorbell.PEER_GONE);
            return;
        }
        if (!entry.isComplete())
        {
            // Still forming: its Join_Group has not completed.
            complete(slot, wait, Doorbell.BAD_COMMAND);
            return;
        }
        if (outstandingBarriers(slot, group) >= BarrierRounds.MAX_OUTSTANDING)
        {
            // More would let the group's sequence numbers in progress outgrow the rounds every NIC keeps.
            complete(slot, wait, Doorbell.NO_RESOURCES);
            return;
        }
        final BarrierRounds rounds = rounds(group);
        final int sequence = slot.peekBarrierSequence(group);
        if (!rounds.canCount(sequence))
        {
            // Rounds taken by arrivals no member could have sent (untrusted input): refuse, send nothing.
            complete(slot, wait, Doorbell.NO_RESOURCES);
            return;
        }
        slot.nextBarrierSequence(group);
        wait.startBarrier(group, sequence);
        rounds.addWaiting(wait);

        // Step 2: one Barrier message to every other NIC where a member lives.
        Arrays.fill(notified, false);
        notified[selfIndex] = true;
        for (final GroupTable.Member member : entry.members)
        {
            final int node = member.node().index(torusWidth);
            if (!notified[node])
            {
                notified[node] = true;
                messages.barrier().group(group).groupSize(size).sequence(sequence).memberAi(slot.aiName)
                    .memberPi(slot.piName).memberNicPid(slot.nicPid);
                messages.sendTo(node, SystemMessage.BARRIER_LENGTH);
            }
        }
        // Step 1: this process's arrival, with those that came before it.
        arrive(entry, rounds, sequence, BarrierRounds.memberKey(slot.aiName, slot.piName));
    }

    private static int outstandingBarriers(final ProcessSlot slot, final int group)
    {
        int count = 0;
        for (final GroupWait wait : slot.groupWaits)
        {
            count += wait.active && GroupWait.BARRIER == wait.kind && wait.group == group ? 1 : 0;
        }
        return count;
    }

    /** A Barrier message: a member on NIC {@code node} entered a barrier. */
    void onBarrierMessage(final int node, final BarrierFlyweight barrier)
    {
        final int group = barrier.group();
        final int size = barrier.groupSize();
        final int sequence = barrier.sequence();
        final int ai = barrier.memberAi();
        final int pi = barrier.memberPi();
        final int nicPid = barrier.memberNicPid();
        final GroupTable.Group entry = groups.lookup(group);
        if (null == entry || entry.broken)
        {
            // Gone or broken meanwhile: whoever waited here has been told already.
            return;
        }
        final int member = entry.indexOf(ai, pi);
        if (entry.expectedSize != size || member < 0 || entry.members.get(member).node().index(torusWidth) != node ||
            entry.members.get(member).nicPid() != nicPid)
        {
            counters.systemMessagesRejected.increment();
            return;
        }
        arrive(entry, rounds(group), sequence, BarrierRounds.memberKey(ai, pi));
    }

    private void arrive(final GroupTable.Group entry, final BarrierRounds rounds, final int sequence, final long member)
    {
        final int arrived = rounds.arrive(sequence, member);
        if (arrived < 0)
        {
            counters.systemMessagesRejected.increment();
            return;
        }
        if (arrived < entry.expectedSize)
        {
            return;
        }
        // Every member has entered barrier `sequence`: the local ones waiting in it may leave.
        rounds.remove(sequence);
        GroupWait wait = rounds.firstWaiting();
        while (null != wait)
        {
            final GroupWait next = wait.next;
            if (wait.sequence == sequence)
            {
                rounds.removeWaiting(wait);
                counters.barriersCompleted.increment();
                complete(slots[wait.processIndex], wait, Doorbell.DONE);
            }
            wait = next;
        }
    }

    private BarrierRounds rounds(final int group)
    {
        BarrierRounds rounds = barriers.get(group);
        if (null == rounds)
        {
            rounds = new BarrierRounds();
            barriers.put(group, rounds);
        }
        return rounds;
    }

    // ---------------------------------------------------------------------------------------------
    // Processes leaving (Delete_Process; DESIGN.md 8, item 12)
    // ---------------------------------------------------------------------------------------------

    /** A process of this NIC is being deleted: its own waits are dropped without doorbells. */
    void processLeaving(final ProcessSlot slot)
    {
        for (final GroupWait wait : slot.groupWaits)
        {
            if (wait.active && GroupWait.BARRIER == wait.kind)
            {
                final BarrierRounds rounds = barriers.get(wait.group);
                if (null != rounds)
                {
                    rounds.removeWaiting(wait);
                }
            }
            wait.active = false;
        }
        slot.barrierSequences.clear();
    }

    /**
     * Groups lost a member (here or elsewhere): barriers and joins waiting on them complete with Peer
     * Gone, their counts are forgotten.
     */
    void membersLeft(final List<GroupTable.Group> changed)
    {
        for (final GroupTable.Group group : changed)
        {
            final BarrierRounds rounds = barriers.remove(group.name);
            if (null != rounds)
            {
                GroupWait wait;
                while (null != (wait = rounds.firstWaiting()))
                {
                    rounds.removeWaiting(wait);
                    complete(slots[wait.processIndex], wait, Doorbell.PEER_GONE);
                }
            }
            for (final ProcessSlot slot : slots)
            {
                if (null == slot || !slot.active)
                {
                    continue;
                }
                for (final GroupWait wait : slot.groupWaits)
                {
                    if (wait.active && GroupWait.JOIN == wait.kind && wait.group == group.name)
                    {
                        complete(slot, wait, Doorbell.PEER_GONE);
                    }
                }
            }
        }
    }

    private void complete(final ProcessSlot slot, final GroupWait wait, final int status)
    {
        wait.active = false;
        if (Doorbell.DONE != status)
        {
            counters.errorCompletions.increment();
        }
        doorbells.ring(slot.sendDoorbells, wait.context, status);
    }

    // ---------------------------------------------------------------------------------------------
    // Inspection (tests, debugger)
    // ---------------------------------------------------------------------------------------------

    BarrierRounds barrierRounds(final int group)
    {
        return barriers.get(group);
    }
}
