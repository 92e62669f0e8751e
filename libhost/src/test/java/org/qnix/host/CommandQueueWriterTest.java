package org.qnix.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueEntry;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.HostClock;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicWakeLayout;
import org.qnix.abi.NicWakeUp;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessName;
import org.qnix.abi.VniLayout;

/**
 * The process side of the Command Queue over heap buffers, with the test as the NIC: it takes entries
 * by their Command field, clears them and publishes the Head (DESIGN.md 8, item 6). A full queue refuses
 * a try without writing, and a post waiting for room goes on once the NIC takes an entry, or ends with a
 * code, having written nothing, when the registration closes, the NIC stops or the timeout passes.
 */
@Timeout(120)
class CommandQueueWriterTest
{
    private static final long LONG_NS = TimeUnit.SECONDS.toNanos(60);

    private final UnsafeBuffer control = new UnsafeBuffer(new byte[ControlProgramLayout.LENGTH]);
    private final NicWakeUp wake =
        new NicWakeUp(new UnsafeBuffer(ByteBuffer.allocateDirect(NicWakeLayout.FILE_LENGTH)));
    private final MappingGuard guard = new MappingGuard();
    private final NicHeartbeat heartbeat = new NicHeartbeat(control, 0, NicCoordinates.parse("1-0"));

    private ClusterParameters params;
    private VniLayout layout;
    private UnsafeBuffer vni;
    private UnsafeBuffer hps;
    private int entries;
    private CommandQueueWriter commands;

