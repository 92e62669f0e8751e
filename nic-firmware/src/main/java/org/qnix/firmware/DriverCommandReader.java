package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.Doorbell;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.DriverCommandEntry;
import org.qnix.abi.DriverCommandQueueLayout;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;

/**
 * The Driver Command Queue (thesis 3.5: checked before TX and before RX; 3.5.3: the commands). Each
 * {@link #doWork()} takes at most one command, clears its entry, publishes the queue's head every
 * {@link CommandQueueReader#HEAD_UPDATE_INTERVAL} commands or when the queue is found empty, hands
 * New_Process and Delete_Process (and their VIA forms, issue 14) to the {@link ProcessRegistrations}, the
 * VIA connection commands to {@link ViaConnectionCommands}, Via_Resize_Cq to {@link ViaCqResize}, and rings the command's driver
 * doorbell with the outcome. A command that throws is the {@link DutyCycleErrorHandler}'s, and its
 * doorbell says Bad Command so that the driver does not wait for it.
 *
 * <pre>{@code
 * int work = driverCommands.doWork();  // 1 if a command was taken
 * }</pre>
 */
final class DriverCommandReader
{
    private final ClusterParameters params;
    private final NicSdramLayout layout;
    private final HostMemoryLayout hostLayout;
    private final AtomicBuffer sdram;
    private final AtomicBuffer host;
    private final NicCounters counters;
    private final DutyCycleErrorHandler errors;
    private final ProcessRegistrations registrations;
    private final ViaConnectionCommands viaConnections;
    private final ViaCqResize viaCqResize;
    private final SystemMessageDispatcher input;
    private final DriverCommandEntry driverCommand = new DriverCommandEntry();
    private int driverHead;
    private int driverHeadPublished = -1;
    private int commandsSinceHeadUpdate;

    DriverCommandReader(final FirmwareContext ctx, final ProcessRegistrations registrations, final ViaEngine via,
        final SystemMessageDispatcher input)
    {
        this.input = input;
        this.params = ctx.parameters();
        this.layout = ctx.sdramLayout();
        this.hostLayout = ctx.hostLayout();
        this.sdram = ctx.sdram();
        this.host = ctx.hostMemory();
        this.counters = ctx.counters();
        this.errors = ctx.errorHandler();
        this.registrations = registrations;
        this.viaConnections = new ViaConnectionCommands(ctx, via);
        this.viaCqResize = new ViaCqResize(ctx);
    }

    /** @return 1 if a command was taken, else 0. */
    int doWork()
    {
        final DriverCommandEntry entry = driverCommand.wrap(sdram, (int)layout.driverCommandOffset(driverHead));
        final int command = entry.command();
        if (DriverCommand.NONE == command)
        {
            if (driverHeadPublished != driverHead)
            {
                publishDriverHead();
            }
            return 0;
        }

        final int position = driverHead;
        final ProcessName name = entry.name();
        final int pid = entry.pid();
        final int index = entry.index();
        final int group = entry.group();
        final int size = entry.size();
        final int generation = entry.generation();
        entry.consume();
        driverHead = (driverHead + 1) % params.driverCommandQueueEntries();
        if (++commandsSinceHeadUpdate == CommandQueueReader.HEAD_UPDATE_INTERVAL)
        {
            publishDriverHead();
        }
        counters.driverCommands.increment();

        int doorbell;
        try
        {
            switch (command)
            {
                case DriverCommand.NEW_PROCESS:
                    doorbell = registrations.newProcess(name, pid, index, group, size);
                    break;

                case DriverCommand.DELETE_PROCESS:
                    doorbell = registrations.deleteProcess(name, index);
                    break;

                case DriverCommand.NEW_VIA_PROCESS:
                    doorbell = registrations.newViaProcess(pid, index);
                    break;

                case DriverCommand.DELETE_VIA_PROCESS:
                    doorbell = registrations.deleteViaProcess(index);
                    break;

                case DriverCommand.VIA_CONNECT:
                    doorbell = viaConnections.connect(index, size, generation, pid, name.ai(), name.pi(), group);
                    break;

                case DriverCommand.VIA_DISCONNECT:
                    doorbell = viaConnections.disconnect(index, size, generation);
                    break;

                case DriverCommand.VIA_CONNECTION_LOST:
                    // The daemon's news can overtake what the peer's NIC sent before its process
                    // disconnected: the OP_ACK of a Reliable Reception send whose receive completed
                    // is in this NIC's input FIFO already, and must finish that send DONE before the
                    // flush completes what is left DESC_FLUSHED (a full verify saw ViplHello's server
                    // send fail 0x21 after the client had printed its reply).
                    input.drain();
                    doorbell = viaConnections.connectionLost(index, size, generation, pid);
                    break;

                case DriverCommand.VIA_RESIZE_CQ:
                    doorbell = viaCqResize.resize(index, size, generation, name.pi(), name.ai(), pid);
                    break;

                default:
                    doorbell = Doorbell.BAD_COMMAND;
            }
        }
        catch (final RuntimeException ex)
        {
            errors.onDriverCommandError(ex, command);
            doorbell = Doorbell.BAD_COMMAND;
        }
        if (Doorbell.DONE != doorbell)
        {
            counters.driverCommandsRejected.increment();
        }
        // Reader: the driver thread polling this doorbell (thesis 3.4, registration step 6). The
        // command is taken: its position is free again.
        host.putIntRelease((int)hostLayout.driverDoorbellOffset(position), doorbell);
        return 1;
    }

    private void publishDriverHead()
    {
        // Reader: the driver, checking how far the NIC has read its queue.
        host.putIntRelease((int)hostLayout.driverCommandQueueHeadAddress(), driverHead);
        // NIC-private (thesis Figure 7's Driver Info): no other party reads it, so a plain write; it
        // shows the NIC's progress to whoever dumps the SDRAM (a debugger on the firmware).
        sdram.putInt((int)layout.driverInfoOffset() + DriverCommandQueueLayout.INFO_NIC_HEAD_OFFSET, driverHead);
        driverHeadPublished = driverHead;
        commandsSinceHeadUpdate = 0;
    }
}
