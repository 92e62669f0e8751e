package org.qnix.firmware;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.IntArrayQueue;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.GroupTableLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.SequenceLock;

/**
 * The Group Table of thesis 3.3.3: process groups and their members, with the expected size kept apart
 * from the member count. Heap working copy, mirrored into SDRAM under the table's sequence lock.
 *
 * <p>An application's group is named by its AI (thesis 3.2, 3.6: qx_init's group_name is the AI), and
 * belongs to that application (issue 17, item 4): a member whose AI is the group's name is an
 * application member, any other joined the group at run time. Application members put out run-time
 * members who came first (a process that joined the group of an application before its ranks
 * registered), and run-time members are refused once an application member is in. Every NIC applies
 * the same rule to the New_Group messages it sees, in whatever order they come, and ends with the
 * same members.
 */
final class GroupTable
{
    /**
     * A member of a group: its name and where it lives, for acknowledgements and broadcasts, and which of
     * the processes of its Process Table entry it is (New_Process; 0 if this NIC does not know it), what a
     * broadcast's request to it carries.
     */
    record Member(ProcessName name, NicCoordinates node, int nicPid, int incarnation)
    {
        Member
        {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(node, "node");
        }

        // Written out: a record's generated ones bootstrap java.lang.invoke on first use, on the duty cycle
        // (docs/performance/first-traffic.txt).
        public boolean equals(final Object other)
        {
            return other instanceof Member member && name.equals(member.name) && node.equals(member.node) &&
                nicPid == member.nicPid && incarnation == member.incarnation;
        }

        public int hashCode()
        {
            return 31 * (31 * (31 * name.hashCode() + node.hashCode()) + nicPid) + incarnation;
        }

        public String toString()
        {
            return name + " on " + node + " (NIC PID " + nicPid + ", incarnation " + incarnation + ")";
        }
    }

    /** One group. */
    static final class Group
    {
        final int name;
        final int expectedSize;
        final int slot;
        final List<Member> members = new ArrayList<>();
        /**
         * A member left: Barrier, Broadcast and Join_Group on this group complete with Peer Gone until
         * its last member leaves and the entry is removed (DESIGN.md 8, item 12).
         */
        boolean broken;

        Group(final int name, final int expectedSize, final int slot)
        {
            this.name = name;
            this.expectedSize = expectedSize;
            this.slot = slot;
        }

        boolean isComplete()
        {
            return members.size() >= expectedSize;
        }

        /** @return true if a process of the application named like the group is a member. */
        boolean isApplicationGroup()
        {
            for (final Member member : members)
            {
                if (member.name.ai() == name)
                {
                    return true;
                }
            }
            return false;
        }

        int indexOf(final ProcessName name)
        {
            return indexOf(name.ai(), name.pi());
        }

        int indexOf(final int ai, final int pi)
        {
            for (int i = 0; i < members.size(); i++)
            {
                final ProcessName name = members.get(i).name;
                if (name.ai() == ai && name.pi() == pi)
                {
                    return i;
                }
            }
            return -1;
        }
    }

    private final Int2ObjectHashMap<Group> byName = new Int2ObjectHashMap<>();
    private final IntArrayQueue freeSlots = new IntArrayQueue();
    private final AtomicBuffer sdram;
    private final ClusterParameters params;
    private final int base;

    GroupTable(final AtomicBuffer sdram, final NicSdramLayout layout)
    {
        this.sdram = sdram;
        this.params = layout.parameters();
        this.base = (int)layout.groupTableOffset();
        for (int i = 0; i < params.groupTableEntries(); i++)
        {
            freeSlots.addInt(i);
        }
    }

    Group lookup(final int group)
    {
        return byName.get(group);
    }

    int size()
    {
        return byName.size();
    }

    /** Outcome of {@link #addMember}. */
    enum AddResult
    {
        /** The member is new and the group is not yet complete. */
        ADDED,
        /** The member is new and made the group complete: time to acknowledge. */
        COMPLETED,
        /** The member was already there: nothing changed. */
        DUPLICATE,
        /** No room for the group or the member. */
        FULL,
        /**
         * The group exists with another expected size, or is already complete without this member, or
         * it is an application's group and the member is not of that application.
         */
        REFUSED
    }

    /**
     * Adds a member, creating the group if needed (thesis 3.5.3 New_Process step 5).
     */
    AddResult addMember(final int group, final int expectedSize, final Member member)
    {
        return addMember(group, expectedSize, member, null);
    }

