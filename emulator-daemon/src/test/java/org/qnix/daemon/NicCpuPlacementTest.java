package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicProcessor;

/**
 * {@link NicCpuPlacement}: each process where the load is least, the firmware counted as two parties on
 * the NICs' CPU; groups by rank; a process keeps its first placement until its last registration ends.
 */
class NicCpuPlacementTest
{
    private static final NicCoordinates NODE = new NicCoordinates(0, 0);
    private static final NicCoordinates OTHER_NODE = new NicCoordinates(1, 0);
    private static final long TICKS = 42;

    /** The kernel's side as these tests set it: every process may run on CPUs 0 and 1 unless told; moves recorded. */
    private final RecordedCpus cpus = new RecordedCpus(List.of(0, 1));

    /** Where each process may run, as the kernel has it, and the moves asked for. */
    private static final class RecordedCpus implements ProcessCpus
    {
        final List<Integer> online;
        final Map<Long, SortedSet<Integer>> current = new HashMap<>();
        final Set<Long> refusing = new HashSet<>();
        final List<String> moves = new ArrayList<>();

        RecordedCpus(final List<Integer> online)
        {
            this.online = online;
        }

        public SortedSet<Integer> allowed(final long pid)
        {
            return new TreeSet<>(current.getOrDefault(pid, new TreeSet<>(online)));
        }

        public String move(final long pid, final long startTicks, final int nicCpu, final boolean onNicCpu,
            final SortedSet<Integer> allowed)
        {
            assertEquals(TICKS, startTicks);
            moves.add(pid + (onNicCpu ? " on " : " off ") + nicCpu + " " + allowed);
            if (refusing.contains(pid))
            {
                return "refused";
            }
            current.put(pid, placed(allowed, nicCpu, onNicCpu));
            return null;
        }

        /** The process's library following its driver's advice, as NicProcessor.place does. */
        void follow(final long pid, final int nicCpu, final boolean onNicCpu)
        {
            final SortedSet<Integer> before = allowed(pid);
            final SortedSet<Integer> placed = placed(before, nicCpu, onNicCpu);
            if (before.contains(nicCpu) && !placed.isEmpty())
            {
                current.put(pid, placed);
            }
        }

        private static SortedSet<Integer> placed(final SortedSet<Integer> allowed, final int nicCpu, final boolean on)
        {
            final SortedSet<Integer> placed = new TreeSet<>(on ? List.of(nicCpu) : allowed);
            if (!on)
            {
                placed.remove(nicCpu);
            }
            return placed;
        }
    }

    /** @return the advice for ranks 0 to {@code count - 1} of group 7 (pids 100 on), placed in rank order. */
    private static List<Boolean> placeRanks(final NicCpuPlacement placement, final int count)
    {
        final List<Boolean> onNicCpu = new ArrayList<>();
        for (int rank = 0; rank < count; rank++)
        {
            onNicCpu.add(placement.place(NODE, rank, 100 + rank, TICKS, 7, rank));
        }
        return onNicCpu;
    }

    /** Registers a process and lets it place itself as advised; returns the advice. */
    private boolean register(final NicCpuPlacement placement, final int index, final long pid, final int group,
        final int rank)
    {
        final boolean onNicCpu = placement.place(NODE, index, pid, TICKS, group, rank);
        cpus.follow(pid, 1, onNicCpu);
        return onNicCpu;
    }

    @Test
    void onTwoCpusRanksThreeFiveAndSevenOfAGroupGoOnTheNicsCpu()
    {
        assertEquals(List.of(false, false, false, true, false, true, false, true),
            placeRanks(new NicCpuPlacement(1, 1, cpus), 8));
    }

