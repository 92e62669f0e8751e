package org.qnix.pcicomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The exported queue keeps the peer's order through wrap-around and growth. */
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
}
