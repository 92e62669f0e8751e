package org.qnix.firmware;

import org.qnix.abi.ShortFlow;

/** Every test of {@link MessagePathTest} again with {@code --short-flow permission}: the thesis' protocol of 3.5.1 for short messages too. */
class MessagePathPermissionFlowTest extends MessagePathTest
{
    @Override
    ShortFlow shortFlow()
    {
        return ShortFlow.PERMISSION;
    }
}
