package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.CommandQueueLayout;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.ContextRegionLayout;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.ProcessName;
import org.qnix.abi.VniLayout;
import org.qnix.firmware.NicCounters;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixCompletionException;
import org.qnix.lib.QnixDriverException;
import org.qnix.lib.ReceiveStatus;

/**
 * Issue 17, "must show": a hostile registered process against the real daemon and firmware JVMs. It
 * writes random Command Queue entries, Send and Receive Contexts, Context Region descriptors and
 * Buffer Pool entries into its own Virtual Network Interface (all a process may write), many naming
 * pages of other processes, and locks, unlocks and frees its own buffers meanwhile. A victim on the
 * same node checks that its locked buffer never changes, a collector on the other node receives
 * whatever the hostile process sends and checks that none of it is the victim's data, and two
 * bystanders keep exchanging checked messages across the nodes. At the end both NICs still run,
 * dropped no packet and hold no staging.
 *
 * <p>The seed is fixed and printed; {@code -Dqnix.fuzz.seed=S} runs another, {@code -Dqnix.fuzz.minutes=N}
 * runs the hostile process for N minutes instead of the default 20 seconds (the build's time is shared by
 * every test; a longer hunt is one property away).
 */
class HostileProcessFuzzTest
{
    /** What the victim's buffer holds: one byte value, so that any shifted copy of it is seen too. */
    private static final long SECRET = 0xA5A5_A5A5_A5A5_A5A5L;
    private static final int VICTIM_BYTES = 16 * 4096;
    private static final int COLLECT_BYTES = 64 * 1024;
    /** The seed of the build's run: a failure there replays with the same commands. */
    private static final long DEFAULT_SEED = 2001;

