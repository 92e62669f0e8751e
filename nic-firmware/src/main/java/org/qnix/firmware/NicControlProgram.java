package org.qnix.firmware;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.ControlProgramSegment;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ProcessStartTicks;

/**
 * The NIC control program of thesis section 3.5, as an Agrona {@link Agent}: the conductor of the
 * roles that do the work, each with its own state and a step that returns the work it did. One
 * {@link #doWork()} is one duty cycle, in the thesis' order:
 *
 * <ol>
 *   <li>the heartbeat (DESIGN.md 4);</li>
 *   <li>the Driver Command Queue ({@link DriverCommandReader}, {@link ProcessRegistrations});</li>
 *   <li>TX: system messages waiting for room in a FIFO ({@link Wire}), Broadcasts and Multicasts
 *       waiting for Scheduling Queue entries ({@link CastSender}), up to {@link #TX_STEPS_PER_CYCLE} data
 *       packets by the double-level round robin ({@link SendScheduler}, steps 1-4 and 7), one process command
 *       ({@link CommandQueueReader}, steps 5-6);</li>
 *   <li>the Driver Command Queue again;</li>
 *   <li>RX: the input FIFO ({@link SystemMessageDispatcher}), data packets into the
 *       {@link ReceiveTable}, system messages to the role that handles them.</li>
 * </ol>
 *
 * <p>The clock is read once per cycle, into the {@link FirmwareContext#cachedClock() cached clock}
 * the roles read. Everything read from shared memory (commands, contexts, packets) is validated; a bad
 * one is counted and answered with an error doorbell where it has one; one that throws goes to the
 * {@link DutyCycleErrorHandler}, and the loop carries on. It runs under an {@code AgentRunner} in a
 * firmware JVM or in the daemon, or is stepped by hand in tests; all its state hangs off this object,
 * so a debugger attached to a firmware JVM sees the tables and pending operations as plain objects.
 *
 * <pre>{@code
 * NicControlProgram nic = new NicControlProgram(new FirmwareContext()
 *     .nodeImage(image).inputFifos(rings).counters(counters).clock(HostClock.INSTANCE));
 * nic.onStart();
 * while (running) { nic.doWork(); }
 * }</pre>
 */
public final class NicControlProgram implements Agent
{
    /**
     * TX steps per duty cycle while there are packets to send. With one, a 4 KiB page cost a pass over
     * every queue of the cycle, and the copies were 16% of the firmware's time in a stream; with 16 the
     * same streams moved 1.5-1.8 times the bytes from 64 KiB up, and 64 added nothing
     * (docs/performance/tx-burst.txt). A command or packet that arrives meanwhile waits at most 16
     * packets' copies: a few microseconds.
     */
    static final int TX_STEPS_PER_CYCLE = 16;

    private final FirmwareContext ctx;
    private final NicCoordinates self;
    private final NicCounters counters;
    private final EpochClock hostClock;
    private final CachedEpochClock clock;
    private final ControlProgramSegment controlSegment = new ControlProgramSegment();
    private final Wire wire;
    private final SendScheduler scheduler;
    private final CastSender casts;
    private final TransferTable transfers;
    private final ReceiveTable receives;
    private final PermissionGrants grants;
    private final GroupOperations groupOperations;
    private final ProcessRegistrations registrations;
    private final DriverCommandReader driverCommands;
    private final CommandQueueReader commands;
    private final SystemMessageDispatcher rx;
    private final ViaEngine via;
    private final DutyCycleErrorHandler errors;
    private int mode = ControlProgramLayout.MODE_THREAD;
    private int debugPort;
    private long lastHeartbeatMs;
    private long heartbeat;
    private long dutyCycles;
    private int txStepsPerCycle = TX_STEPS_PER_CYCLE;

    /**
     * @param image    this node's mapped memory.
     * @param rings    the ring buffer region of every node's input FIFO, by node index.
     * @param counters where to count.
     * @param clock    the clock of the heartbeat and the timers ({@link org.qnix.abi.HostClock#INSTANCE}).
     */
    public NicControlProgram(
        final NodeImage image, final AtomicBuffer[] rings, final NicCounters counters, final EpochClock clock)
    {
        this(new FirmwareContext().nodeImage(image).inputFifos(rings).counters(counters).clock(clock));
    }

