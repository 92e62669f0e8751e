package org.qnix.abi;

import static org.qnix.abi.HostProcessStructuresLayout.BUFFER_POOL_ADDRESS_OFFSET;
import static org.qnix.abi.HostProcessStructuresLayout.COMMAND_QUEUE_ADDRESS_OFFSET;
import static org.qnix.abi.HostProcessStructuresLayout.CONTEXT_REGIONS_ADDRESS_OFFSET;
import static org.qnix.abi.HostProcessStructuresLayout.RECEIVE_CONTEXTS_ADDRESS_OFFSET;
import static org.qnix.abi.HostProcessStructuresLayout.SEND_CONTEXTS_ADDRESS_OFFSET;
import static org.qnix.abi.HostProcessStructuresLayout.VNI_LENGTH_OFFSET;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The NIC Memory Info at the start of a process's Host Process Structures (thesis 3.3.2, Figure 3;
 * {@link HostProcessStructuresLayout}): where the parts of the process's VNI are in the NIC's SDRAM.
 * The driver writes it at registration, with plain stores: the process maps the structures only after
 * the driver's reply, and the PID the driver publishes with release comes after these stores too. The
 * process reads it to check that its mappings agree with the reply.
 *
 * <pre>{@code
 * new NicMemoryInfo().wrap(host, (int)hps).publish(vniAddress, vniLayout);        // driver
 * long commandQueue = new NicMemoryInfo().wrap(hps.buffer(), 0).commandQueueAddress();   // process
 * }</pre>
 */
public final class NicMemoryInfo
{
    private AtomicBuffer buffer;
    private int offset;

    /** @param offset the Host Process Structures' first byte in {@code buffer}. */
    public NicMemoryInfo wrap(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** Driver side: the VNI at SDRAM address {@code vni}, laid out as {@code layout}. */
    public void publish(final long vni, final VniLayout layout)
    {
        buffer.putLong(offset + COMMAND_QUEUE_ADDRESS_OFFSET, vni + layout.commandQueueOffset());
        buffer.putLong(offset + SEND_CONTEXTS_ADDRESS_OFFSET, vni + layout.sendContextListOffset());
        buffer.putLong(offset + RECEIVE_CONTEXTS_ADDRESS_OFFSET, vni + layout.receiveContextListOffset());
        buffer.putLong(offset + CONTEXT_REGIONS_ADDRESS_OFFSET, vni + layout.contextRegionsOffset());
        buffer.putLong(offset + BUFFER_POOL_ADDRESS_OFFSET, vni + layout.bufferPoolOffset());
        buffer.putLong(offset + VNI_LENGTH_OFFSET, layout.length());
    }

    public long commandQueueAddress()
    {
        return buffer.getLong(offset + COMMAND_QUEUE_ADDRESS_OFFSET);
    }

    public long sendContextsAddress()
    {
        return buffer.getLong(offset + SEND_CONTEXTS_ADDRESS_OFFSET);
    }

    public long receiveContextsAddress()
    {
        return buffer.getLong(offset + RECEIVE_CONTEXTS_ADDRESS_OFFSET);
    }

    public long contextRegionsAddress()
    {
        return buffer.getLong(offset + CONTEXT_REGIONS_ADDRESS_OFFSET);
    }

    public long bufferPoolAddress()
    {
        return buffer.getLong(offset + BUFFER_POOL_ADDRESS_OFFSET);
    }

    public long vniLength()
    {
        return buffer.getLong(offset + VNI_LENGTH_OFFSET);
    }
}