    @Test
    void aRankIsPlacedTheSameWhateverOrderItsGroupArrivesIn()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        assertTrue(placement.place(NODE, 3, 103, TICKS, 7, 3));
        assertFalse(placement.place(NODE, 2, 102, TICKS, 7, 2));
        assertFalse(placement.place(NODE, 1, 101, TICKS, 7, 1));
        assertFalse(placement.place(NODE, 0, 100, TICKS, 7, 0));
    }

    @Test
    void otherGroupsAndViaProcessesCountForAGroupAndAViaProcessIsPlacedOnArrival()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        // Two jobs of two: the second job's ranks count the first's.
        assertFalse(placement.place(NODE, 0, 100, TICKS, 7, 0));
        assertFalse(placement.place(NODE, 1, 101, TICKS, 7, 1));
        assertFalse(placement.place(OTHER_NODE, 0, 200, TICKS, 8, 0));
        assertTrue(placement.place(OTHER_NODE, 1, 201, TICKS, 8, 1));
        // host 3, the NICs' CPU the firmware's 2 + 1: a tie stays off it; then it takes the next.
        assertFalse(placement.place(NODE, 2, 300, TICKS, NicCpuPlacement.NO_GROUP, 0));
        assertTrue(placement.place(NODE, 3, 301, TICKS, NicCpuPlacement.NO_GROUP, 0));
        assertEquals(2, placement.onNicCpuCount());
    }

    @Test
    void aProcessKeepsItsFirstPlacementUntilItsLastRegistrationEnds()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        placement.place(NODE, 0, 100, TICKS, 7, 0);
        placement.place(NODE, 1, 101, TICKS, 7, 1);
        placement.place(NODE, 2, 102, TICKS, 7, 2);
        assertTrue(placement.place(NODE, 3, 103, TICKS, 7, 3));
        // The same process registers again on another node, as a VIA process: same placement.
        assertTrue(placement.place(OTHER_NODE, 0, 103, TICKS, NicCpuPlacement.NO_GROUP, 0));
        placement.leave(NODE, 3);
        assertEquals(1, placement.onNicCpuCount(), "one registration still holds it");
        placement.leave(OTHER_NODE, 0);
        assertEquals(0, placement.onNicCpuCount());
        placement.leave(OTHER_NODE, 0);
        placement.leave(NODE, 9);
        assertEquals(0, placement.onNicCpuCount(), "leaving twice, or unplaced, changes nothing");
        // host 3 (ranks 0 to 2), none on the NICs' CPU: a newcomer goes on it.
        assertTrue(placement.place(NODE, 5, 500, TICKS, NicCpuPlacement.NO_GROUP, 0));
    }

    @Test
    void withMoreHostCpusTheNicsCpuTakesAProcessOnlyWhenEveryHostCpuHasMoreThanTwo()
    {
        assertEquals(List.of(false, false, false, false, false, false, false, true),
            placeRanks(new NicCpuPlacement(3, 3, new RecordedCpus(List.of(0, 1, 2, 3))), 8));
    }

    @Test
    void withoutANicsCpuNobodyGoesOnIt()
    {
        assertEquals(Collections.nCopies(6, false), placeRanks(new NicCpuPlacement(NicProcessor.NONE, 1, cpus), 6));
        assertFalse(NicCpuPlacement.none().place(NODE, 0, 100, TICKS, NicCpuPlacement.NO_GROUP, 0));
    }

    /** @return job 7 (pids 100 and 101) and rank 0 of job 8 (pid 200) placed: rank 1 of job 8 comes fourth. */
    private NicCpuPlacement aJobAndAHalf()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        register(placement, 0, 100, 7, 0);
        register(placement, 1, 101, 7, 1);
        register(placement, 2, 200, 8, 0);
        return placement;
    }

    @Test
    void aPairWhoseOtherJobHasLeftMovesItsMemberOffTheNicsCpu()
    {
        final NicCpuPlacement placement = aJobAndAHalf();
        assertTrue(register(placement, 3, 201, 8, 1));
        // Three processes: the rule puts none beside the firmware (two on the host CPU tie with it).
        assertEquals(List.of("process 201 off the NICs' CPU 1"), placement.leave(NODE, 0));
        assertEquals(List.of(), placement.leave(NODE, 1));
        assertEquals(List.of("201 off 1 [0, 1]"), cpus.moves);
        assertEquals(new TreeSet<>(List.of(0)), cpus.allowed(201));
        assertEquals(false, placement.onNicCpu(201));
        assertEquals(0, placement.onNicCpuCount());
    }

    @Test
    void whenAProcessOnTheNicsCpuLeavesTheHighestRankOfTheLatestGroupTakesItsPlace()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        // The group's replies go out in any order: rank 4 is placed first, rank 3 last.
        for (final int rank : List.of(4, 1, 0, 2, 3))
        {
            register(placement, rank, 100 + rank, 7, rank);
        }
        assertEquals(true, placement.onNicCpu(103));
        assertEquals(List.of("process 104 onto the NICs' CPU 1"), placement.leave(NODE, 3),
            "four processes: one beside the firmware, the group's highest rank, though placed first");
        assertEquals(new TreeSet<>(List.of(1)), cpus.allowed(104));
    }

    @Test
    void aProcessThatMayRunOnOneSideOnlyIsCountedThereAndNeverMoved()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        cpus.current.put(101L, new TreeSet<>(List.of(1)));
        cpus.current.put(103L, new TreeSet<>(List.of(0)));
        assertFalse(register(placement, 0, 100, 7, 0));
        assertTrue(register(placement, 1, 101, 7, 1), "taskset to the NICs' CPU: it runs there");
        assertFalse(register(placement, 2, 102, 7, 2));
        assertFalse(register(placement, 3, 103, 7, 3), "taskset off the NICs' CPU: rank 3 stays off");
        placement.leave(NODE, 0);
        placement.leave(NODE, 2);
        assertEquals(List.of(), cpus.moves, "a pair, one member on the NICs' CPU, neither may move");
        assertEquals(1, placement.onNicCpuCount());
    }

    @Test
    void aProcessThatHasNotPlacedItselfYetIsNotMoved()
    {
        final NicCpuPlacement placement = aJobAndAHalf();
        // Its REGISTERED reply is out; its library has not moved it yet, and would take a move made now
        // as the CPUs to give back at its close.
        assertTrue(placement.place(NODE, 3, 201, TICKS, 8, 1));
        assertEquals(List.of(), placement.leave(NODE, 0));
        assertEquals(List.of(), cpus.moves);
        cpus.follow(201, 1, true);
        assertEquals(List.of("process 201 off the NICs' CPU 1"), placement.leave(NODE, 1));
    }

    @Test
    void aProcessThatPlacesItselfAfterALeaveIsMovedByTheDriversNextCheck()
    {
        final NicCpuPlacement placement = aJobAndAHalf();
        assertTrue(placement.place(NODE, 3, 201, TICKS, 8, 1));
        assertEquals(List.of(), placement.leave(NODE, 0), "201 has not placed itself yet");
        assertEquals(List.of(), placement.placeWaiting(1_000), "nor at the driver's first check");
        cpus.follow(201, 1, true);
        assertEquals(List.of("process 201 off the NICs' CPU 1"), placement.placeWaiting(2_000));
        assertEquals(false, placement.onNicCpu(201));
        assertEquals(List.of(), placement.placeWaiting(3_000), "nothing left waiting");
        assertEquals(List.of("201 off 1 [0, 1]"), cpus.moves);
    }

    @Test
    void theDriverStopsTryingAPlacementLeftWaitingAfterAWhile()
    {
        final NicCpuPlacement placement = aJobAndAHalf();
        assertTrue(placement.place(NODE, 3, 201, TICKS, 8, 1));
        placement.leave(NODE, 0);
        assertEquals(List.of(), placement.placeWaiting(1_000));
        cpus.follow(201, 1, true);
        assertEquals(List.of(), placement.placeWaiting(1_001 + NicCpuPlacement.WAIT_FOR_SELF_PLACEMENT_MS),
            "it set its CPUs itself, too late to be taken for following the advice");
        assertEquals(List.of(), cpus.moves);
        assertEquals(List.of("process 201 off the NICs' CPU 1"), placement.leave(NODE, 1), "the next leave tries");
    }

    @Test
    void aMoveThatFailsLeavesTheProcessWhereItIsAndMovesTheNext()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        for (int rank = 0; rank < 6; rank++)
        {
            register(placement, rank, 100 + rank, 7, rank);
        }
        assertEquals(2, placement.onNicCpuCount(), "ranks 3 and 5");
        cpus.refusing.add(105L);
        assertEquals(List.of("process 105 off the NICs' CPU 1: stays, refused", "process 103 off the NICs' CPU 1"),
            placement.leave(NODE, 0));
        // Three left (102, 104 and 105): none belongs on the NICs' CPU, but 105 is not asked again.
        placement.leave(NODE, 1);
        placement.leave(NODE, 3);
        assertEquals(2, cpus.moves.size(), cpus.moves.toString());
        assertEquals(true, placement.onNicCpu(105));
    }
}
