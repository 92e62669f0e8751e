package org.qnix.lib;

import java.util.concurrent.TimeUnit;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ContextRegionDescriptor;
import org.qnix.abi.Doorbell;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessName;
import org.qnix.abi.VniContext;
import org.qnix.abi.VniLayout;
import org.qnix.host.BackOff;
import org.qnix.host.CommandQueueWriter;
import org.qnix.host.DoorbellWait;
import org.qnix.host.DoorbellWaiter;
import org.qnix.host.EmptyPolls;
import org.qnix.host.MappingGuard;
import org.qnix.host.NicHeartbeat;

/**
 * The process side of a Virtual Network Interface (thesis 3.3.1-3.3.2): taking Send and Receive
 * Contexts by their doorbells, filling them, posting commands in the Command Queue, and polling the
 * doorbells. Works on the process's own mappings only: its VNI slice of the NIC SDRAM, its Host
 * Process Structures page, and the NIC's control-program area for the heartbeat. Nothing here
 * allocates or makes a system call except the futex sleep. Every method is called inside the
 * registration's {@link MappingGuard}; the loops that wait (for a context, for room in the Command
 * Queue, for a doorbell) look at the guard and end with {@link QnixClosedException} once it closes.
 */
final class VirtualNetworkInterface
{
    /** How long a busy Context List is waited for: as long as a full Command Queue. */
    static final long RESOURCE_WAIT_NS = CommandQueueWriter.RESOURCE_WAIT_NS;

    private final ClusterParameters params;
    private final VniLayout layout;
    private final UnsafeBuffer vni;
    private final UnsafeBuffer hps;
    private final NicHeartbeat heartbeat;
    /** Polls of the process that found nothing (the API is for one thread at a time). */
    private final EmptyPolls emptyPolls = new EmptyPolls();
    private final MappingGuard guard;
    private final DoorbellWaiter waiter;
    private final ProcessName name;
    private final CommandQueueWriter commands;
    private final int contexts;
    private final int pageSize;
    private final VniContext context = new VniContext();
    private final ContextRegionDescriptor region = new ContextRegionDescriptor();

    VirtualNetworkInterface(final ClusterParameters params, final UnsafeBuffer vni, final UnsafeBuffer hps,
        final UnsafeBuffer control, final int controlOffset, final NicWakeUp wakeUp, final NicCoordinates node,
        final ProcessName name, final MappingGuard guard)
    {
        this.params = params;
        this.layout = new VniLayout(params);
        this.vni = vni;
        this.hps = hps;
        this.heartbeat = new NicHeartbeat(control, controlOffset, node);
        this.guard = guard;
        this.waiter = new DoorbellWaiter(hps, heartbeat, guard, TimeUnit.MICROSECONDS.toNanos(params.hotUs()));
        this.name = name;
        this.commands = new CommandQueueWriter(params, vni, hps, wakeUp, heartbeat, guard);
        this.contexts = params.contextsPerProcess();
        this.pageSize = params.pageSize();
    }

    // ---------------------------------------------------------------------------------------------
    // Contexts (thesis 3.3.2: the most probably free one first, then a scan of the Doorbell Array)
    // ---------------------------------------------------------------------------------------------

    int takeSendContext()
    {
        return takeContext(HostProcessStructuresLayout.NEXT_SEND_CONTEXT_OFFSET, true);
    }

    int takeReceiveContext()
    {
        return takeContext(HostProcessStructuresLayout.NEXT_RECEIVE_CONTEXT_OFFSET, false);
    }

    private int takeContext(final int hintOffset, final boolean send)
    {
        final long deadline = System.nanoTime() + RESOURCE_WAIT_NS;
        int idle = 0;
        while (true)
        {
            final int hint = Math.floorMod(hps.getInt(hintOffset), contexts);
            int completedUnpolled = 0;
            for (int i = 0; i < contexts; i++)
            {
                final int c = (hint + i) % contexts;
                final int address = doorbellAddress(c, send);
                final int value = hps.getIntVolatile(address);
                if (Doorbell.FREE == value)
                {
                    // Reader: this process only (the NIC writes a doorbell after it got the command).
                    hps.putIntRelease(address, Doorbell.USED);
                    hps.putInt(hintOffset, (c + 1) % contexts);
                    return c;
                }
                if (Doorbell.isComplete(value))
                {
                    completedUnpolled++;
                }
            }
            final String kind = send ? "Send" : "Receive";
            if (completedUnpolled == contexts)
            {
                throw new QnixNoContextException("all " + contexts + " " + kind + " Contexts hold completed " +
                    "operations nobody polled: call pollFor" + (send ? "Send" : "Receive") + " on them");
            }
            if (System.nanoTime() > deadline)
            {
                // A NIC that stopped meanwhile is why, not the contexts in flight.
                checkNicAlive();
                throw new QnixNoContextException("no " + kind + " Context became free in " +
                    TimeUnit.NANOSECONDS.toSeconds(RESOURCE_WAIT_NS) + " s: all " + contexts + " are in flight");
            }
            idle = idle(idle);
        }
    }

