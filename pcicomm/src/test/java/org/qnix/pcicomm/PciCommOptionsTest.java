package org.qnix.pcicomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The arguments of listen and connect, refused before any NIC is opened. */
class PciCommOptionsTest
{
    @Test
    void aNegativeCidIsRefused()
    {
        final IllegalArgumentException listen =
            assertThrows(IllegalArgumentException.class,
                () -> PciComm.options().cluster("no-such-cluster-here").listen("0-0", -1));
        assertEquals("cid -1: a connection identifier is 0 or more", listen.getMessage());
        assertThrows(IllegalArgumentException.class,
            () -> PciComm.options().cluster("no-such-cluster-here").connect("1-0", Integer.MIN_VALUE));
    }
}
