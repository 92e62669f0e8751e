package org.qnix.vipl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class AsyncErrorHandlerTest
{
    @Test
    void ignoringPassesEveryOtherCodeOn()
    {
        final List<AsyncError.Code> passed = new ArrayList<>();
        final AsyncErrorHandler handler = ((AsyncErrorHandler)error -> passed.add(error.code()))
            .ignoring(AsyncError.Code.CONN_LOST);
        for (final AsyncError.Code code : AsyncError.Code.values())
        {
            handler.onError(new AsyncError(null, AsyncError.Resource.VI, code, null, null, 0, 0, 0, false));
        }
        final List<AsyncError.Code> expected = new ArrayList<>(List.of(AsyncError.Code.values()));
        expected.remove(AsyncError.Code.CONN_LOST);
        assertEquals(expected, passed);
    }
}
