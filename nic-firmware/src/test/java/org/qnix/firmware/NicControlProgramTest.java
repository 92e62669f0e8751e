package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.PacketHeader;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessTableLayout;
import org.qnix.abi.PublishedTables;
import org.qnix.abi.RxFifo;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.WireMessageType;

/**
 * The registration protocol of thesis 3.5.1 and 3.5.3 on four NICs of a 2x2 torus, stepped by hand.
 */
class NicControlProgramTest extends SteppedClusterTest
{
    private static final int GROUP = 7;

    @BeforeEach
    void setUp()
    {
        cluster = new SteppedCluster(base, 2, 2);
    }

    @Test
    void registrationCompletesOnlyWhenEveryNicKnowsTheWholeGroup()
    {
        final ProcessName first = new ProcessName(GROUP, 0);
        final ProcessName second = new ProcessName(GROUP, 1);
        final int p0 = cluster.newProcess(0, 0, first, 1000, GROUP, 2);
        cluster.settle();

        // Every NIC acknowledged New_Process, but the group is incomplete: no New_Group_Ack yet. The
        // command itself was taken, so its Driver Command Queue position is free again.
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(0, p0));
        assertEquals(ProcessTableLayout.STATE_REGISTERING, processState(0, 0));
        assertEquals(1, cluster.nics.get(0).pendingRegistrations());
        for (final NicControlProgram nic : cluster.nics)
        {
            assertNotNull(nic.nameTable().lookup(first), "name on " + nic.node());
            assertEquals(1, nic.groupTable().lookup(GROUP).members.size());
        }