    /** Gives a context back without using it (its fields were refused before posting). */
    void releaseContext(final int context, final boolean send)
    {
        hps.putIntRelease(doorbellAddress(context, send), Doorbell.FREE);
    }

    int sendContextOffset(final int context)
    {
        return layout.sendContextOffset(context);
    }

    int receiveContextOffset(final int context)
    {
        return layout.receiveContextOffset(context);
    }

    void writeContext(final int contextOffset, final int peerAi, final int peerPi, final int tag,
        final boolean doorbellFlag, final int pages, final int length, final int bufferPoolIndex)
    {
        context.wrap(vni, contextOffset).fill(peerAi, peerPi, tag, doorbellFlag, pages, length, bufferPoolIndex);
    }

    /**
     * qx_buffer_translate into a Context Region: one Descriptor per page of bytes
     * {@code [offset, offset + length)} of the buffer. @return the number of Descriptors (pages).
     */
    int writePageTable(final int regionOffset, final QnixBuffer buffer, final int offset, final int length)
    {
        return region.wrap(vni, regionOffset).translate(buffer.pageAddresses(), pageSize,
            buffer.firstPageOffset() + (long)offset, length, params.descriptorsPerRegion());
    }

    /** Programmed I/O of a short message into the Send Context's Context Region. */
    void writeShortData(final int context, final DirectBuffer data, final int offset, final int length)
    {
        vni.putBytes(layout.sendContextRegionOffset(context), data, offset, length);
    }

    int sendRegionOffset(final int context)
    {
        return layout.sendContextRegionOffset(context);
    }

    int receiveRegionOffset(final int context)
    {
        return layout.receiveContextRegionOffset(context);
    }

    // ---------------------------------------------------------------------------------------------
    // Command Queue (thesis 3.3.1-3.3.2)
    // ---------------------------------------------------------------------------------------------

    /** Posts a command; waits (bounded) while the queue is full, as the thesis says. */
    void post(final int command, final int context, final int group, final int size)
    {
        posted(commands.post(command, context, group, size, CommandQueueWriter.RESOURCE_WAIT_NS));
    }

    /** Posts a command if the queue has room now. @return false, having written nothing, if it is full. */
    boolean tryPost(final int command, final int context, final int group, final int size)
    {
        return commands.tryPost(command, context, group, size);
    }

    /** Posts a Multicast or Multicast_Short and its receivers' names; waits (bounded) while the queue is full. */
    void postMulticast(final int command, final int context, final ProcessName[] receivers)
    {
        posted(commands.postMulticast(command, context, receivers, CommandQueueWriter.RESOURCE_WAIT_NS));
    }

    /** {@link #postMulticast} if the queue has room for it now. @return false, having written nothing, if not. */
    boolean tryPostMulticast(final int command, final int context, final ProcessName[] receivers)
    {
        return commands.tryPostMulticast(command, context, receivers);
    }

