package org.qnix.vipl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.qnix.abi.ViTableEntry;
import org.qnix.abi.ViplResult;

/**
 * What libvipl refuses before it reaches a driver, with VIPL's codes; the calls that reach one are
 * tested against a real cluster in tools ({@code ViplResourcesTest}).
 */
class ViplOpenNicTest
{
    @Test
    void aNicIsNamedXyOrAsADeviceOfAClusterThatIsUp()
    {
        final ViplException badName = assertThrows(ViplException.class, () -> Vipl.openNic("/dev/qnix/one", "nope"));
        assertEquals(ViplResult.INVALID_PARAMETER, badName.result());
        assertTrue(badName.getMessage().contains("expected X-Y"), badName.getMessage());
        final ViplException noCluster =
            assertThrows(ViplException.class, () -> Vipl.openNic("0-0", "no-such-cluster-" + ProcessHandle.current().pid()));
        assertEquals(ViplResult.INVALID_PARAMETER, noCluster.result());
        assertTrue(noCluster.getMessage().contains("no QNIX cluster"), noCluster.getMessage());
        assertEquals(ViplResult.INVALID_PARAMETER, assertThrows(ViplException.class, () -> Vipl.openNic(null)).result());
    }

    @Test
    void attributesNeedAPtagAndALevelAndCarryVipl10Values()
    {
        assertEquals(ViplResult.INVALID_PTAG,
            assertThrows(ViplException.class, () -> new MemoryAttributes(null, false, false)).result());
        assertEquals(ViplResult.INVALID_PTAG, assertThrows(ViplException.class,
            () -> new ViAttributes(Reliability.UNRELIABLE, 0, null, false, false)).result());
        assertEquals(ViplResult.INVALID_RELIABILITY_LEVEL,
            assertThrows(ViplException.class, () -> new ViAttributes(null, 0, null, false, false)).result());
        assertEquals(1, Reliability.UNRELIABLE.code());
        assertEquals(2, Reliability.RELIABLE_DELIVERY.code());
        assertEquals(4, Reliability.RELIABLE_RECEPTION.code());
        assertEquals(ViTableEntry.RELIABILITY_LEVELS,
            Reliability.UNRELIABLE.code() | Reliability.RELIABLE_DELIVERY.code() | Reliability.RELIABLE_RECEPTION.code());
    }
}
