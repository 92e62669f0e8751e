package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * A flyweight over one entry of the NIC Process Table ({@link ProcessTableLayout}, thesis 3.3.3,
 * Figure 4), and the entry's one publication rule. The driver writes every field, then the
 * Registration State, then the PID last with release (registration step 5, thesis 3.4), so a NIC that
 * reads the PID with acquire and finds the one its command names sees the whole entry; at
 * de-registration the driver clears the PID first (step 1), so a zero PID is never scheduled again.
 * The NIC writes the Registration State only, with release; the VNI Info pointers are written once,
 * when the cluster is created.
 *
 * <pre>{@code
 * ProcessTableEntry entry = new ProcessTableEntry();
 * // The driver, registration step 5:
 * entry.wrap(sdram, (int)layout.processEntryOffset(index))
 *     .publish(osPid, ProcessTableLayout.KIND_QNIX, ai, pi, group, groupSize, hps, contexts, 0);
 * // The NIC, taking New_Process for that index:
 * if (entry.wrap(sdram, (int)layout.processEntryOffset(index)).pid() == pid)
 * {
 *     slot.sendDoorbells = entry.sendDoorbells();
 * }
 * }</pre>
 *
 * <p>Not thread safe: one per thread, wrapped per use; it allocates nothing.
 */
public final class ProcessTableEntry
{
    private AtomicBuffer buffer;
    private int offset;

    /** @return this, over the entry at {@code offset} of {@code sdram}. */
    public ProcessTableEntry wrap(final AtomicBuffer sdram, final int offset)
    {
        this.buffer = sdram;
        this.offset = offset;
        return this;
    }

    /**
     * Registration step 5, the driver's: the whole entry, the PID last. The doorbell arrays and the
     * Command Queue Head are where {@link HostProcessStructuresLayout} puts them in the process's Host
     * Process Structures page at {@code hpsAddress}.
     *
     * @param kind          {@link ProcessTableLayout#KIND_QNIX} or {@link ProcessTableLayout#KIND_VIA}.
     * @param viaStructures the VIA Process Structures' host address; 0 for a QNIX process.
     */
    public void publish(final int osPid, final int kind, final int nameAi, final int namePi, final int group,
        final int groupSize, final long hpsAddress, final int contextsPerProcess, final long viaStructures)
    {
        buffer.putInt(offset + ProcessTableLayout.NAME_AI_OFFSET, nameAi);
        buffer.putInt(offset + ProcessTableLayout.NAME_PI_OFFSET, namePi);
        buffer.putInt(offset + ProcessTableLayout.GROUP_OFFSET, group);
        buffer.putInt(offset + ProcessTableLayout.GROUP_SIZE_OFFSET, groupSize);
        buffer.putLong(offset + ProcessTableLayout.SEND_DOORBELLS_OFFSET,
            hpsAddress + HostProcessStructuresLayout.sendDoorbellOffset(0));
        buffer.putLong(offset + ProcessTableLayout.RECEIVE_DOORBELLS_OFFSET,
            hpsAddress + HostProcessStructuresLayout.receiveDoorbellOffset(contextsPerProcess, 0));
        buffer.putLong(offset + ProcessTableLayout.PROCESS_CQ_HEAD_OFFSET,
            hpsAddress + HostProcessStructuresLayout.CQ_HEAD_OFFSET);
        buffer.putLong(offset + ProcessTableLayout.HPS_ADDRESS_OFFSET, hpsAddress);
        buffer.putInt(offset + ProcessTableLayout.KIND_OFFSET, kind);
        buffer.putLong(offset + ProcessTableLayout.VIA_STRUCTURES_OFFSET, viaStructures);
        buffer.putIntRelease(offset + ProcessTableLayout.STATE_OFFSET, ProcessTableLayout.STATE_FREE);
        // Reader: the NIC control program, which checks it (and the Kind) against New_Process or
        // New_Via_Process, and every duty cycle's look before it serves the entry.
        buffer.putIntRelease(offset + ProcessTableLayout.PID_OFFSET, osPid);
    }

