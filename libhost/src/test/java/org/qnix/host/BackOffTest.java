package org.qnix.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The parks of a long wait grow, so that a process blocked for seconds costs about nothing. */
class BackOffTest
{
    private static final int FIRST_PARK = BackOff.SPINS + BackOff.YIELDS;

    @Test
    void parksStayShortForTheFirstSixtyFourThenDoubleUpToTheLongest()
    {
        assertEquals(BackOff.PARK_NS, BackOff.parkNs(FIRST_PARK));
        assertEquals(BackOff.PARK_NS, BackOff.parkNs(FIRST_PARK + BackOff.PARKS_PER_DOUBLING - 1));
        assertEquals(2 * BackOff.PARK_NS, BackOff.parkNs(FIRST_PARK + BackOff.PARKS_PER_DOUBLING));
        assertEquals(8 * BackOff.PARK_NS, BackOff.parkNs(FIRST_PARK + 3 * BackOff.PARKS_PER_DOUBLING));
        assertEquals(32 * BackOff.PARK_NS, BackOff.parkNs(FIRST_PARK + 6 * BackOff.PARKS_PER_DOUBLING - 1));
        assertEquals(BackOff.MAX_PARK_NS, BackOff.parkNs(FIRST_PARK + 6 * BackOff.PARKS_PER_DOUBLING));
        assertEquals(BackOff.MAX_PARK_NS, BackOff.parkNs(Integer.MAX_VALUE));
        assertEquals(BackOff.MAX_PARK_NS, BackOff.parkNs(Integer.MIN_VALUE), "a count that wrapped");
        assertEquals(64 * BackOff.PARK_NS, BackOff.MAX_PARK_NS);
    }
}
