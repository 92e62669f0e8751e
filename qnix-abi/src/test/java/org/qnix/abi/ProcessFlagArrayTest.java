package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The Process Flag Array: a claim takes a free entry from the hint on, writes the pid where
 * HostMemoryLayout says, never hands out a held entry, and says -1 only when every entry is held.
 */
class ProcessFlagArrayTest
{
    private static final int ENTRIES = 6;

    private final ClusterParameters params = ClusterParameters.builder().torus(1, 1).processes(ENTRIES).build();
    private final HostMemoryLayout layout = new HostMemoryLayout(params);
    private final UnsafeBuffer host = new UnsafeBuffer(ByteBuffer.allocateDirect((int)layout.pagePoolOffset()));
    private final ProcessFlagArray flags = new ProcessFlagArray().wrap(host, layout, ENTRIES);

    @Test
    void claimsGoRoundFromTheHintAndTheFlagsAreWhereTheLayoutSays()
    {
        assertEquals(0, flags.claim(100));
        assertEquals(1, flags.claim(101));
        assertEquals(101, host.getInt((int)layout.processFlagOffset(1)));
        assertEquals(2, host.getInt((int)(layout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_PROCESS_ENTRY_OFFSET)),
            "the hint names the entry after the last claimed");
        flags.release(0);
        assertEquals(0, host.getInt((int)layout.processFlagOffset(0)));
        assertEquals(2, flags.claim(102), "from the hint on, not the lowest free entry");
    }

    @Test
    void aHintOutsideTheTableIsTakenModuloItsEntries()
    {
        host.putInt((int)(layout.nicStatusOffset() + HostMemoryLayout.NIC_STATUS_PROCESS_ENTRY_OFFSET), -7);
        assertEquals(Math.floorMod(-7, ENTRIES), flags.claim(100));
    }

    @Test
    void randomClaimsAndReleasesNeverShareAnEntry()
    {
        final long seed = 20261129L;
        System.out.println("ProcessFlagArrayTest seed " + seed);
        final Random random = new Random(seed);
        final int[] holder = new int[ENTRIES];
        int held = 0;
        int fulls = 0;
        for (int step = 0; step < 5_000; step++)
        {
            if (random.nextInt(100) < 60)
            {
                final int pid = 1_000 + step;
                final int index = flags.claim(pid);
                if (held == ENTRIES)
                {
                    assertEquals(-1, index, "step " + step);
                    fulls++;
                    continue;
                }
                assertTrue(index >= 0 && index < ENTRIES, "step " + step);
                assertEquals(0, holder[index], "step " + step + ": entry " + index + " was held");
                holder[index] = pid;
                held++;
            }
            else if (held > 0)
            {
                int index = random.nextInt(ENTRIES);
                while (0 == holder[index])
                {
                    index = (index + 1) % ENTRIES;
                }
                flags.release(index);
                holder[index] = 0;
                held--;
            }
            for (int i = 0; i < ENTRIES; i++)
            {
                assertEquals(holder[i], flags.osPid(i), "step " + step + ", entry " + i);
            }
        }
        assertNotEquals(0, fulls, "the run filled the table");
    }
}
