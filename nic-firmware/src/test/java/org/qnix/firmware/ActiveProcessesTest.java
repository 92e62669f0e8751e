package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

class ActiveProcessesTest
{
    private static final int ENTRIES = 64;

    /** The walk the round robins made before: every entry from the cursor on, skipping inactive ones. */
    private static List<Integer> walkOfAllEntries(final boolean[] active, final int cursor)
    {
        final List<Integer> order = new ArrayList<>();
        for (int n = 0, index = cursor; n < active.length;
            n++, index = ProcessSlot.nextInRoundRobin(index, active.length))
        {
            if (active[index])
            {
                order.add(index);
            }
        }
        return order;
    }

    private static List<Integer> walk(final ActiveProcesses list, final int cursor)
    {
        final List<Integer> order = new ArrayList<>();
        final int count = list.count();
        for (int n = 0, p = list.positionFrom(cursor); n < count; n++, p = list.next(p))
        {
            order.add(list.entryAt(p));
        }
        return order;
    }

    @Test
    void walksTheActiveEntriesInTheOrderTheWalkOfEveryEntryGave()
    {
        final long seed = Long.getLong("qnix.active.seed", 0xAC71E5L);
        System.out.println("ActiveProcessesTest: seed " + seed + " (rerun with -Dqnix.active.seed=" + seed + ")");
        final Random random = new Random(seed);
        final ActiveProcesses list = new ActiveProcesses(ENTRIES);
        final boolean[] active = new boolean[ENTRIES];
        for (int step = 0; step < 20_000; step++)
        {
            final int index = random.nextInt(ENTRIES);
            // Adds and removes repeat on purpose: the registrar may activate an entry twice.
            if (random.nextBoolean())
            {
                list.add(index);
                active[index] = true;
            }
            else
            {
                list.remove(index);
                active[index] = false;
            }
            final int cursor = random.nextInt(ENTRIES);
            assertEquals(walkOfAllEntries(active, cursor), walk(list, cursor), "step " + step + ", cursor " + cursor);
        }
    }

    @Test
    void anEmptyListIsWalkedInNoSteps()
    {
        final ActiveProcesses list = new ActiveProcesses(ENTRIES);
        list.add(7);
        list.remove(7);
        assertEquals(List.of(), walk(list, 7));
    }

    @Test
    void aCursorAfterTheLastActiveEntryStartsAgainAtTheFirst()
    {
        final ActiveProcesses list = new ActiveProcesses(ENTRIES);
        list.add(40);
        list.add(3);
        list.add(12);
        assertEquals(List.of(3, 12, 40), walk(list, 41));
        assertEquals(List.of(12, 40, 3), walk(list, 4));
        assertEquals(List.of(40, 3, 12), walk(list, 40));
    }
}