    /**
     * De-registration step 1, the driver's (and a dead process's): the NIC serves the entry no more, and
     * a registration still in progress on it ends failed. Reader: the NIC, before each command it takes.
     */
    public void clearPid()
    {
        buffer.putIntRelease(offset + ProcessTableLayout.PID_OFFSET, 0);
    }

    /**
     * The VNI Info, written when the cluster is created ("pre-initialised when the driver loads the NIC
     * control program"), before any process or NIC runs: the SDRAM addresses of VNI {@code i}'s parts.
     */
    public void vniInfo(final long commandQueue, final long sendContexts, final long receiveContexts,
        final long contextRegions, final long bufferPool)
    {
        buffer.putLong(offset + ProcessTableLayout.VNI_COMMAND_QUEUE_OFFSET, commandQueue);
        buffer.putLong(offset + ProcessTableLayout.VNI_SEND_CONTEXTS_OFFSET, sendContexts);
        buffer.putLong(offset + ProcessTableLayout.VNI_RECEIVE_CONTEXTS_OFFSET, receiveContexts);
        buffer.putLong(offset + ProcessTableLayout.VNI_CONTEXT_REGIONS_OFFSET, contextRegions);
        buffer.putLong(offset + ProcessTableLayout.VNI_BUFFER_POOL_OFFSET, bufferPool);
    }

    /**
     * @return the owner's OS pid, 0 if free (acquire). Writer: the driver, last at registration and first
     * at de-registration.
     */
    public int pid()
    {
        return buffer.getIntVolatile(offset + ProcessTableLayout.PID_OFFSET);
    }

    /**
     * @return the Registration State (acquire). Writers: the driver ({@link #publish}, Free) and the NIC
     * ({@link #state(int)}).
     */
    public int state()
    {
        return buffer.getIntVolatile(offset + ProcessTableLayout.STATE_OFFSET);
    }

    /**
     * The NIC's outcome of a registration. Readers: the driver waiting for it (thesis 3.4, step 6), and
     * {@code cluster status}.
     */
    public void state(final int state)
    {
        buffer.putIntRelease(offset + ProcessTableLayout.STATE_OFFSET, state);
    }

    /** The fields below are the driver's, published before the PID: read them after {@link #pid()}. */
    public int kind()
    {
        return buffer.getInt(offset + ProcessTableLayout.KIND_OFFSET);
    }

    public int nameAi()
    {
        return buffer.getInt(offset + ProcessTableLayout.NAME_AI_OFFSET);
    }

    public int namePi()
    {
        return buffer.getInt(offset + ProcessTableLayout.NAME_PI_OFFSET);
    }

    public int group()
    {
        return buffer.getInt(offset + ProcessTableLayout.GROUP_OFFSET);
    }

    public int groupSize()
    {
        return buffer.getInt(offset + ProcessTableLayout.GROUP_SIZE_OFFSET);
    }

    /** @return the host address of the Send Doorbell Array (Doorbell Info). */
    public long sendDoorbells()
    {
        return buffer.getLong(offset + ProcessTableLayout.SEND_DOORBELLS_OFFSET);
    }

    /** @return the host address of the Receive Doorbell Array (Doorbell Info). */
    public long receiveDoorbells()
    {
        return buffer.getLong(offset + ProcessTableLayout.RECEIVE_DOORBELLS_OFFSET);
    }

    /** @return the host address where the NIC publishes how far it read the process's Command Queue. */
    public long commandQueueHeadAddress()
    {
        return buffer.getLong(offset + ProcessTableLayout.PROCESS_CQ_HEAD_OFFSET);
    }

    /** @return the host address of the process's Host Process Structures page. */
    public long hpsAddress()
    {
        return buffer.getLong(offset + ProcessTableLayout.HPS_ADDRESS_OFFSET);
    }

    /** @return the host address of a VIA process's VIA Process Structures; 0 for a QNIX process. */
    public long viaStructures()
    {
        return buffer.getLong(offset + ProcessTableLayout.VIA_STRUCTURES_OFFSET);
    }
}
