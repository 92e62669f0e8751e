package org.qnix.vipl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.qnix.abi.ViaProcessStructuresLayout;

/**
 * The async-event words the NIC writes (vipl.h's {@code VIP_RESOURCE_CODE} and {@code VIP_ERROR_CODE}
 * values, as {@link ViaProcessStructuresLayout} names them) map to the enums the handler gets, every
 * one; a value the library does not know is the worst it could be, not an exception on the reader's
 * thread.
 */
class AsyncErrorCodesTest
{
    @Test
    void everyResourceAndErrorCodeOfTheNicMapsToItsEnum()
    {
        assertEquals(AsyncError.Resource.NIC, AsyncError.Resource.of(ViaProcessStructuresLayout.RESOURCE_NIC));
        assertEquals(AsyncError.Resource.VI, AsyncError.Resource.of(ViaProcessStructuresLayout.RESOURCE_VI));
        assertEquals(AsyncError.Resource.CQ, AsyncError.Resource.of(ViaProcessStructuresLayout.RESOURCE_CQ));
        assertEquals(AsyncError.Resource.DESCRIPTOR,
            AsyncError.Resource.of(ViaProcessStructuresLayout.RESOURCE_DESCRIPTOR));

        final int[] codes = {ViaProcessStructuresLayout.ERROR_POST_DESC, ViaProcessStructuresLayout.ERROR_CONN_LOST,
            ViaProcessStructuresLayout.ERROR_RECVQ_EMPTY, ViaProcessStructuresLayout.ERROR_VI_OVERRUN,
            ViaProcessStructuresLayout.ERROR_RDMAW_PROT, ViaProcessStructuresLayout.ERROR_RDMAW_DATA,
            ViaProcessStructuresLayout.ERROR_RDMAW_ABORT, ViaProcessStructuresLayout.ERROR_RDMAR_PROT,
            ViaProcessStructuresLayout.ERROR_COMP_PROT, ViaProcessStructuresLayout.ERROR_RDMA_TRANSPORT,
            ViaProcessStructuresLayout.ERROR_CATASTROPHIC};
        final AsyncError.Code[] expected = AsyncError.Code.values();
        assertEquals(expected.length, codes.length);
        for (int i = 0; i < codes.length; i++)
        {
            assertEquals(expected[i], AsyncError.Code.of(codes[i]));
        }
    }

    @Test
    void anUnknownWordIsCatastrophicOfTheNic()
    {
        assertEquals(AsyncError.Code.CATASTROPHIC, AsyncError.Code.of(99));
        assertEquals(AsyncError.Code.CATASTROPHIC, AsyncError.Code.of(-1));
        assertEquals(AsyncError.Resource.NIC, AsyncError.Resource.of(7));
    }

    @Test
    void aCountReachedEndsAtItsTargetInWrappingArithmetic()
    {
        final CountReached reached = CountReached.of(Integer.MAX_VALUE);
        assertEquals(false, reached.test(Integer.MAX_VALUE - 1));
        assertEquals(true, reached.test(Integer.MAX_VALUE));
        assertEquals(true, reached.test(Integer.MIN_VALUE), "past the wrap");
        // One per thread: asking again on this thread reuses it.
        assertEquals(true, reached == CountReached.of(5));
    }
}
