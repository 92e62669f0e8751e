package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The torus a cluster's parameters describe: which node names are in it, and how it is named. */
class ClusterParametersTest
{
    @Test
    void aNodeIsInTheTorusIfBothCoordinatesAreWithinIt()
    {
        final ClusterParameters params = ClusterParameters.builder().torus(3, 2).build();
        assertEquals("3x2", params.torus());
        for (int x = 0; x < 4; x++)
        {
            for (int y = 0; y < 3; y++)
            {
                assertEquals(x < 3 && y < 2, params.hasNode(new NicCoordinates(x, y)), x + "-" + y);
            }
        }
        assertTrue(params.hasNode(NicCoordinates.parse("2-1")));
        assertFalse(params.hasNode(NicCoordinates.parse("255-0")));
    }
}