    CommandQueueWriterTest()
    {
        // A NIC that runs (a fresh heartbeat) but takes no command until a test says so.
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_RUNNING);
        control.putLongVolatile(ControlProgramLayout.HEARTBEAT_TIME_OFFSET, HostClock.millis());
        queueOf(ClusterParameters.DEFAULT_COMMAND_QUEUE_ENTRIES);
    }

    private void queueOf(final int n)
    {
        // N >= 2M (thesis 3.3.1): a small queue needs few contexts.
        params = ClusterParameters.builder().contexts(Math.min(n / 2, ClusterParameters.DEFAULT_CONTEXTS))
            .commandQueueEntries(n).build();
        layout = new VniLayout(params);
        vni = new UnsafeBuffer(new byte[layout.length()]);
        hps = new UnsafeBuffer(new byte[
            HostProcessStructuresLayout.pages(params.contextsPerProcess(), params.pageSize()) * params.pageSize()]);
        entries = params.commandQueueEntries();
        commands = new CommandQueueWriter(params, vni, hps, wake, heartbeat, guard);
    }

    private void fill()
    {
        // One entry always stays empty, so that a full queue is told from an empty one.
        for (int i = 0; i < entries - 1; i++)
        {
            assertTrue(commands.tryPost(ProcessCommand.SEND, i, 0, 0), "entry " + i);
        }
        assertEquals(entries - 1, tail());
        assertEquals(0, commands.freeEntries());
    }

    private int tail()
    {
        return hps.getIntVolatile(HostProcessStructuresLayout.CQ_TAIL_OFFSET);
    }

    private int commandAt(final int index)
    {
        return vni.getIntVolatile(layout.commandOffset(index) + CommandQueueLayout.COMMAND_OFFSET);
    }

    @Test
    void tryPostFillsTheQueueThenRefusesWithoutWritingUntilTheNicTakesAnEntry()
    {
        fill();
        assertFalse(commands.tryPost(ProcessCommand.RECEIVE, 3, 0, 0));
        assertEquals(ProcessCommand.NONE, commandAt(entries - 1), "a refused post writes no command");
        assertEquals(entries - 1, tail());

        // The NIC took the first entry and publishes its head.
        hps.putIntRelease(HostProcessStructuresLayout.CQ_HEAD_OFFSET, 1);
        assertTrue(commands.tryPost(ProcessCommand.RECEIVE, 3, 5, 7));
        final CommandQueueEntry entry = new CommandQueueEntry().wrap(vni, layout.commandOffset(entries - 1));
        assertEquals(ProcessCommand.RECEIVE, entry.command());
        assertEquals(3, entry.context());
        assertEquals(5, entry.group());
        assertEquals(7, entry.size());
        assertEquals(0, tail(), "the tail wraps");
        assertFalse(commands.tryPost(ProcessCommand.SEND, 0, 0, 0));
    }

    @Test
    void tryPostMulticastNeedsRoomForItsNamesAndWritesThemAfterItsEntry()
    {
        final ProcessName[] receivers = {new ProcessName(7, 1), new ProcessName(7, 2), new ProcessName(7, 3)};
        final int needed = 1 + CommandQueueLayout.namesEntries(receivers.length);
        // With the tail at 0 and the head at h, h - 1 entries are free: leave needed - 1.
        hps.putIntRelease(HostProcessStructuresLayout.CQ_HEAD_OFFSET, needed);
        assertFalse(commands.tryPostMulticast(ProcessCommand.MULTICAST, 2, receivers));
        assertEquals(0, tail());
        assertEquals(ProcessCommand.NONE, commandAt(0));
        hps.putIntRelease(HostProcessStructuresLayout.CQ_HEAD_OFFSET, needed + 1);
        assertTrue(commands.tryPostMulticast(ProcessCommand.MULTICAST, 2, receivers));
        assertEquals(needed, tail());
        final CommandQueueEntry entry = new CommandQueueEntry().wrap(vni, layout.commandOffset(0));
        assertEquals(ProcessCommand.MULTICAST, entry.command());
        assertEquals(receivers.length, entry.size());
        entry.wrap(vni, layout.commandOffset(2));
        assertEquals(7, entry.nameAi(0));
        assertEquals(3, entry.namePi(0));
    }

    @Test
    void aMulticastThatCouldNeverFitIsRefusedAtOnce()
    {
        final ProcessName[] receivers = new ProcessName[CommandQueueLayout.maxMulticastReceivers(params) + 1];
        Arrays.fill(receivers, new ProcessName(1, 1));
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> commands.postMulticast(ProcessCommand.MULTICAST, 0, receivers, LONG_NS));
        assertTrue(refused.getMessage().contains("the queue holds " + (entries - 1)), refused.getMessage());
        assertEquals(0, tail());
    }

    /**
     * @return a post of another thread, waiting for room in the filled queue: it has spun and yielded
     * through the start of its back-off and parks between looks ({@link BackOff}), so it is inside the wait.
     */
    private CompletableFuture<Integer> postWaitingForRoom() throws InterruptedException
    {
        fill();
        final CompletableFuture<Integer> poster = new CompletableFuture<>();
        final Thread thread = new Thread(() ->
        {
            try
            {
                poster.complete(commands.post(ProcessCommand.VIA_POST_SEND, 4, 1, 0, LONG_NS));
            }
            catch (final RuntimeException ex)
            {
                poster.completeExceptionally(ex);
            }
        }, "poster");
        thread.setDaemon(true);
        thread.start();
        final long deadline = System.nanoTime() + LONG_NS;
        while (Thread.State.TIMED_WAITING != thread.getState())
        {
            assertFalse(poster.isDone(), "the post waits for room");
            assertTrue(System.nanoTime() - deadline < 0, "the post never parked; state " + thread.getState());
            Thread.sleep(1);
        }
        assertFalse(poster.isDone(), "the post waits for room");
        return poster;
    }

    @Test
    void aPostWaitingForRoomGoesOnOnceTheNicTakesAnEntry() throws Exception
    {
        final CompletableFuture<Integer> poster = postWaitingForRoom();
        hps.putIntRelease(HostProcessStructuresLayout.CQ_HEAD_OFFSET, 1);
        assertEquals(CommandQueueWriter.POSTED, poster.get(60, TimeUnit.SECONDS));
        assertEquals(ProcessCommand.VIA_POST_SEND, commandAt(entries - 1));
        assertEquals(0, tail(), "the tail wraps");
    }

    @Test
    void aPostWaitingForRoomEndsClosedWhenAnotherThreadClosesAndWritesNothing() throws Exception
    {
        final CompletableFuture<Integer> poster = postWaitingForRoom();
        guard.beginClose();
        assertEquals(CommandQueueWriter.CLOSED, poster.get(60, TimeUnit.SECONDS));
        assertEquals(ProcessCommand.NONE, commandAt(entries - 1), "the ended post wrote no command");
        assertEquals(entries - 1, tail());
    }

    @Test
    void aPostWaitingForRoomEndsWhenTheNicStopsOrTheTimeoutPasses()
    {
        fill();
        assertEquals(CommandQueueWriter.TIMED_OUT,
            commands.post(ProcessCommand.SEND, 4, 0, 0, TimeUnit.MILLISECONDS.toNanos(20)));
        final ProcessName[] one = {new ProcessName(2, 0)};
        assertEquals(CommandQueueWriter.TIMED_OUT,
            commands.postMulticast(ProcessCommand.MULTICAST, 4, one, TimeUnit.MILLISECONDS.toNanos(20)));
        control.putIntVolatile(ControlProgramLayout.STATE_OFFSET, ControlProgramLayout.STATE_STOPPED);
        assertEquals(CommandQueueWriter.NIC_DEAD, commands.post(ProcessCommand.SEND, 4, 0, 0, LONG_NS));
        assertEquals(ProcessCommand.NONE, commandAt(entries - 1));
        assertEquals(entries - 1, tail());
    }

    @Test
    void aWriterOverAMappedQueueGoesOnFromTheTailItFinds()
    {
        fill();
        hps.putIntRelease(HostProcessStructuresLayout.CQ_HEAD_OFFSET, entries - 1);
        final CommandQueueWriter again = new CommandQueueWriter(params, vni, hps, wake, heartbeat, guard);
        assertEquals(entries - 1, again.freeEntries());
        assertTrue(again.tryPost(ProcessCommand.BARRIER, 1, 9, 4));
        assertEquals(ProcessCommand.BARRIER, commandAt(entries - 1));
        assertEquals(0, tail());
    }

    /**
     * Random commands and multicasts of random sizes through a small queue that a NIC thread empties at
     * its own pace: every command arrives once, in order, with its fields and names, however the queue
     * wraps and fills.
     */
    @Test
    void randomPostsThroughASmallQueueArriveInOrderWithTheirNames() throws Exception
    {
        final long seed = 0x51C0FFEEL;
        System.out.println("CommandQueueWriterTest seed " + seed);
        final Random random = new Random(seed);
        queueOf(8);
        final int posts = 5000;
        final List<int[]> sent = new ArrayList<>();
        final List<int[]> taken = new ArrayList<>();
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread nic = new Thread(() -> takeCommands(taken, stop, new Random(seed + 1)), "test-nic");
        nic.start();
        try
        {
            for (int i = 0; i < posts; i++)
            {
                if (random.nextInt(4) == 0)
                {
                    final ProcessName[] receivers = new ProcessName[1 + random.nextInt(
                        CommandQueueLayout.maxMulticastReceivers(params))];
                    final int[] expected = new int[2 + 2 * receivers.length];
                    expected[0] = ProcessCommand.MULTICAST;
                    expected[1] = i;
                    for (int r = 0; r < receivers.length; r++)
                    {
                        receivers[r] = new ProcessName(random.nextInt(1000), random.nextInt(1000));
                        expected[2 + 2 * r] = receivers[r].ai();
                        expected[3 + 2 * r] = receivers[r].pi();
                    }
                    sent.add(expected);
                    assertEquals(CommandQueueWriter.POSTED,
                        commands.postMulticast(ProcessCommand.MULTICAST, i, receivers, LONG_NS));
                }
                else
                {
                    final int group = random.nextInt();
                    final int size = random.nextInt();
                    sent.add(new int[] {ProcessCommand.SEND, i, group, size});
                    if (!commands.tryPost(ProcessCommand.SEND, i, group, size))
                    {
                        assertEquals(CommandQueueWriter.POSTED,
                            commands.post(ProcessCommand.SEND, i, group, size, LONG_NS));
                    }
                }
            }
            while (commands.freeEntries() < entries - 1)
            {
                Thread.yield();
            }
        }
        finally
        {
            stop.set(true);
            nic.join();
        }
        assertEquals(sent.size(), taken.size(), "commands taken (seed " + seed + ")");
        for (int i = 0; i < sent.size(); i++)
        {
            assertEquals(Arrays.toString(sent.get(i)), Arrays.toString(taken.get(i)),
                "command " + i + " (seed " + seed + ")");
        }
    }

    /**
     * The NIC's side: takes entries by their Command field, clears them, publishes the Head now and then
     * and whenever it finds the queue empty.
     */
    private void takeCommands(final List<int[]> taken, final AtomicBoolean stop, final Random pace)
    {
        final CommandQueueEntry entry = new CommandQueueEntry();
        int head = 0;
        while (!stop.get())
        {
            // Beats as the control program does, so that a long run on a loaded machine is not taken for dead.
            control.putLongVolatile(ControlProgramLayout.HEARTBEAT_TIME_OFFSET, HostClock.millis());
            final int command = entry.wrap(vni, layout.commandOffset(head)).command();
            if (ProcessCommand.NONE == command)
            {
                // As the firmware does whenever it finds the queue empty. Reader: the writer's room check.
                hps.putIntRelease(HostProcessStructuresLayout.CQ_HEAD_OFFSET, head);
                Thread.yield();
                continue;
            }
            final int[] fields;
            if (ProcessCommand.MULTICAST == command)
            {
                final int receivers = entry.size();
                fields = new int[2 + 2 * receivers];
                fields[0] = command;
                fields[1] = entry.context();
                entry.consume();
                for (int r = 0; r < receivers; r++)
                {
                    final int nameEntry = (head + 1 + r / CommandQueueLayout.NAMES_PER_ENTRY) % entries;
                    entry.wrap(vni, layout.commandOffset(nameEntry));
                    fields[2 + 2 * r] = entry.nameAi(r % CommandQueueLayout.NAMES_PER_ENTRY);
                    fields[3 + 2 * r] = entry.namePi(r % CommandQueueLayout.NAMES_PER_ENTRY);
                }
                for (int n = 0; n < CommandQueueLayout.namesEntries(receivers); n++)
                {
                    entry.wrap(vni, layout.commandOffset((head + 1 + n) % entries)).consume();
                }
                head = (head + 1 + CommandQueueLayout.namesEntries(receivers)) % entries;
            }
            else
            {
                fields = new int[] {command, entry.context(), entry.group(), entry.size()};
                entry.consume();
                head = (head + 1) % entries;
            }
            taken.add(fields);
            if (pace.nextInt(3) == 0)
            {
                // Reader: the writer's room check.
                hps.putIntRelease(HostProcessStructuresLayout.CQ_HEAD_OFFSET, head);
            }
        }
        hps.putIntRelease(HostProcessStructuresLayout.CQ_HEAD_OFFSET, head);
    }
}