        final int p1 = cluster.newProcess(3, 2, second, 1001, GROUP, 2);
        for (int i = 0; i < 1000 && (processState(0, 0) != ProcessTableLayout.STATE_REGISTERED ||
            processState(3, 2) != ProcessTableLayout.STATE_REGISTERED); i++)
        {
            cluster.step();
            // The moment either registration completes, every NIC must already hold both members.
            if (processState(0, 0) == ProcessTableLayout.STATE_REGISTERED ||
                processState(3, 2) == ProcessTableLayout.STATE_REGISTERED)
            {
                assertEveryNicHolds(Set.of(first, second));
            }
        }
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(0, p0));
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(3, p1));
        assertEquals(0, cluster.nics.get(0).pendingRegistrations());
        assertEquals(ProcessTableLayout.STATE_REGISTERED, processState(0, 0));
        assertEquals(ProcessTableLayout.STATE_REGISTERED, processState(3, 2));

        // What other processes read from SDRAM agrees with the firmware's heap tables.
        for (final NodeImage image : cluster.images)
        {
            final List<PublishedTables.NameEntry> names = PublishedTables.names(image.sdram(), image.sdramLayout());
            assertEquals(Set.of(first, second), names.stream().map(PublishedTables.NameEntry::name).collect(Collectors.toSet()));
            final PublishedTables.NameEntry secondEntry =
                names.stream().filter(n -> n.name().equals(second)).findFirst().orElseThrow();
            assertEquals(new NicCoordinates(1, 1), secondEntry.node());
            assertEquals(3, secondEntry.nicPid());
            final List<PublishedTables.GroupEntry> groups = PublishedTables.groups(image.sdram(), image.sdramLayout());
            assertEquals(1, groups.size());
            assertEquals(2, groups.get(0).expectedSize());
            assertEquals(Set.of(first, second), Set.copyOf(groups.get(0).members()));
        }
    }

    @Test
    void twoGroupsRegisteringInterleavedBothComplete()
    {
        final int[] positions = new int[8];
        for (int pi = 0; pi < 4; pi++)
        {
            positions[pi] = cluster.newProcess(pi, pi, new ProcessName(1, pi), 2000 + pi, 1, 4);
            positions[4 + pi] = cluster.newProcess(3 - pi, 4 + pi, new ProcessName(2, pi), 3000 + pi, 2, 4);
            cluster.step();
        }
        cluster.settle();
        for (int pi = 0; pi < 4; pi++)
        {
            assertEquals(Doorbell.DONE, cluster.driverDoorbell(pi, positions[pi]));
            assertEquals(Doorbell.DONE, cluster.driverDoorbell(3 - pi, positions[4 + pi]));
            assertEquals(ProcessTableLayout.STATE_REGISTERED, processState(pi, pi));
            assertEquals(ProcessTableLayout.STATE_REGISTERED, processState(3 - pi, 4 + pi));
        }
        for (final NicControlProgram nic : cluster.nics)
        {
            assertEquals(8, nic.nameTable().size());
            assertEquals(4, nic.groupTable().lookup(1).members.size());
            assertEquals(4, nic.groupTable().lookup(2).members.size());
        }
    }

    @Test
    void deleteProcessIsForgottenByEveryNic()
    {
        final ProcessName alone = new ProcessName(9, 0);
        final int registered = cluster.newProcess(1, 3, alone, 4000, 9, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(1, registered));

        final int deleted = cluster.deleteProcess(1, 3, alone, 4000);
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(1, deleted));
        assertNull(cluster.nics.get(1).resident(3));
        assertEquals(ProcessTableLayout.STATE_FREE, processState(1, 3));
        for (final NicControlProgram nic : cluster.nics)
        {
            assertNull(nic.nameTable().lookup(alone), "name still on " + nic.node());
            assertNull(nic.groupTable().lookup(9), "group still on " + nic.node());
            assertTrue(PublishedTables.names(nic.image().sdram(), nic.image().sdramLayout()).isEmpty());
            assertTrue(PublishedTables.groups(nic.image().sdram(), nic.image().sdramLayout()).isEmpty());
        }
    }

    @Test
    void registrationOfAProcessThatGoesAwayIsAbortedAndItsPositionReleased()
    {
        final ProcessName waiting = new ProcessName(5, 0);
        final int position = cluster.newProcess(2, 1, waiting, 5000, 5, 2);
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(2, position), "taken at once");
        assertEquals(ProcessTableLayout.STATE_REGISTERING, processState(2, 1));

        // De-registration step 1: the driver clears the PID; the NIC notices at its next heartbeat.
        cluster.images.get(2).sdram().putIntRelease(
            (int)cluster.images.get(2).sdramLayout().processEntryOffset(1) + ProcessTableLayout.PID_OFFSET, 0);
        cluster.clock.advance(1000);
        cluster.settle();
        assertEquals(ProcessTableLayout.STATE_FAILED, processState(2, 1));

        final int deleted = cluster.post(2, DriverCommand.DELETE_PROCESS, waiting, 5000, 1, 0, 0);
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(2, deleted));
        for (final NicControlProgram nic : cluster.nics)
        {
            assertNull(nic.nameTable().lookup(waiting));
        }
    }

    @Test
    void corruptDriverCommandsAreRejectedAndTheLoopCarriesOn()
    {
        final ProcessName name = new ProcessName(3, 0);
        final int badCode = cluster.post(0, 99, name, 6000, 0, 3, 1);
        final int badIndex = cluster.post(0, DriverCommand.NEW_PROCESS, name, 6000, 1_000_000, 3, 1);
        final int pidMismatch = cluster.post(0, DriverCommand.NEW_PROCESS, name, 6000, 2, 3, 1);
        final int badSize = cluster.newProcess(0, 4, name, 6001, 3, -5);
        final int deleteNobody = cluster.post(0, DriverCommand.DELETE_PROCESS, name, 6000, 5, 0, 0);
        cluster.settle();
        for (final int position : new int[]{ badCode, badIndex, pidMismatch, badSize, deleteNobody })
        {
            assertEquals(Doorbell.BAD_COMMAND, cluster.driverDoorbell(0, position), "position " + position);
        }
        assertEquals(5, counter(0, NicCounters.DRIVER_COMMANDS_REJECTED));

        final int good = cluster.newProcess(0, 6, name, 6002, 3, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(0, good));
    }

    @Test
    void malformedPacketsAreCountedAndDropped()
    {
        final RxFifo fifo = new RxFifo(cluster.images.get(1).rxRing());
        final UnsafeBuffer packet = new UnsafeBuffer(new byte[64]);
        fifo.write(WireMessageType.SYSTEM_MESSAGE, packet, 0, 4);
        new PacketHeader().wrap(packet, 0).destination(new NicCoordinates(1, 0).packed()).source(0)
            .contextTag(SystemMessage.NEW_PROCESS).packetLength(2);
        fifo.write(WireMessageType.SYSTEM_MESSAGE, packet, 0, PacketHeader.LENGTH + 2);
        new PacketHeader().wrap(packet, 0).destination(new NicCoordinates(1, 0).packed()).source(0x7F7F)
            .contextTag(SystemMessage.NEW_PROCESS).packetLength(SystemMessage.NEW_PROCESS_LENGTH);
        fifo.write(WireMessageType.SYSTEM_MESSAGE, packet, 0, PacketHeader.LENGTH + SystemMessage.NEW_PROCESS_LENGTH);
        cluster.settle();
        assertEquals(1, counter(1, NicCounters.PACKETS_DROPPED));
        assertEquals(2, counter(1, NicCounters.SYSTEM_MESSAGES_REJECTED));
        assertEquals(0, cluster.nics.get(1).nameTable().size());

        final int good = cluster.newProcess(1, 0, new ProcessName(4, 0), 7000, 4, 1);
        cluster.settle();
        assertEquals(Doorbell.DONE, cluster.driverDoorbell(1, good));
    }

    private void assertEveryNicHolds(final Set<ProcessName> members)
    {
        for (final NicControlProgram nic : cluster.nics)
        {
            for (final ProcessName member : members)
            {
                assertNotNull(nic.nameTable().lookup(member), member + " missing on " + nic.node());
            }
            assertEquals(members, nic.groupTable().lookup(GROUP).members.stream()
                .map(GroupTable.Member::name).collect(Collectors.toSet()), "group on " + nic.node());
        }
    }

    private int processState(final int node, final int index)
    {
        final NodeImage image = cluster.images.get(node);
        return image.sdram().getIntVolatile((int)image.sdramLayout().processEntryOffset(index) + ProcessTableLayout.STATE_OFFSET);
    }
}
