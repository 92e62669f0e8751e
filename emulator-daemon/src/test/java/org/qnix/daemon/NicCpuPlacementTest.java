package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
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

    /** The kernel's side as these tests set it: nothing known of where a process may run unless told; moves recorded. */
    private final RecordedCpus cpus = new RecordedCpus();

    private static final class RecordedCpus implements ProcessCpus
    {
        final Map<Long, SortedSet<Integer>> allowed = new HashMap<>();
        final Set<Long> refusing = new HashSet<>();
        final List<String> moves = new ArrayList<>();

        public SortedSet<Integer> allowed(final long pid)
        {
            return allowed.getOrDefault(pid, new TreeSet<>());
        }

        public String move(final long pid, final long startTicks, final int nicCpu, final boolean onNicCpu,
            final SortedSet<Integer> allowed)
        {
            assertEquals(TICKS, startTicks);
            moves.add(pid + (onNicCpu ? " on " : " off ") + nicCpu + " " + allowed);
            return refusing.contains(pid) ? "refused" : null;
        }
    }

    @Test
    void onTwoCpusRanksThreeFiveAndSevenOfAGroupGoOnTheNicsCpu()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        final List<Boolean> onNicCpu = new ArrayList<>();
        for (int rank = 0; rank < 8; rank++)
        {
            onNicCpu.add(placement.place(NODE, rank, 100 + rank, TICKS, 7, rank));
        }
        assertEquals(List.of(false, false, false, true, false, true, false, true), onNicCpu);
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
        final NicCpuPlacement placement = new NicCpuPlacement(3, 3, cpus);
        final List<Boolean> onNicCpu = new ArrayList<>();
        for (int rank = 0; rank < 8; rank++)
        {
            onNicCpu.add(placement.place(NODE, rank, 100 + rank, TICKS, 7, rank));
        }
        assertEquals(List.of(false, false, false, false, false, false, false, true), onNicCpu);
    }

    @Test
    void withoutANicsCpuNobodyGoesOnIt()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(NicProcessor.NONE, 1, cpus);
        for (int rank = 0; rank < 6; rank++)
        {
            assertFalse(placement.place(NODE, rank, 100 + rank, TICKS, 7, rank));
        }
        assertFalse(NicCpuPlacement.none().place(NODE, 0, 100, TICKS, NicCpuPlacement.NO_GROUP, 0));
    }

    @Test
    void aPairWhoseOtherJobHasLeftMovesItsMemberOffTheNicsCpu()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        placement.place(NODE, 0, 100, TICKS, 7, 0);
        placement.place(NODE, 1, 101, TICKS, 7, 1);
        placement.place(OTHER_NODE, 0, 200, TICKS, 8, 0);
        assertTrue(placement.place(OTHER_NODE, 1, 201, TICKS, 8, 1));
        // Three processes: the rule puts none beside the firmware (two on the host CPU tie with it).
        assertEquals(List.of("process 201 off the NICs' CPU 1"), placement.leave(NODE, 0));
        assertEquals(List.of(), placement.leave(NODE, 1));
        assertEquals(List.of("201 off 1 []"), cpus.moves);
        assertEquals(false, placement.onNicCpu(201));
        assertEquals(0, placement.onNicCpuCount());
    }

    @Test
    void whenAProcessOnTheNicsCpuLeavesTheLatestPlacedOfTheOthersTakesItsPlace()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        cpus.allowed.put(104L, new TreeSet<>(List.of(0, 1)));
        for (int rank = 0; rank < 5; rank++)
        {
            placement.place(NODE, rank, 100 + rank, TICKS, 7, rank);
        }
        assertEquals(true, placement.onNicCpu(103));
        placement.leave(NODE, 3);
        assertEquals(List.of("104 on 1 [0, 1]"), cpus.moves, "four processes: one beside the firmware");
        assertEquals(true, placement.onNicCpu(104));
    }

    @Test
    void aProcessThatMayRunOnOneSideOnlyIsCountedThereAndNeverMoved()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        cpus.allowed.put(101L, new TreeSet<>(List.of(1)));
        cpus.allowed.put(103L, new TreeSet<>(List.of(0)));
        assertFalse(placement.place(NODE, 0, 100, TICKS, 7, 0));
        assertTrue(placement.place(NODE, 1, 101, TICKS, 7, 1), "taskset to the NICs' CPU: it runs there");
        assertFalse(placement.place(NODE, 2, 102, TICKS, 7, 2));
        assertFalse(placement.place(NODE, 3, 103, TICKS, 7, 3), "taskset off the NICs' CPU: rank 3 stays off");
        placement.leave(NODE, 0);
        placement.leave(NODE, 2);
        assertEquals(List.of(), cpus.moves, "a pair, one member on the NICs' CPU, neither may move");
        assertEquals(1, placement.onNicCpuCount());
    }

    @Test
    void aMoveThatFailsLeavesTheProcessWhereItIsAndMovesTheNext()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1, cpus);
        for (int rank = 0; rank < 6; rank++)
        {
            placement.place(NODE, rank, 100 + rank, TICKS, 7, rank);
        }
        assertEquals(2, placement.onNicCpuCount(), "ranks 3 and 5");
        cpus.refusing.add(105L);
        assertEquals(List.of("process 105 off the NICs' CPU 1: stays, refused", "process 103 off the NICs' CPU 1"),
            placement.leave(NODE, 0));
        assertEquals(List.of(), placement.leave(NODE, 1), "105 is not asked again");
        assertEquals(true, placement.onNicCpu(105));
        assertEquals(false, placement.onNicCpu(103));
    }
}