    @Test
    @Timeout(value = 120, unit = TimeUnit.MINUTES)
    void aHostileProcessNeverReachesAnotherProcessesMemoryNorStopsTheCluster() throws Exception
    {
        final long seed = Long.getLong("qnix.fuzz.seed", DEFAULT_SEED);
        final double minutes = Double.parseDouble(System.getProperty("qnix.fuzz.minutes", "0.33"));
        System.out.println("fuzz: seed " + seed + " (rerun with -Dqnix.fuzz.seed=" + seed + "), " + minutes +
            " minutes (-Dqnix.fuzz.minutes=N)");
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("z"), 2, 1, "processes");
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> threads = new ArrayList<>();
        try (Qnix victim = TestClusters.registerAlone(dir, 1101, "0-0");
             Qnix collector = TestClusters.registerAlone(dir, 1102, "1-0");
             Qnix pinger = TestClusters.registerAlone(dir, 1103, "0-0");
             Qnix ponger = TestClusters.registerAlone(dir, 1104, "1-0"))
        {
            final QnixBuffer secret = victim.allocateBuffer(VICTIM_BYTES, 0, false);
            secret.lock();
            for (int i = 0; i < VICTIM_BYTES; i += Long.BYTES)
            {
                secret.buffer().putLong(i, SECRET);
            }
            final List<Long> victimPages = TestClusters.pages(secret);
            final List<Long> collectorPages = new ArrayList<>();

            final AtomicLong collected = new AtomicLong();
            final AtomicLong roundTrips = new AtomicLong();
            final AtomicLong commands = new AtomicLong();
            threads.add(start("collector", failure, () -> collect(collector, collectorPages, stop, collected)));
            threads.add(start("bystanders", failure, () -> exchange(pinger, ponger, seed, stop, roundTrips)));
            final List<Long> others = new ArrayList<>(victimPages);
            threads.add(start("hostile", failure, () ->
                fuzz(dir, others, collectorPages, victim, collector, pinger, seed, minutes, commands)));
            threads.get(2).join();
            stop.set(true);
            for (final Thread thread : threads)
            {
                thread.join(TimeUnit.MINUTES.toMillis(2));
                assertTrue(!thread.isAlive(), thread.getName() + " did not stop");
            }
            if (null != failure.get())
            {
                throw new AssertionError("seed " + seed + ": " + failure.get(), failure.get());
            }
            for (int i = 0; i < VICTIM_BYTES; i += Long.BYTES)
            {
                assertEquals(SECRET, secret.buffer().getLong(i), "seed " + seed + ": victim byte " + i);
            }
            System.out.println("fuzz: " + commands.get() + " hostile commands, " + collected.get() +
                " messages collected, " + roundTrips.get() + " bystander round trips");
            assertTrue(roundTrips.get() > 0, "the bystanders exchanged messages");
        }
        finally
        {
            stop.set(true);
            for (final Thread thread : threads)
            {
                thread.join(TimeUnit.MINUTES.toMillis(1));
            }
            try
            {
                final Map<String, Long> totals = TestClusters.assertNicsClean(dir, 2);
                System.out.println("fuzz: NICs rejected " + totals.get(NicCounters.COMMANDS_REJECTED) +
                    " commands, completed " + totals.get(NicCounters.ERROR_COMPLETIONS) + " with an error doorbell, " +
                    totals.get(NicCounters.SENDS_COMPLETED) + " sends, " + totals.get(NicCounters.SENDS_ABORTED) +
                    " sends ended part-way");
            }
            finally
            {
                TestClusters.down(dir);
            }
        }
    }

    private interface Body
    {
        void run() throws Exception;
    }

    private static Thread start(final String name, final AtomicReference<Throwable> failure, final Body body)
    {
        final Thread thread = new Thread(() ->
        {
            try
            {
                body.run();
            }
            catch (final Throwable ex)
            {
                failure.compareAndSet(null, ex);
            }
        }, "fuzz-" + name);
        thread.start();
        return thread;
    }


    /** Receives anything from anyone on every context and checks none of it is the victim's. */
    private static void collect(final Qnix collector, final List<Long> pagesOut, final AtomicBoolean stop,
        final AtomicLong collected) throws Exception
    {
        final int contexts = collector.parameters().contextsPerProcess();
        final QnixBuffer[] buffers = new QnixBuffer[contexts];
        final int[] rx = new int[contexts];
        for (int c = 0; c < contexts; c++)
        {
            buffers[c] = collector.allocateBuffer(COLLECT_BYTES, 0, false);
            buffers[c].lock();
            synchronized (pagesOut)
            {
                pagesOut.addAll(TestClusters.pages(buffers[c]));
            }
            rx[c] = post(collector, buffers[c]);
        }
        final ReceiveStatus status = new ReceiveStatus();
        while (!stop.get())
        {
            boolean any = false;
            for (int c = 0; c < contexts; c++)
            {
                boolean done;
                try
                {
                    done = collector.pollForReceive(rx[c], status);
                }
                catch (final QnixCompletionException ex)
                {
                    done = true;
                }
                if (done)
                {
                    any = true;
                    collected.incrementAndGet();
                    for (int i = 0; i + Long.BYTES <= COLLECT_BYTES; i++)
                    {
                        if (buffers[c].buffer().getLong(i) == SECRET)
                        {
                            throw new AssertionError("the collector received the victim's data at byte " + i);
                        }
                    }
                    rx[c] = post(collector, buffers[c]);
                }
            }
            if (!any)
            {
                Thread.sleep(1);
            }
        }
    }

    private static int post(final Qnix qnix, final QnixBuffer buffer)
    {
        buffer.buffer().setMemory(0, COLLECT_BYTES, (byte)0);
        final int rx = qnix.recvContext(Qnix.ANY_PROC, Qnix.ANY_TAG, true, buffer, 0, COLLECT_BYTES);
        qnix.receive(rx);
        return rx;
    }

    /** Checked messages of random lengths, one way and back, until told to stop. */
    private static void exchange(final Qnix pinger, final Qnix ponger, final long seed, final AtomicBoolean stop,
        final AtomicLong roundTrips) throws Exception
    {
        final Random random = new Random(seed ^ 0xB15);
        final int max = 3 * 4096 + 17;
        final QnixBuffer out = pinger.allocateBuffer(max, 0, false);
        final QnixBuffer back = pinger.allocateBuffer(max, 0, false);
        final QnixBuffer in = ponger.allocateBuffer(max, 0, false);
        out.lock();
        back.lock();
        in.lock();
        final ReceiveStatus status = new ReceiveStatus();
        for (int k = 0; !stop.get(); k++)
        {
            final int length = random.nextInt(max + 1);
            for (int i = 0; i < length; i++)
            {
                out.buffer().putByte(i, (byte)(k * 31 + i * 7));
            }
            final int rx = ponger.recvContext(pinger.name(), 1, true, in, 0, max);
            ponger.receive(rx);
            final int rxBack = pinger.recvContext(ponger.name(), 2, true, back, 0, max);
            pinger.receive(rxBack);
            final int tx = pinger.sendContext(ponger.name(), 1, true, out, 0, length);
            pinger.send(tx);
            pinger.waitForSend(tx, 120, TimeUnit.SECONDS);
            ponger.waitForReceive(rx, status, 120, TimeUnit.SECONDS);
            assertEquals(length, status.length(), "round trip " + k);
            final int reply = ponger.sendContext(pinger.name(), 2, true, in, 0, length);
            ponger.send(reply);
            ponger.waitForSend(reply, 120, TimeUnit.SECONDS);
            pinger.waitForReceive(rxBack, status, 120, TimeUnit.SECONDS);
            for (int i = 0; i < length; i++)
            {
                if (back.buffer().getByte(i) != (byte)(k * 31 + i * 7))
                {
                    throw new AssertionError("round trip " + k + ": byte " + i + " of " + length + " is wrong");
                }
            }
            roundTrips.incrementAndGet();
        }
    }

    /**
     * The hostile process: random commands, contexts, descriptors and Buffer Pool entries in its own
     * VNI, and its own buffers locked, unlocked and freed under them.
     */
    private static void fuzz(final ClusterDirectory dir, final List<Long> victimPages,
        final List<Long> collectorPages, final Qnix victim, final Qnix collector, final Qnix bystander,
        final long seed, final double minutes, final AtomicLong commands) throws Exception
    {
        final Random random = new Random(seed);
        final long end = System.nanoTime() + (long)(minutes * 60e9);
        // A new hostile process every few seconds: its sends to processes that never receive end up
        // holding all its contexts, and its de-registration with everything in flight is worth having.
        for (int life = 0; System.nanoTime() < end; life++)
        {
            try (Qnix hostile = TestClusters.registerAlone(dir, 1200 + life, "0-0"))
            {
                hostileLife(dir, hostile, victimPages, collectorPages, victim, collector, bystander, random,
                    Math.min(end, System.nanoTime() + TimeUnit.SECONDS.toNanos(5)), commands);
            }
        }
    }

    private static void hostileLife(final ClusterDirectory dir, final Qnix hostile, final List<Long> victimPages,
        final List<Long> collectorPages, final Qnix victim, final Qnix collector, final Qnix bystander,
        final Random random, final long end, final AtomicLong commands) throws Exception
    {
        final ClusterParameters params = hostile.parameters();
        final NicSdramLayout layout = new NicSdramLayout(params);
        final VniLayout vni = layout.vni();
        final int contexts = params.contextsPerProcess();
        final int descriptors = params.descriptorsPerRegion();
        final int page = params.pageSize();
        final int entries = params.commandQueueEntries();
        final ProcessName[] peers = { victim.name(), collector.name(), collector.name(), collector.name(),
            collector.name(), bystander.name(), hostile.name(), new ProcessName(random.nextInt(), 0), Qnix.ANY_PROC };
        final List<QnixBuffer> own = new ArrayList<>();
        final List<Long> ownPages = new ArrayList<>();
        final NicCoordinates node = hostile.node();
        try (MappedFile mapping = MappedFile.mapExisting(
            dir.nicSdram(node), layout.vniOffset(hostile.nicPid() - 1), vni.length()))
        {
            final AtomicBuffer sdram = mapping.buffer();
            int tail = 0;
            while (System.nanoTime() < end)
            {
                final int action = random.nextInt(100);
                if ((action < 4 || own.isEmpty()) && own.size() < 32)
                {
                    final QnixBuffer buffer;
                    try
                    {
                        buffer = hostile.allocateBuffer(1 + random.nextInt(8 * page), random.nextInt(page),
                            random.nextBoolean());
                    }
                    catch (final QnixDriverException ex)
                    {
                        continue;   // No contiguous run free: a refusal, as it should be.
                    }
                    buffer.lock();
                    buffer.buffer().setMemory(0, buffer.length(), (byte)0x77);
                    own.add(buffer);
                    ownPages.addAll(TestClusters.pages(buffer));
                    continue;
                }
                if (action < 8 && !own.isEmpty())
                {
                    // Unlocked, then freed, under whatever the NIC still has queued for it.
                    final QnixBuffer buffer = own.get(random.nextInt(own.size()));
                    if (buffer.isLocked() && random.nextBoolean())
                    {
                        buffer.unlock();
                    }
                    else
                    {
                        own.remove(buffer);
                        buffer.close();
                    }
                    continue;
                }
                final int context = random.nextInt(contexts + 2) - 1;
                final int safeContext = Math.floorMod(context, contexts);
                final boolean receive = random.nextInt(4) == 0;
                final int contextAddress = receive ? vni.receiveContextOffset(safeContext) : vni.sendContextOffset(safeContext);
                final int regionAddress = receive ?
                    vni.receiveContextRegionOffset(safeContext) : vni.sendContextRegionOffset(safeContext);
                final ProcessName peer = peers[random.nextInt(peers.length)];
                final int pages = 1 + random.nextInt(Math.min(descriptors, 6));
                sdram.putInt(contextAddress + ContextLayout.PEER_AI_OFFSET, peer.ai());
                sdram.putInt(contextAddress + ContextLayout.PEER_PI_OFFSET, random.nextInt(8) == 0 ? -1 : peer.pi());
                sdram.putInt(contextAddress + ContextLayout.TAG_OFFSET, random.nextInt(4));
                sdram.putInt(contextAddress + ContextLayout.DOORBELL_FLAG_OFFSET, random.nextInt(2));
                sdram.putInt(contextAddress + ContextLayout.SIZE_OFFSET, random.nextInt(20) == 0 ? random.nextInt() : pages);
                sdram.putInt(contextAddress + ContextLayout.BUFFER_POOL_INDEX_OFFSET,
                    random.nextInt(6) == 0 ? random.nextInt(params.bufferPoolPages() + 2) - 1 : ContextLayout.NO_BUFFER_POOL);
                // Half the page tables are well formed (one run of bytes), so that their pages are what
                // the NIC has to judge; the rest are malformed in some field.
                final boolean wellFormed = random.nextBoolean();
                long total = 0;
                for (int d = 0; d < pages; d++)
                {
                    final int descriptor = regionAddress + d * ContextRegionLayout.DESCRIPTOR_LENGTH;
                    sdram.putLong(descriptor + ContextRegionLayout.ADDRESS_OFFSET,
                        address(random, victimPages, collectorPages, ownPages, params));
                    final int offset = d == 0 && random.nextBoolean() ? random.nextInt(page) : 0;
                    final int len = d == pages - 1 && pages > 1 ? 1 + random.nextInt(page) : page - offset;
                    sdram.putShort(descriptor + ContextRegionLayout.OFFSET_OFFSET, (short)offset);
                    sdram.putShort(descriptor + ContextRegionLayout.FLAG_OFFSET,
                        !wellFormed && random.nextInt(4) == 0 ? (short)random.nextInt() : ContextRegionLayout.FLAG_VALID);
                    sdram.putInt(descriptor + ContextRegionLayout.LEN_OFFSET,
                        !wellFormed && random.nextInt(4) == 0 ? random.nextInt() : len);
                    total += len;
                }
                final long length = wellFormed ? total :
                    random.nextInt(4) == 0 ? random.nextLong() : (long)random.nextInt(pages * page + 1);
                sdram.putLong(contextAddress + ContextLayout.LEN_OFFSET, length);
                if (random.nextInt(10) == 0)
                {
                    final int entry = random.nextInt(Math.max(1, params.bufferPoolPages()));
                    sdram.putLong(vni.bufferPoolOffset() + entry * VniLayout.BUFFER_POOL_ENTRY_LENGTH,
                        address(random, victimPages, collectorPages, ownPages, params));
                }

                // The command, published last like the library does; its reader is the NIC.
                final int at = vni.commandOffset(tail);
                final long wait = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
                while (0 != sdram.getIntVolatile(at + CommandQueueLayout.COMMAND_OFFSET) && System.nanoTime() < wait)
                {
                    Thread.onSpinWait();
                }
                if (0 != sdram.getIntVolatile(at + CommandQueueLayout.COMMAND_OFFSET))
                {
                    Thread.sleep(1);
                    continue;
                }
                final int command = receive ? ProcessCommand.RECEIVE :
                    random.nextInt(10) == 0 ? random.nextInt(12) - 1 : 1 + random.nextInt(ProcessCommand.BARRIER);
                sdram.putInt(at + CommandQueueLayout.CONTEXT_OFFSET, context);
                sdram.putInt(at + CommandQueueLayout.GROUP_OFFSET,
                    random.nextBoolean() ? 1101 + random.nextInt(5) : random.nextInt(20));
                sdram.putInt(at + CommandQueueLayout.SIZE_OFFSET, random.nextInt(8) - 1);
                sdram.putIntRelease(at + CommandQueueLayout.COMMAND_OFFSET, 0 == command ? ProcessCommand.SEND : command);
                tail = (tail + 1) % entries;
                commands.incrementAndGet();
            }
        }
    }

    /** A page address: the victim's, the collector's, the hostile's own, or anything at all. */
    private static long address(final Random random, final List<Long> victimPages, final List<Long> collectorPages,
        final List<Long> ownPages, final ClusterParameters params)
    {
        switch (random.nextInt(6))
        {
            case 0:
            case 1:
                return victimPages.get(random.nextInt(victimPages.size()));
            case 2:
                synchronized (collectorPages)
                {
                    return collectorPages.isEmpty() ? 0 : collectorPages.get(random.nextInt(collectorPages.size()));
                }
            case 3:
            case 4:
                return ownPages.isEmpty() ? 0 : ownPages.get(random.nextInt(ownPages.size()));
            default:
                return random.nextInt(8) == 0 ? random.nextLong() :
                    (long)random.nextInt((int)(params.hostMemoryBytes() / params.pageSize())) * params.pageSize();
        }
    }
}
