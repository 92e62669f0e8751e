package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

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

    @Test
    void onTwoCpusRanksThreeFiveAndSevenOfAGroupGoOnTheNicsCpu()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1);
        final List<Boolean> onNicCpu = new ArrayList<>();
        for (int rank = 0; rank < 8; rank++)
        {
            onNicCpu.add(placement.place(NODE, rank, 100 + rank, 7, rank));
        }
        assertEquals(List.of(false, false, false, true, false, true, false, true), onNicCpu);
    }

    @Test
    void aRankIsPlacedTheSameWhateverOrderItsGroupArrivesIn()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1);
        assertTrue(placement.place(NODE, 3, 103, 7, 3));
        assertFalse(placement.place(NODE, 2, 102, 7, 2));
        assertFalse(placement.place(NODE, 1, 101, 7, 1));
        assertFalse(placement.place(NODE, 0, 100, 7, 0));
    }

    @Test
    void otherGroupsAndViaProcessesCountForAGroupAndAViaProcessIsPlacedOnArrival()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1);
        // Two jobs of two: the second job's ranks count the first's.
        assertFalse(placement.place(NODE, 0, 100, 7, 0));
        assertFalse(placement.place(NODE, 1, 101, 7, 1));
        assertFalse(placement.place(OTHER_NODE, 0, 200, 8, 0));
        assertTrue(placement.place(OTHER_NODE, 1, 201, 8, 1));
        // host 3, the NICs' CPU the firmware's 2 + 1: a tie stays off it; then it takes the next.
        assertFalse(placement.place(NODE, 2, 300, NicCpuPlacement.NO_GROUP, 0));
        assertTrue(placement.place(NODE, 3, 301, NicCpuPlacement.NO_GROUP, 0));
        assertEquals(2, placement.onNicCpuCount());
    }

    @Test
    void aProcessKeepsItsFirstPlacementUntilItsLastRegistrationEnds()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(1, 1);
        placement.place(NODE, 0, 100, 7, 0);
        placement.place(NODE, 1, 101, 7, 1);
        placement.place(NODE, 2, 102, 7, 2);
        assertTrue(placement.place(NODE, 3, 103, 7, 3));
        // The same process registers again on another node, as a VIA process: same placement.
        assertTrue(placement.place(OTHER_NODE, 0, 103, NicCpuPlacement.NO_GROUP, 0));
        placement.leave(NODE, 3);
        assertEquals(1, placement.onNicCpuCount(), "one registration still holds it");
        placement.leave(OTHER_NODE, 0);
        assertEquals(0, placement.onNicCpuCount());
        placement.leave(OTHER_NODE, 0);
        placement.leave(NODE, 9);
        assertEquals(0, placement.onNicCpuCount(), "leaving twice, or unplaced, changes nothing");
        // host 3 (ranks 0 to 2), none on the NICs' CPU: a newcomer goes on it.
        assertTrue(placement.place(NODE, 5, 500, NicCpuPlacement.NO_GROUP, 0));
    }

    @Test
    void withMoreHostCpusTheNicsCpuTakesAProcessOnlyWhenEveryHostCpuHasMoreThanTwo()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(3, 3);
        final List<Boolean> onNicCpu = new ArrayList<>();
        for (int rank = 0; rank < 8; rank++)
        {
            onNicCpu.add(placement.place(NODE, rank, 100 + rank, 7, rank));
        }
        assertEquals(List.of(false, false, false, false, false, false, false, true), onNicCpu);
    }

    @Test
    void withoutANicsCpuNobodyGoesOnIt()
    {
        final NicCpuPlacement placement = new NicCpuPlacement(NicProcessor.NONE, 1);
        for (int rank = 0; rank < 6; rank++)
        {
            assertFalse(placement.place(NODE, rank, 100 + rank, 7, rank));
        }
        assertFalse(NicCpuPlacement.none().place(NODE, 0, 100, NicCpuPlacement.NO_GROUP, 0));
    }
}
