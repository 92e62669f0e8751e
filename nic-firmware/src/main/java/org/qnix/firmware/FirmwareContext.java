package org.qnix.firmware;

import java.io.PrintStream;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.status.CountersManager;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.HostClock;
import org.qnix.abi.HostMemoryLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.NicWakeUp;

/**
 * Everything one NIC's control program is wired from, in one place (the role of Aeron's
 * {@code MediaDriver.Context}): the node image and its layouts, every node's input FIFO, the
 * counters, the clock, where errors go; and, once {@link #conclude() concluded}, the parts the roles
 * share: the {@link Wire}, the {@link SystemMessageSender}, the {@link Doorbells}, the Name and Group
 * Tables, the Process Table entries' working state, the context reader and NIC managed memory. Each
 * role of {@link NicControlProgram} takes what it needs from here instead of a long constructor list.
 *
 * <p>The clock the roles read is a {@link CachedEpochClock} that {@link NicControlProgram#doWork()}
 * sets once at the start of each duty cycle from {@link #clock(EpochClock) the real one}: one
 * system call per cycle, and every role of the cycle sees the same time. The real one is the host's
 * monotonic clock ({@link HostClock}), in which the heartbeat's readers judge its silence; a stepped
 * test gives a manual one.
 *
 * <pre>{@code
 * FirmwareContext ctx = new FirmwareContext()
 *     .nodeImage(image)
 *     .inputFifos(rings)
 *     .countersManager(new CountersManager(image.countersMetadata(), image.countersValues()))
 *     .clock(HostClock.INSTANCE)
 *     .errorLog(System.err);
 * NicControlProgram nic = new NicControlProgram(ctx);
 * }</pre>
 */
public final class FirmwareContext
{
    private NodeImage image;
    private AtomicBuffer[] inputFifos;
    private NicWakeUp[] peerWakeUps;
    private NicCounters counters;
    private EpochClock clock;
    private PrintStream errorLog = System.err;
    private boolean concluded;

    private final CachedEpochClock cachedClock = new CachedEpochClock();
    private ClusterParameters params;
    private NicSdramLayout layout;
    private HostMemoryLayout hostLayout;
    private NicCoordinates self;
    private int selfIndex;
    private String nodeName;
    private Wire wire;
    private PacketTrace trace;
    private SystemMessageSender messages;
    private Doorbells doorbells;
    private DutyCycleErrorHandler errorHandler;
    private NameTable names;
    private GroupTable groups;
    private ProcessSlot[] slots;
    private ActiveProcesses activeProcesses;
    private ContextReader contexts;
    private StagingMemory staging;

    /** This node's mapped memory: SDRAM, host memory, its own input FIFO and its counters. */
    public FirmwareContext nodeImage(final NodeImage image)
    {
        this.image = image;
        return this;
    }

    /** The ring buffer region of every node's input FIFO, by node index (this node's own among them). */
    public FirmwareContext inputFifos(final AtomicBuffer[] rings)
    {
        this.inputFifos = rings;
        return this;
    }

    /**
     * The waker of every other node's NIC, by node index, rung after a packet is put in its FIFO; null
     * entries are not rung. Unset: none (stepped tests, where one thread runs every NIC by hand).
     */
    public FirmwareContext peerWakeUps(final NicWakeUp[] wakeUps)
    {
        this.peerWakeUps = wakeUps;
        return this;
    }

    public FirmwareContext counters(final NicCounters counters)
    {
        this.counters = counters;
        return this;
    }

    /** Where the NIC's counters are allocated, if {@link #counters(NicCounters)} was not given. */
    public FirmwareContext countersManager(final CountersManager manager)
    {
        return counters(new NicCounters(manager));
    }

    /**
     * The clock read once per duty cycle (heartbeat, permission retries, timers), in ms: {@link HostClock}
     * (the heartbeat's readers use it too), or a manual clock in a stepped test.
     */
    public FirmwareContext clock(final EpochClock clock)
    {
        this.clock = clock;
        return this;
    }

    /** Where an error in the loop writes its stack trace, once per kind (default: standard error). */
    public FirmwareContext errorLog(final PrintStream log)
    {
        this.errorLog = log;
        return this;
    }

