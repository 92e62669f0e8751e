package org.qnix.vipl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplResult;

/**
 * The name service over a 3x2 torus: names are X-Y or node-X-Y of the torus, addresses come back as
 * node-X-Y whatever their discriminator, and auto-discovery lists the nodes row by row. The same calls
 * through an open NIC of a real cluster are in tools ({@code ViplAsyncErrorsTest}).
 */
class ViplNameServiceTest
{
    private final ViplNameService names = new ViplNameService("t", ClusterParameters.builder().torus(3, 2).build());

    @Test
    void aNodeIsNamedByItsCoordinatesWithOrWithoutTheNodePrefix()
    {
        final ViplAddress address = names.hostByName("node-2-1");
        assertEquals(new NicCoordinates(2, 1), address.node());
        assertEquals(0, address.discriminator().length);
        assertEquals(address, names.hostByName("2-1"));
        assertEquals("node-2-1", names.hostByAddress(new ViplAddress(new NicCoordinates(2, 1), new byte[] {9})));
    }

    @Test
    void aNameOrAddressOutsideTheTorusIsANameServiceError()
    {
        for (final String name : List.of("3-0", "node-0-2", "host", "node-", "-1-0"))
        {
            final ViplException ex = assertThrows(ViplException.class, () -> names.hostByName(name), name);
            assertEquals(ViplResult.ERROR_NAMESERVICE, ex.result(), name);
            assertTrue(ex.getMessage().contains("cluster 't'"), ex.getMessage());
        }
        assertEquals(ViplResult.ERROR_NAMESERVICE, assertThrows(ViplException.class,
            () -> names.hostByAddress(new ViplAddress(new NicCoordinates(0, 2), new byte[0]))).result());
        assertEquals(ViplResult.INVALID_PARAMETER, assertThrows(ViplException.class, () -> names.hostByName(null)).result());
        assertEquals(ViplResult.INVALID_PARAMETER,
            assertThrows(ViplException.class, () -> names.hostByAddress(null)).result());
    }

    @Test
    void autoDiscoveryListsEveryNodeRowByRow()
    {
        final List<ViplAddress> hosts = names.hosts();
        assertEquals(List.of("node-0-0", "node-1-0", "node-2-0", "node-0-1", "node-1-1", "node-2-1"),
            hosts.stream().map(names::hostByAddress).toList());
        assertThrows(UnsupportedOperationException.class, () -> hosts.add(hosts.get(0)));
    }
}
