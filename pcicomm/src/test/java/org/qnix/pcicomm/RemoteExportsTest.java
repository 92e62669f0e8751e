package org.qnix.pcicomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The exported queue keeps the peer's order through wrap-around and growth, and holds no more than the limit. */
class RemoteExportsTest
{
    @Test
    void exportsComeOutInTheOrderTheyWentInAcrossGrowth()
    {
        final RemoteExports exports = new RemoteExports();
        long next = 0;
        long taken = 0;
        for (int round = 0; round < 10; round++)
        {
            for (int i = 0; i < 50 * (round + 1); i++, next++)
            {
                exports.add(next * 4096, (int)next, (int)(next % 1000) + 1);
            }
            for (int i = 0; i < 40 * (round + 1); i++, taken++)
            {
                assertEquals(taken * 4096, exports.address());
                assertEquals((int)taken, exports.handle());
                assertEquals((int)(taken % 1000) + 1, exports.length());
                exports.remove();
            }
            assertEquals(next - taken, exports.size());
        }
        long bytes = 0;
        for (long p = taken; p < next; p++)
        {
            bytes += p % 1000 + 1;
        }
        assertEquals(bytes, exports.bytes());
        while (!exports.isEmpty())
        {
            exports.remove();
        }
        assertTrue(exports.isEmpty());
    }

    @Test
    void holdsNoMoreThanAnEndMayHavePreposted()
    {
        final RemoteExports exports = new RemoteExports();
        assertFalse(exports.canTake(-1));
        assertFalse(exports.canTake(RemoteExports.MAX_EXPORTS + 1));
        for (int i = 0; i < RemoteExports.MAX_EXPORTS - 30; i++)
        {
            exports.add(i, i, 64);
        }
        assertFalse(exports.canTake(31));
        assertTrue(exports.canTake(30));
        for (int i = 0; i < 30; i++)
        {
            exports.add(i, i, 64);
        }
        assertFalse(exports.canTake(1));
        assertTrue(exports.canTake(0));
        assertThrows(IllegalStateException.class, () -> exports.add(0, 0, 64));
        exports.remove();
        assertTrue(exports.canTake(1), "a filled export makes room for one more");
        assertEquals(1, exports.address(), "the second export is next: the refused add changed nothing");
    }
}