    /**
     * Checks what was given and builds the shared parts. Called by the {@link NicControlProgram}
     * constructor; idempotent.
     */
    public FirmwareContext conclude()
    {
        if (concluded)
        {
            return this;
        }
        if (null == image || null == inputFifos || null == counters || null == clock)
        {
            throw new IllegalStateException("a FirmwareContext needs nodeImage, inputFifos, counters and clock");
        }
        params = image.parameters();
        if (inputFifos.length != params.nodeCount())
        {
            throw new IllegalArgumentException(inputFifos.length + " FIFOs for " + params.nodeCount() + " nodes");
        }
        layout = image.sdramLayout();
        hostLayout = image.hostLayout();
        self = image.node();
        selfIndex = self.index(params.torusWidth());
        cachedClock.update(clock.time());
        trace = new PacketTrace(image.traceControl(), image.traceRing(), counters.traceRecordsDropped);
        nodeName = self.toString();
        wire = new Wire(inputFifos, selfIndex, trace, nodeName,
            null == peerWakeUps ? new NicWakeUp[params.nodeCount()] : peerWakeUps);
        messages = new SystemMessageSender(wire, counters, self, params.torusWidth());
        doorbells = new Doorbells(image.hostMemory(), counters, nodeName);
        errorHandler = new DutyCycleErrorHandler(self, counters, errorLog);
        names = new NameTable(image.sdram(), layout);
        groups = new GroupTable(image.sdram(), layout);
        slots = new ProcessSlot[params.maxProcessesPerNic()];
        activeProcesses = new ActiveProcesses(params.maxProcessesPerNic());
        contexts = new ContextReader(image.sdram(), layout);
        staging = new StagingMemory(layout.managedMemoryOffset(), layout.managedMemoryLength(), params.pageSize(),
            counters.stagingBytesInUse);
        concluded = true;
        return this;
    }

    // Given --------------------------------------------------------------------------------------

    NodeImage nodeImage()
    {
        return image;
    }

    NicCounters counters()
    {
        return counters;
    }

    /** The real clock: read only by {@link NicControlProgram} to set {@link #cachedClock()}. */
    EpochClock clock()
    {
        return clock;
    }

    // Built by conclude() ------------------------------------------------------------------------

    /** The time at the start of the current duty cycle: what every role reads. */
    CachedEpochClock cachedClock()
    {
        return cachedClock;
    }

    ClusterParameters parameters()
    {
        return params;
    }

    NicSdramLayout sdramLayout()
    {
        return layout;
    }

    HostMemoryLayout hostLayout()
    {
        return hostLayout;
    }

    AtomicBuffer sdram()
    {
        return image.sdram();
    }

    AtomicBuffer hostMemory()
    {
        return image.hostMemory();
    }

    NicCoordinates self()
    {
        return self;
    }

    /** @return the NIC's name, "X-Y", made once: for logs, JFR events and conditional breakpoints. */
    String nodeName()
    {
        return nodeName;
    }

    int selfIndex()
    {
        return selfIndex;
    }

    Wire wire()
    {
        return wire;
    }

    PacketTrace packetTrace()
    {
        return trace;
    }

    SystemMessageSender systemMessages()
    {
        return messages;
    }

    Doorbells doorbells()
    {
        return doorbells;
    }

    /** Errors inside the loop: logged once per kind, counted with the packet or command that caused them. */
    public DutyCycleErrorHandler errorHandler()
    {
        return errorHandler;
    }

    NameTable nameTable()
    {
        return names;
    }

    GroupTable groupTable()
    {
        return groups;
    }

    /** The working state of each Process Table entry, made when the entry is first used. */
    ProcessSlot[] processSlots()
    {
        return slots;
    }

    /** The entries of {@link #processSlots()} with an active process, which the round robins walk. */
    ActiveProcesses activeProcesses()
    {
        return activeProcesses;
    }

    ContextReader contextReader()
    {
        return contexts;
    }

    /** NIC managed memory: staged messages and Broadcast/Multicast copies. */
    StagingMemory stagingMemory()
    {
        return staging;
    }
}
