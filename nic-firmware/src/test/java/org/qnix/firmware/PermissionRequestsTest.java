package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * How often a send without permission asks again: every millisecond at first, then after an eighth of
 * its wait, at most a second apart. The stepped consequences (a blocked Send's request count, and its
 * grant the moment room frees) are in {@link MessagePathTest}.
 */
class PermissionRequestsTest
{
    @Test
    void aSenderAsksAgainAfterAnEighthOfItsWaitBetweenOneMillisecondAndOneSecond()
    {
        assertEquals(1, PermissionRequests.retryInterval(0));
        assertEquals(1, PermissionRequests.retryInterval(15));
        assertEquals(2, PermissionRequests.retryInterval(16));
        assertEquals(50, PermissionRequests.retryInterval(400));
        assertEquals(999, PermissionRequests.retryInterval(7999));
        assertEquals(PermissionRequests.PERMISSION_RETRY_MAX_MS, PermissionRequests.retryInterval(8000));
        assertEquals(PermissionRequests.PERMISSION_RETRY_MAX_MS, PermissionRequests.retryInterval(Long.MAX_VALUE));
    }
}