    /** Wires the roles from {@code context}, which is {@link FirmwareContext#conclude() concluded} here. */
    public NicControlProgram(final FirmwareContext context)
    {
        this.ctx = context.conclude();
        this.self = ctx.self();
        this.counters = ctx.counters();
        this.hostClock = ctx.clock();
        this.clock = ctx.cachedClock();
        controlSegment.wrap(ctx.sdram(), (int)ctx.sdramLayout().controlProgramOffset());
        this.wire = ctx.wire();
        this.errors = ctx.errorHandler();
        this.via = new ViaEngine(ctx);
        this.scheduler = new SendScheduler(ctx, via);
        this.casts = new CastSender(ctx, scheduler);
        scheduler.castSender(casts);
        this.transfers = new TransferTable(ctx);
        this.receives = new ReceiveTable(ctx, transfers);
        this.grants = new PermissionGrants(ctx, transfers, receives);
        receives.permissionGrants(grants);
        this.groupOperations = new GroupOperations(ctx, this::acknowledgeGroup);
        this.registrations = new ProcessRegistrations(ctx, scheduler, casts, receives, groupOperations, via);
        this.rx = new SystemMessageDispatcher(ctx, scheduler, receives, grants, registrations, groupOperations,
            new ViaReceiver(ctx, via));
        this.driverCommands = new DriverCommandReader(ctx, registrations, via, rx);
        this.commands = new CommandQueueReader(ctx, scheduler, casts, receives, groupOperations, via);
    }

    private void acknowledgeGroup(final GroupTable.Group group)
    {
        registrations.acknowledgeGroup(group);
    }

    /** Records how this control program runs, for {@code qnix cluster status}. */
    public NicControlProgram runMode(final int mode, final int debugPort)
    {
        this.mode = mode;
        this.debugPort = debugPort;
        return this;
    }

    /** Turns the control-plane event log on (firmware JVMs) or off (stepped tests). */
    public NicControlProgram logEvents(final boolean on)
    {
        registrations.logEvents(on);
        return this;
    }

    public String roleName()
    {
        return "nic-" + self;
    }

    public void onStart()
    {
        final long now = hostClock.time();
        clock.update(now);
        final long pid = ProcessHandle.current().pid();
        // The start is read by the driver to tell this process from a later one with the pid (FirmwareProcess).
        controlSegment.identify(pid, now, ProcessStartTicks.of(pid), mode, debugPort);
        writeHeartbeat(now);
        controlSegment.running();
    }

    public void onClose()
    {
        controlSegment.stopped();
    }

    public int doWork()
    {
        // The one clock read of the cycle: every role reads the cached value.
        clock.update(hostClock.time());
        // Whether qnix trace watches: read once here, so that off costs a branch per packet.
        ctx.packetTrace().refresh();
        int work = heartbeat();
        work += driverCommands.doWork();
        // TX (thesis 3.5): waiting system messages, casts waiting for Scheduling Queue entries, then
        // steps 1-4 and 7 (up to TX_STEPS_PER_CYCLE packets), then 5-6 (one command).
        work += wire.flush();
        work += startWaitingCasts();
        work += transmit();
        work += commands.doWork();
        work += driverCommands.doWork();
        // RX (thesis 3.5, steps 1-4).
        work += rx.doWork();
        // Reader: the driver, holding back pages it took from a process until no DMA that checked
        // them before they were taken can still be copying (ControlProgramLayout, DMA epoch).
        controlSegment.dutyCycles(++dutyCycles);
        return work;
    }