    /**
     * Adds a member as {@link #addMember(int, int, Member)} does; an application member (its AI is the
     * group's name) first puts out the members of another application that joined the group before it.
     *
     * @param evicted receives the group those members were put out of (already out of the table), so
     *                that the caller can end what waits on it; may be null.
     */
    AddResult addMember(final int group, final int expectedSize, final Member member, final List<Group> evicted)
    {
        Group entry = byName.get(group);
        final boolean applicationMember = member.name.ai() == group;
        if (null != entry && applicationMember && !entry.isApplicationGroup())
        {
            remove(entry);
            if (null != evicted)
            {
                evicted.add(entry);
            }
            entry = null;
        }
        else if (null != entry && !applicationMember && entry.isApplicationGroup())
        {
            return AddResult.REFUSED;
        }
        if (null == entry)
        {
            if (freeSlots.isEmpty())
            {
                return AddResult.FULL;
            }
            entry = new Group(group, expectedSize, freeSlots.pollInt());
            byName.put(group, entry);
        }
        else if (entry.expectedSize != expectedSize)
        {
            return AddResult.REFUSED;
        }
        final int existing = entry.indexOf(member.name);
        if (existing < 0 && entry.isComplete())
        {
            return AddResult.REFUSED;
        }
        if (existing >= 0)
        {
            if (entry.members.get(existing).equals(member))
            {
                return AddResult.DUPLICATE;
            }
            entry.members.set(existing, member);
            publish(entry);
            return AddResult.DUPLICATE;
        }
        if (entry.members.size() >= params.nameTableEntries())
        {
            return AddResult.FULL;
        }
        entry.members.add(member);
        publish(entry);
        return entry.members.size() == entry.expectedSize ? AddResult.COMPLETED : AddResult.ADDED;
    }

    /**
     * Removes a process from every group it is in, if the entry still belongs to that NIC and NIC
     * PID; a group left empty is removed (thesis 3.5.3 Delete_Process step 5), one that still has
     * members is marked broken.
     *
     * @return the groups that lost the member, emptied ones included.
     */
    List<Group> removeMember(final ProcessName name, final NicCoordinates node, final int nicPid)
    {
        final List<Group> emptied = new ArrayList<>();
        final List<Group> changed = new ArrayList<>();
        for (final Group group : byName.values())
        {
            final int index = group.indexOf(name);
            if (index >= 0 && group.members.get(index).node.equals(node) && group.members.get(index).nicPid == nicPid)
            {
                group.members.remove(index);
                group.broken = true;
                changed.add(group);
                if (group.members.isEmpty())
                {
                    emptied.add(group);
                }
                else
                {
                    publish(group);
                }
            }
        }
        for (final Group group : emptied)
        {
            remove(group);
        }
        return changed;
    }

    /** @return how many groups {@code name} joined at run time (all but its application's group). */
    int joinedGroups(final ProcessName name)
    {
        int joined = 0;
        for (final Group group : byName.values())
        {
            if (group.name != name.ai() && group.indexOf(name) >= 0)
            {
                joined++;
            }
        }
        return joined;
    }

    private void remove(final Group group)
    {
        byName.remove(group.name);
        freeSlots.addInt(group.slot);
        final int e = base + (int)GroupTableLayout.entryOffset(params, group.slot);
        SequenceLock.beginWrite(sdram, base + GroupTableLayout.SEQUENCE_OFFSET);
        sdram.putInt(e + GroupTableLayout.STATE_OFFSET, GroupTableLayout.STATE_FREE);
        sdram.putInt(e + GroupTableLayout.MEMBER_COUNT_OFFSET, 0);
        sdram.putInt(base + GroupTableLayout.COUNT_OFFSET, byName.size());
        SequenceLock.endWrite(sdram, base + GroupTableLayout.SEQUENCE_OFFSET);
    }

    private void publish(final Group group)
    {
        final int e = base + (int)GroupTableLayout.entryOffset(params, group.slot);
        SequenceLock.beginWrite(sdram, base + GroupTableLayout.SEQUENCE_OFFSET);
        sdram.putInt(e + GroupTableLayout.NAME_OFFSET, group.name);
        sdram.putInt(e + GroupTableLayout.EXPECTED_SIZE_OFFSET, group.expectedSize);
        for (int m = 0; m < group.members.size(); m++)
        {
            final int mo = e + GroupTableLayout.MEMBERS_OFFSET + m * GroupTableLayout.MEMBER_LENGTH;
            sdram.putInt(mo, group.members.get(m).name.ai());
            sdram.putInt(mo + Integer.BYTES, group.members.get(m).name.pi());
        }
        sdram.putInt(e + GroupTableLayout.MEMBER_COUNT_OFFSET, group.members.size());
        sdram.putInt(e + GroupTableLayout.STATE_OFFSET, GroupTableLayout.STATE_USED);
        sdram.putInt(base + GroupTableLayout.COUNT_OFFSET, byName.size());
        SequenceLock.endWrite(sdram, base + GroupTableLayout.SEQUENCE_OFFSET);
    }
}
