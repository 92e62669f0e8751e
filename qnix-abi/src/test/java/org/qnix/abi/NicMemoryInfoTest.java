package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** The NIC Memory Info names each part of the process's VNI where HostProcessStructuresLayout says. */
class NicMemoryInfoTest
{
    @Test
    void publishWritesTheVnisPartsAtTheirOffsetsAndNothingElse()
    {
        final VniLayout vni = new NicSdramLayout(ClusterParameters.builder().torus(2, 1).build()).vni();
        final int at = 4096;
        final long vniAddress = 0x12_3400L;
        final UnsafeBuffer host = new UnsafeBuffer(new byte[2 * at]);
        final NicMemoryInfo info = new NicMemoryInfo().wrap(host, at);

        info.publish(vniAddress, vni);

        assertEquals(vniAddress + vni.commandQueueOffset(),
            host.getLong(at + HostProcessStructuresLayout.COMMAND_QUEUE_ADDRESS_OFFSET));
        assertEquals(vniAddress + vni.sendContextListOffset(),
            host.getLong(at + HostProcessStructuresLayout.SEND_CONTEXTS_ADDRESS_OFFSET));
        assertEquals(vniAddress + vni.receiveContextListOffset(),
            host.getLong(at + HostProcessStructuresLayout.RECEIVE_CONTEXTS_ADDRESS_OFFSET));
        assertEquals(vniAddress + vni.contextRegionsOffset(),
            host.getLong(at + HostProcessStructuresLayout.CONTEXT_REGIONS_ADDRESS_OFFSET));
        assertEquals(vniAddress + vni.bufferPoolOffset(),
            host.getLong(at + HostProcessStructuresLayout.BUFFER_POOL_ADDRESS_OFFSET));
        assertEquals(vni.length(), host.getLong(at + HostProcessStructuresLayout.VNI_LENGTH_OFFSET));
        assertEquals(vniAddress + vni.commandQueueOffset(), info.commandQueueAddress());
        assertEquals(vniAddress + vni.sendContextListOffset(), info.sendContextsAddress());
        assertEquals(vniAddress + vni.receiveContextListOffset(), info.receiveContextsAddress());
        assertEquals(vniAddress + vni.contextRegionsOffset(), info.contextRegionsAddress());
        assertEquals(vniAddress + vni.bufferPoolOffset(), info.bufferPoolAddress());
        assertEquals(vni.length(), info.vniLength());
        assertEquals(0, host.getLong(at - Long.BYTES), "nothing before it");
        assertEquals(0, host.getLong(at + HostProcessStructuresLayout.CQ_TAIL_OFFSET), "the VNI Status untouched");
    }
}