    private void posted(final int code)
    {
        switch (code)
        {
            case CommandQueueWriter.POSTED:
                return;

            case CommandQueueWriter.TIMED_OUT:
                throw new QnixTimeoutException(commands.describeFull(CommandQueueWriter.RESOURCE_WAIT_NS));

            case CommandQueueWriter.NIC_DEAD:
                throw new QnixNicDeadException(heartbeat.describeStopped());

            default:
                throw closed();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Doorbells (qx_poll_for_send / qx_poll_for_receive)
    // ---------------------------------------------------------------------------------------------

    int doorbellAddress(final int context, final boolean send)
    {
        return send ? HostProcessStructuresLayout.sendDoorbellOffset(context) :
            HostProcessStructuresLayout.receiveDoorbellOffset(contexts, context);
    }

    /**
     * A poll of the process (qx_poll_for_send, qx_poll_for_receive). Call inside the guard.
     *
     * @return the doorbell value if complete (Done or an error), else {@link Doorbell#USED}.
     * @throws QnixNicDeadException now and then while it is not complete, once the NIC stopped: a loop
     *                              of polls ends as a wait does.
     */
    int poll(final int context, final boolean send)
    {
        final int value = peek(context, send);
        if (Doorbell.USED == value && emptyPolls.lookDue())
        {
            checkNicAlive();
        }
        return value;
    }

    /** @return the doorbell value if complete (Done or an error), else {@link Doorbell#USED}. */
    int peek(final int context, final boolean send)
    {
        // Writer: the NIC, with release, after the completion fields of a receive.
        final int value = hps.getIntVolatile(doorbellAddress(context, send));
        return Doorbell.isComplete(value) ? value : Doorbell.USED;
    }

    /** @return a Context's doorbell as it is: Free, Used, or the completion the process has not read yet. */
    int doorbell(final int context, final boolean send)
    {
        // Writer: the NIC, with release, at completion; and this process.
        return hps.getIntVolatile(doorbellAddress(context, send));
    }

    /** The process has read the completion: the Context is Free again (thesis 3.3.2). */
    void free(final int context, final boolean send)
    {
        hps.putIntRelease(doorbellAddress(context, send), Doorbell.FREE);
    }

    /**
     * Waits for a doorbell to complete, the way {@code wait} says: busy (spin only), yield, backoff (spin,
     * yield, park) or sleep (spin, then futex until the NIC wakes this process).
     *
     * @return the completed doorbell value.
     */
    int await(final int context, final boolean send, final long timeoutNs, final DoorbellWait wait)
    {
        final int address = doorbellAddress(context, send);
        final int waiters = address - HostProcessStructuresLayout.DOORBELL_VALUE_OFFSET +
            HostProcessStructuresLayout.DOORBELL_WAITERS_OFFSET;
        switch (waiter.await(address, waiters, Doorbell::isComplete, timeoutNs, wait))
        {
            case DoorbellWaiter.COMPLETE:
                // Complete stays complete until this process frees the context.
                return hps.getIntVolatile(address);

            case DoorbellWaiter.TIMED_OUT:
                throw new QnixTimeoutException((send ? "send" : "receive") + " on context " + context +
                    " did not complete in " + TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms");

            case DoorbellWaiter.NIC_DEAD:
                throw new QnixNicDeadException(heartbeat.describeStopped());

            default:
                throw closed();
        }
    }

    /** Wakes every thread of this process sleeping on a doorbell, so that it sees a close at once. */
    void wakeAllWaiters()
    {
        for (int c = 0; c < contexts; c++)
        {
            waiter.wakeAll(doorbellAddress(c, true));
            waiter.wakeAll(doorbellAddress(c, false));
        }
    }

    QnixClosedException closed()
    {
        return new QnixClosedException(name);
    }

    /** @return the receive's completion fields, written by the NIC before the doorbell. */
    void readCompletion(final int context, final ReceiveStatus into)
    {
        final VniContext c = this.context.wrap(vni, layout.receiveContextOffset(context));
        into.sourceAi = c.sourceAi();
        into.sourcePi = c.sourcePi();
        into.tag = c.sourceTag();
        into.length = c.completionLength();
    }

    long receiveCapacity(final int context)
    {
        return this.context.wrap(vni, layout.receiveContextOffset(context)).length();
    }

    ProcessName receivePeer(final int context)
    {
        final VniContext c = this.context.wrap(vni, layout.receiveContextOffset(context));
        return new ProcessName(c.peerAi(), c.peerPi());
    }

    // ---------------------------------------------------------------------------------------------
    // The NIC's liveness (DESIGN.md 5: a wait never outlives the firmware)
    // ---------------------------------------------------------------------------------------------

    void checkNicAlive()
    {
        if (!heartbeat.isRunning())
        {
            throw new QnixNicDeadException(heartbeat.describeStopped());
        }
    }

    /** Waits out busy contexts, looking at the NIC now and then and at a close each time. */
    private int idle(final int idle)
    {
        if (guard.isClosed())
        {
            throw closed();
        }
        if (BackOff.isSlowLookDue(idle))
        {
            checkNicAlive();
        }
        BackOff.idle(idle);
        return idle + 1;
    }
}
