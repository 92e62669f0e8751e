package org.qnix.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** The Process Table flyweight writes and reads the fields where ProcessTableLayout says they are. */
class ProcessTableEntryTest
{
    private static final int CONTEXTS = 8;
    private static final int AT = 3 * ProcessTableLayout.ENTRY_LENGTH;

    private final UnsafeBuffer sdram = new UnsafeBuffer(ByteBuffer.allocateDirect(8 * ProcessTableLayout.ENTRY_LENGTH));
    private final ProcessTableEntry entry = new ProcessTableEntry().wrap(sdram, AT);

    @Test
    void publishWritesEveryFieldAtItsOffsetAndDerivesTheDoorbellAddresses()
    {
        final long hps = 0x4_0000L;
        entry.publish(4242, ProcessTableLayout.KIND_VIA, 7, 3, 9, 4, hps, CONTEXTS, 0x8_0000L);

        assertEquals(4242, sdram.getInt(AT + ProcessTableLayout.PID_OFFSET));
        assertEquals(ProcessTableLayout.STATE_FREE, sdram.getInt(AT + ProcessTableLayout.STATE_OFFSET));
        assertEquals(7, sdram.getInt(AT + ProcessTableLayout.NAME_AI_OFFSET));
        assertEquals(3, sdram.getInt(AT + ProcessTableLayout.NAME_PI_OFFSET));
        assertEquals(9, sdram.getInt(AT + ProcessTableLayout.GROUP_OFFSET));
        assertEquals(4, sdram.getInt(AT + ProcessTableLayout.GROUP_SIZE_OFFSET));
        assertEquals(ProcessTableLayout.KIND_VIA, sdram.getInt(AT + ProcessTableLayout.KIND_OFFSET));
        assertEquals(hps, sdram.getLong(AT + ProcessTableLayout.HPS_ADDRESS_OFFSET));
        assertEquals(0x8_0000L, sdram.getLong(AT + ProcessTableLayout.VIA_STRUCTURES_OFFSET));
        assertEquals(hps + HostProcessStructuresLayout.sendDoorbellOffset(0),
            sdram.getLong(AT + ProcessTableLayout.SEND_DOORBELLS_OFFSET));
        assertEquals(hps + HostProcessStructuresLayout.receiveDoorbellOffset(CONTEXTS, 0),
            sdram.getLong(AT + ProcessTableLayout.RECEIVE_DOORBELLS_OFFSET));
        assertEquals(hps + HostProcessStructuresLayout.CQ_HEAD_OFFSET,
            sdram.getLong(AT + ProcessTableLayout.PROCESS_CQ_HEAD_OFFSET));

        assertEquals(4242, entry.pid());
        assertEquals(7, entry.nameAi());
        assertEquals(3, entry.namePi());
        assertEquals(9, entry.group());
        assertEquals(4, entry.groupSize());
        assertEquals(ProcessTableLayout.KIND_VIA, entry.kind());
        assertEquals(hps, entry.hpsAddress());
        assertEquals(0x8_0000L, entry.viaStructures());
        assertEquals(hps + HostProcessStructuresLayout.sendDoorbellOffset(0), entry.sendDoorbells());
        assertEquals(hps + HostProcessStructuresLayout.receiveDoorbellOffset(CONTEXTS, 0), entry.receiveDoorbells());
        assertEquals(hps + HostProcessStructuresLayout.CQ_HEAD_OFFSET, entry.commandQueueHeadAddress());
        assertEquals(0, sdram.getLong(AT - Long.BYTES), "nothing before the entry");
        assertEquals(0, sdram.getLong(AT + ProcessTableLayout.ENTRY_LENGTH), "nothing after it");
    }

    @Test
    void clearPidLeavesTheRestAndTheNicsStateIsItsOwnWord()
    {
        entry.publish(4242, ProcessTableLayout.KIND_QNIX, 7, 3, 9, 4, 0x4_0000L, CONTEXTS, 0);
        entry.state(ProcessTableLayout.STATE_REGISTERED);
        entry.clearPid();

        assertEquals(0, entry.pid());
        assertEquals(ProcessTableLayout.STATE_REGISTERED, sdram.getInt(AT + ProcessTableLayout.STATE_OFFSET));
        assertEquals(ProcessTableLayout.STATE_REGISTERED, entry.state());
        assertEquals(7, entry.nameAi());
        assertEquals(0x4_0000L, entry.hpsAddress());
    }

    @Test
    void vniInfoGoesToTheFiveVniPointers()
    {
        entry.vniInfo(1, 2, 3, 4, 5);

        assertEquals(1, sdram.getLong(AT + ProcessTableLayout.VNI_COMMAND_QUEUE_OFFSET));
        assertEquals(2, sdram.getLong(AT + ProcessTableLayout.VNI_SEND_CONTEXTS_OFFSET));
        assertEquals(3, sdram.getLong(AT + ProcessTableLayout.VNI_RECEIVE_CONTEXTS_OFFSET));
        assertEquals(4, sdram.getLong(AT + ProcessTableLayout.VNI_CONTEXT_REGIONS_OFFSET));
        assertEquals(5, sdram.getLong(AT + ProcessTableLayout.VNI_BUFFER_POOL_OFFSET));
        assertEquals(0, entry.pid());
    }
}