    /**
     * TX steps 1-4 and 7, up to {@link #TX_STEPS_PER_CYCLE} times while each injects something. Each step
     * is the scheduler's one packet of the double-level round robin, so the packets leave in the order
     * one step per cycle would give them; what the burst saves is the pass over every other queue of
     * the cycle between two of them.
     */
    private int transmit()
    {
        int work = 0;
        try
        {
            for (int step = 0; step < txStepsPerCycle; step++)
            {
                final int sent = scheduler.doWork();
                if (0 == sent)
                {
                    break;
                }
                work += sent;
            }
        }
        catch (final RuntimeException ex)
        {
            // As a command's or a packet's error: counted, and the rest of the cycle runs. Escaping, it
            // would skip the Command Queues, RX and the DMA epoch of this cycle (and, with a step that
            // throws each time, of every cycle), and in shared placement reach another NIC's handler.
            // Not work: a step that throws each time must not keep the idle strategy hot.
            errors.onTransmitError(ex);
            scheduler.passTurn();
        }
        return work;
    }

    /** Broadcasts and Multicasts that waited for Scheduling Queue entries; an error as in {@link #transmit()}. */
    private int startWaitingCasts()
    {
        try
        {
            return casts.doWork();
        }
        catch (final RuntimeException ex)
        {
            errors.onWaitingCastError(ex);
            return 0;
        }
    }

    /**
     * How many TX steps a duty cycle takes at most (default {@link #TX_STEPS_PER_CYCLE}). One lets a
     * stepped test, or someone in a debugger, act between two packets of a message.
     */
    void txStepsPerCycle(final int steps)
    {
        if (steps < 1)
        {
            throw new IllegalArgumentException("TX steps per cycle must be at least 1: " + steps);
        }
        txStepsPerCycle = steps;
    }

    /** The NIC of node {@code nodeIndex} runs on this program's thread (shared placement). */
    void sharesThreadWith(final int nodeIndex)
    {
        wire.sharesThreadWith(nodeIndex);
    }

    /** @return the counter the idle strategy running this program counts its sleeps in. */
    public AtomicCounter sleeps()
    {
        return counters.sleeps;
    }

    /** @return the counter the idle strategy running this program counts its parks in. */
    public AtomicCounter idleParks()
    {
        return counters.idleParks;
    }

    private int heartbeat()
    {
        final long now = clock.time();
        if (now - lastHeartbeatMs < ControlProgramLayout.HEARTBEAT_INTERVAL_MS)
        {
            return 0;
        }
        writeHeartbeat(now);
        registrations.abortOrphanedRegistrations();
        // Housekeeping, not work: counted as work, each beat would keep an idle firmware hot.
        return 0;
    }

    private void writeHeartbeat(final long now)
    {
        lastHeartbeatMs = now;
        controlSegment.beat(++heartbeat, now);
        counters.heartbeats.increment();
    }

    // ---------------------------------------------------------------------------------------------
    // Inspection (tests, debugger, `qnix inspect`)
    // ---------------------------------------------------------------------------------------------

    public NicCoordinates node()
    {
        return self;
    }

    /** The context this control program was wired from. */
    public FirmwareContext context()
    {
        return ctx;
    }

    NameTable nameTable()
    {
        return ctx.nameTable();
    }

    GroupTable groupTable()
    {
        return ctx.groupTable();
    }

    int pendingRegistrations()
    {
        return registrations.pendingRegistrations();
    }

    ProcessName resident(final int index)
    {
        return registrations.resident(index);
    }

    NodeImage image()
    {
        return ctx.nodeImage();
    }

    ProcessSlot slot(final int index)
    {
        return ctx.processSlots()[index];
    }

    /** Bytes of NIC managed memory in use: staged messages and Broadcast/Multicast copies. */
    long stagingBytesInUse()
    {
        return ctx.stagingMemory().bytesInUse();
    }

    /** Transfers granted and not yet released. */
    int activeTransfers()
    {
        return transfers.activeTransfers();
    }

    /** Eager_Short messages sent back to the permission protocol whose request is not answered yet. */
    int pendingEagerFallbacks()
    {
        return grants.pendingEagerFallbacks();
    }

    GroupOperations groupOperations()
    {
        return groupOperations;
    }

    /** @return how many times VI {@code vi} is in the VIA TX list of process {@code owner}. */
    int viaTimesScheduled(final int owner, final int vi)
    {
        return via.timesScheduled(owner, vi);
    }
}
