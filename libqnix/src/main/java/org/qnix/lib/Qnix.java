package org.qnix.lib;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.DirectBuffer;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.host.DoorbellWait;
import org.qnix.host.DriverProxy;
import org.qnix.host.MappingGuard;

/**
 * A process's registration with its node's NIC: the QNIX API of thesis section 3.6 in Java.
 * {@link #init} is {@code qx_init}: it registers the process through the node's driver and returns
 * when the whole group is registered on every NIC of the cluster. {@link #close()} is {@code qx_end}.
 * While registered the process has its Virtual Network Interface (a slice of the NIC SDRAM) and its
 * Host Process Structures page mapped, and nothing else of the node.
 *
 * <pre>{@code
 * try (Qnix qnix = Qnix.init(new ProcessName(7, 0), 7, 4))
 * {
 *     System.out.println(qnix.name() + " on node " + qnix.node() + ", group " + qnix.groupMembers(7));
 * }
 * }</pre>
 *
 * <p>The cluster and node come from {@code QNIX_CLUSTER} and {@code QNIX_NODE} (as set by
 * {@code qnix run}) unless given with {@link #options()}.
 *
 * <h2>Threads</h2>
 *
 * <ul>
 *   <li><b>Posting is single-threaded.</b> Taking contexts ({@code sendContext}, {@code recvContext},
 *       {@code groupContext}, {@code broadcastContext...}) and posting commands ({@code send},
 *       {@code receive}, their {@code try} forms, the collectives and {@code await{JoinGroup,Barrier}})
 *       use the Command Queue tail and the context hints, which are this process's own unshared state,
 *       as in the C API: one thread at a time, or the caller's own lock around them.</li>
 *   <li><b>Completions are per context.</b> {@code pollFor...}, {@code waitFor...} and {@code await...}
 *       of different contexts may run on different threads at once, and beside the posting thread; one
 *       context is polled by one thread at a time (its completion frees it).</li>
 *   <li><b>The control plane is thread safe.</b> {@code groupMembers}, {@code allocateBuffer},
 *       {@code bufferPool} and a buffer's {@code lock}/{@code unlock}/{@code close} are driver requests,
 *       one at a time on this object's monitor. A {@link QnixBuffer} or {@link BufferPool} itself is not
 *       thread safe.</li>
 *   <li><b>{@link #close()} is safe from any thread, at any time.</b> Every later call, and every call
 *       still waiting (for a doorbell, room in the Command Queue or a free context), ends with
 *       {@link QnixClosedException}; the VNI is retired once no call is inside it (after 10 s, under
 *       it). The memory of buffers and of the pool is retired too ({@link org.qnix.host.RetiredMemory}): a
 *       view kept past the close reads zeros.</li>
 * </ul>
 *
 * <p>The calls of the data path neither lock nor allocate: each enters and leaves the registration's
 * {@link MappingGuard} (an atomic increment and decrement and one volatile read).
 *
 * <h2>Parts</h2>
 *
 * <p>This class is the facade: each call of thesis 3.6 is here with its contract and an example, and is
 * carried out by one package-private role with its own state: {@code NicRegistration} ({@code qx_init},
 * {@code qx_end}: the driver connection and the mappings), {@code DmaMemory} ({@code qx_buffer_*}:
 * buffers and the Buffer Pool), {@code Messaging} (contexts, posts, polls and waits of point-to-point
 * messages) and {@code Collectives} (join, barrier, broadcast, multicast, group members); the VNI
 * protocol itself is {@code VirtualNetworkInterface}'s. It is longer than 500 lines only because of that
 * Javadoc, the API's reference for its sixty-odd public methods; without it, it is under 500 lines of
 * one-line delegations, {@link #close()} and {@link Options}.
 */
public final class Qnix implements AutoCloseable
{
    public static final String ENV_CLUSTER = "QNIX_CLUSTER";
    public static final String ENV_NODE = "QNIX_NODE";
    public static final String ENV_AI = "QNIX_AI";
    public static final String ENV_PI = "QNIX_PI";
    public static final String ENV_GROUP_SIZE = "QNIX_GROUP_SIZE";
    public static final String ENV_INIT_TIMEOUT_MS = "QNIX_INIT_TIMEOUT_MS";
    /** How long {@code init} waits for the group by default. */
    public static final Duration DEFAULT_INIT_TIMEOUT = Duration.ofSeconds(60);
    /** Longer init timeouts are taken as this (a century): long enough to mean "for ever", short enough to add to a clock. */
    static final long LONGEST_TIMEOUT_MS = DriverProxy.LONGEST_TIMEOUT_MS;

    private final ProcessName name;
    private final NicCoordinates node;
    private final String clusterName;
    private final ClusterParameters params;
    /** The driver connection and the VNI, Host Process Structures and control mappings. */
    private final NicRegistration registration;
    /** Every call that touches the registration's mappings is inside it; close() unmaps them once none is. */
    private final MappingGuard guard = new MappingGuard();
    private final VirtualNetworkInterface vnic;
    /** Buffers and the Buffer Pool: the driver requests of thesis 3.6's qx_buffer_*. */
    private final DmaMemory memory;
    /** Contexts, posts, polls and waits of point-to-point messages. */
    private final Messaging messaging;
    /** Join, barrier, broadcast and multicast, through messaging's contexts. */
    private final Collectives collectives;

    private Qnix(final NicRegistration registration)
    {
        this.registration = registration;
        this.name = registration.name;
        this.node = registration.node;
        this.clusterName = registration.clusterName;
        this.params = registration.params;
        this.vnic = new VirtualNetworkInterface(params, registration.mappings.vni(), registration.mappings.hps(),
            registration.mappings.control(), 0, registration.mappings.wakeUp(), node, name, guard);
        this.memory = new DmaMemory(this, params, name, clusterName, node, registration.driver, guard);
        this.messaging = new Messaging(this, params, name, guard, vnic);
        this.collectives = new Collectives(params, name, guard, registration.driver, vnic, messaging);
    }

    /**
     * {@code qx_init(proc_name, group_name, group_size)} on the node named by {@code QNIX_NODE} of the
     * cluster named by {@code QNIX_CLUSTER}.
     *
     * @throws QnixTimeoutException if the group is not complete in time; it names the missing members.
     * @throws QnixDriverException  if the driver refuses or cannot be reached.
     */
    public static Qnix init(final ProcessName name, final int group, final int groupSize)
    {
        return options().name(name).group(group, groupSize).init();
    }

    /**
     * Registers with the name, group and node that {@code qnix run} put in the environment: name
     * ({@code QNIX_AI}, {@code QNIX_PI}), group {@code QNIX_AI} of size {@code QNIX_GROUP_SIZE}.
     */
    public static Qnix initFromEnvironment()
    {
        final int ai = intEnv(ENV_AI);
        return options().name(new ProcessName(ai, intEnv(ENV_PI))).group(ai, intEnv(ENV_GROUP_SIZE)).init();
    }

    public static Options options()
    {
        return new Options();
    }

    public ProcessName name()
    {
        return name;
    }

    public NicCoordinates node()
    {
        return node;
    }

    public String clusterName()
    {
        return clusterName;
    }

    /** @return the NIC PID: this process's Process Table index + 1 on its NIC. */
    public int nicPid()
    {
        return registration.nicPid;
    }

    public ClusterParameters parameters()
    {
        return params;
    }

    /** @return true once {@link #close()} began. */
    public boolean isClosed()
    {
        return guard.isClosed();
    }

    /**
     * @return the members of a group as this node's NIC knows them, sorted by name.
     */
    public synchronized List<GroupMember> groupMembers(final int group)
    {
        return collectives.groupMembers(group);
    }

    /**
     * {@code qx_end}: de-registers from the NIC and retires the VNI, the buffers and the pool
     * ({@link org.qnix.host.RetiredMemory}). Idempotent, and safe from any thread while other threads are
     * inside calls: they end with {@link QnixClosedException}, and the VNI is retired once none is inside.
     *
     * <pre>{@code
     * Thread receiver = new Thread(() -> qnix.waitForReceive(rx, status, 1, TimeUnit.HOURS));
     * receiver.start();
     * qnix.close();   // the receiver's wait ends with QnixClosedException
     * }</pre>
     */
    public void close()
    {
        if (!guard.beginClose())
        {
            return;
        }
        // From here every call fails to enter; the ones inside see the flag at their next look, and a
        // sleeper is woken to see it now. The memory is retired once none is inside, or after the wait.
        vnic.wakeAllWaiters();
        final boolean quiescent = guard.awaitCloseQuiescence("qnix", name.toString());
        synchronized (this)
        {
            try
            {
                // Retired first: once de-registered, the driver may give these pages to the next process.
                memory.unmapAll();
                registration.retire(quiescent);
                registration.deregister();
            }
            finally
            {
                registration.release(quiescent);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Memory for DMA (thesis 3.6: qx_buffer_lock/unlock/translate/pool): DmaMemory, under this
    // object's monitor, which serialises the driver socket.
    // ---------------------------------------------------------------------------------------------

    /**
     * A buffer for DMA of {@code length} bytes, page aligned and physically contiguous, not locked yet.
     *
     * @see #allocateBuffer(int, int, boolean)
     */
    public QnixBuffer allocateBuffer(final int length)
    {
        return allocateBuffer(length, 0, true);
    }

    /**
     * A buffer for DMA in the node's host memory, mapped into this process only, not locked yet: lock it
     * before the NIC may move its bytes ({@link QnixBuffer#lock()}), and close it when done. It starts
     * {@code firstPageOffset} bytes into its first page, so that a receive buffer can match the sender's
     * alignment; its pages are one physically contiguous run, or scattered ones that this process still
     * sees virtually contiguous, as a real process sees its heap. At most a largest message long (thesis
     * 3.6: 2 MB by default, {@code ClusterParameters.maxMessageBytes()}).
     *
     * <pre>{@code
     * try (QnixBuffer receive = qnix.allocateBuffer(1 << 20, 100, false))
     * {
     *     receive.lock();
     *     PageTable pages = receive.translate();
     *     // ... post a Receive Context with this page table, wait for its doorbell ...
     * }
     * }</pre>
     *
     * @throws IllegalArgumentException if {@code length} or {@code firstPageOffset} is out of range, or
     *                                  scattered pages cannot be mapped on this platform or page size.
     * @throws QnixDriverException      with code {@code Doorbell.NO_RESOURCES} if the node's host memory is
     *                                  exhausted, or the driver's code if it refuses otherwise.
     */
    public synchronized QnixBuffer allocateBuffer(final int length, final int firstPageOffset, final boolean contiguous)
    {
        return memory.allocateBuffer(length, firstPageOffset, contiguous);
    }

    /**
     * {@code qx_buffer_pool}: the process's Buffer Pool of {@code pages} pages, locked and translated for
     * the process's whole life, its physical page addresses written by the driver into the Buffer Pool of
     * this process's Virtual Network Interface. Once per process.
     *
     * <pre>{@code
     * BufferPool pool = qnix.bufferPool(qnix.parameters().bufferPoolPages());
     * pool.slice(0, 512).putInt(0, 7);
     * }</pre>
     *
     * @throws IllegalArgumentException if {@code pages} is outside [1, Q], or the scattered pages of a pool
     *                                  cannot be mapped on this platform or page size.
     * @throws IllegalStateException    if the process already has its pool.
     * @throws QnixDriverException      with code {@code Doorbell.NO_RESOURCES} if the node's host memory is
     *                                  exhausted.
     */
    public synchronized BufferPool bufferPool(final int pages)
    {
        return memory.bufferPool(pages);
    }

    /** @return the pool {@link #bufferPool(int)} made, or null if there is none yet. */
    public synchronized BufferPool bufferPool()
    {
        return memory.bufferPool();
    }

    /** BUFFER_LOCK or BUFFER_UNLOCK for {@link QnixBuffer}. @return the region's lock count after it. */
    synchronized int lockBuffer(final int regionId, final boolean lock)
    {
        return memory.lockBuffer(regionId, lock);
    }

    /**
     * BUFFER_FREE for a {@link QnixBuffer} that is already unmapped; later, once the operation is done, if
     * one posted on it is in flight ({@link Messaging#deferFreeWhileInFlight}).
     */
    synchronized void freeBuffer(final QnixBuffer buffer)
    {
        if (!messaging.deferFreeWhileInFlight(buffer))
        {
            memory.freeBuffer(buffer);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Messages (thesis 3.6: qx_send_context, qx_recv_context, qx_send, qx_send_short, qx_receive,
    // qx_poll_for_send, qx_poll_for_receive). Taking contexts and posting: one thread at a time, like
    // the C API (the class Javadoc says which calls may run at once). Messaging runs every call that
    // touches the VNI between MappingGuard.enter() and exit(), so that close() never unmaps it under it.
    // ---------------------------------------------------------------------------------------------

    /** Any_Proc: a receive that matches a message from any process. */
    public static final ProcessName ANY_PROC = new ProcessName(ContextLayout.ANY, ContextLayout.ANY);
    /** Any_Tag: a receive that matches a message with any tag. */
    public static final int ANY_TAG = ContextLayout.ANY;

    /**
     * {@code qx_send_context} for bytes {@code [offset, offset + length)} of a locked buffer: takes the
     * most probably free Send Context (thesis 3.3.2), fills it and writes the page table into its
     * Context Region. Post it with {@link #send(int)}.
     *
     * <pre>{@code
     * int ctx = qnix.sendContext(new ProcessName(7, 1), 42, true, buffer, 0, 1000);
     * qnix.send(ctx);
     * qnix.waitForSend(ctx, 5, TimeUnit.SECONDS);
     * }</pre>
     *
     * @param doorbell true to be told of completion through {@link #pollForSend}; with false the NIC
     *                 frees the context by itself and the send cannot be polled.
     * @return the Send Context index.
     */
    public int sendContext(final ProcessName receiver, final int tag, final boolean doorbell, final QnixBuffer buffer,
        final int offset, final int length)
    {
        return messaging.sendContext(receiver, tag, doorbell, buffer, offset, length);
    }

    /**
     * {@code qx_send_context} for a buffer of the Buffer Pool: {@code length} bytes from page
     * {@code firstPage} of the pool (its Buffer Pool Index).
     */
    public int sendContext(final ProcessName receiver, final int tag, final boolean doorbell, final BufferPool pool,
        final int firstPage, final int length)
    {
        return messaging.sendContext(receiver, tag, doorbell, pool, firstPage, length);
    }

    /**
     * {@code qx_send_context} for a short message: its bytes are copied into the Context Region
     * (programmed I/O, thesis 3.2). Post it with {@link #sendShort(int)}.
     *
     * @param length at most the cluster's short threshold (1024 bytes by default).
     */
    public int sendContextShort(final ProcessName receiver, final int tag, final boolean doorbell,
        final DirectBuffer data, final int offset, final int length)
    {
        return messaging.sendContextShort(receiver, tag, doorbell, data, offset, length);
    }

    /**
     * {@code qx_recv_context} into bytes {@code [offset, offset + length)} of a locked buffer.
     *
     * <pre>{@code
     * int ctx = qnix.recvContext(Qnix.ANY_PROC, Qnix.ANY_TAG, true, buffer, 0, buffer.length());
     * qnix.receive(ctx);
     * ReceiveStatus status = new ReceiveStatus();
     * qnix.waitForReceive(ctx, status, 5, TimeUnit.SECONDS);
     * }</pre>
     *
     * @param sender a process name or {@link #ANY_PROC}.
     * @param tag    a tag or {@link #ANY_TAG}.
     */
    public int recvContext(final ProcessName sender, final int tag, final boolean doorbell, final QnixBuffer buffer,
        final int offset, final int length)
    {
        return messaging.recvContext(sender, tag, doorbell, buffer, offset, length);
    }

    /** {@code qx_recv_context} into a buffer of the Buffer Pool. */
    public int recvContext(final ProcessName sender, final int tag, final boolean doorbell, final BufferPool pool,
        final int firstPage, final int length)
    {
        return messaging.recvContext(sender, tag, doorbell, pool, firstPage, length);
    }

    /**
     * {@code qx_send}: posts a Send command; waits (bounded, 30 s) while the Command Queue is full.
     *
     * @throws QnixTimeoutException if the queue stayed full; {@link #trySend} does not wait.
     */
    public void send(final int sendContext)
    {
        messaging.post(ProcessCommand.SEND, sendContext, 0, 0);
    }

    /** {@code qx_send_short}: posts a Send_Short command; waits (bounded) while the Command Queue is full. */
    public void sendShort(final int sendContext)
    {
        messaging.post(ProcessCommand.SEND_SHORT, sendContext, 0, 0);
    }

    /** {@code qx_receive}: posts a Receive command; waits (bounded) while the Command Queue is full. */
    public void receive(final int receiveContext)
    {
        messaging.post(ProcessCommand.RECEIVE, receiveContext, 0, 0);
    }

    /**
     * {@code qx_send} that returns at once: posts the Send command if the Command Queue has room, and
     * otherwise leaves the prepared context as it is, to be posted again later. Back pressure the caller
     * handles, like Aeron's {@code Publication.offer}, instead of {@link #send}'s wait.
     *
     * <pre>{@code
     * int ctx = qnix.sendContext(peer, 42, true, buffer, 0, 1000);
     * while (!qnix.trySend(ctx))
     * {
     *     drainCompletions();   // the NIC takes commands as it completes earlier ones
     * }
     * }</pre>
     *
     * @return true if posted; false if the queue was full and nothing was written.
     */
    public boolean trySend(final int sendContext)
    {
        return messaging.tryPost(ProcessCommand.SEND, sendContext, 0, 0);
    }

    /** {@code qx_send_short} that returns at once: false, having posted nothing, if the Command Queue is full. */
    public boolean trySendShort(final int sendContext)
    {
        return messaging.tryPost(ProcessCommand.SEND_SHORT, sendContext, 0, 0);
    }

    /**
     * {@code qx_receive} that returns at once: posts the Receive command if the Command Queue has room.
     *
     * <pre>{@code
     * int rx = qnix.recvContext(Qnix.ANY_PROC, Qnix.ANY_TAG, true, buffer, 0, buffer.length());
     * if (!qnix.tryReceive(rx))
     * {
     *     pending.add(rx);   // post it on a later pass
     * }
     * }</pre>
     *
     * @return true if posted; false if the queue was full and nothing was written.
     */
    public boolean tryReceive(final int receiveContext)
    {
        return messaging.tryPost(ProcessCommand.RECEIVE, receiveContext, 0, 0);
    }

    // ---------------------------------------------------------------------------------------------
    // Groups and collectives (thesis 3.6: qx_join_group, qx_barrier, qx_broadcast, qx_broadcast_short,
    // qx_multicast, qx_multicast_short). Each completes through the Send Doorbell of the Send Context
    // it names, polled with pollForSend / waitForSend like a send. Receivers of a broadcast or a
    // multicast use ordinary Receive Contexts; the message's source is the sending process. Collectives.
    // ---------------------------------------------------------------------------------------------

    /**
     * Takes a Send Context for a {@link #joinGroup} or a {@link #barrier}: only its doorbell is used.
     *
     * <pre>{@code
     * int ctx = qnix.groupContext();
     * qnix.barrier(ctx, group, size);
     * qnix.waitForSend(ctx, 10, TimeUnit.SECONDS);
     * }</pre>
     */
    public int groupContext()
    {
        return collectives.groupContext();
    }

    /**
     * {@code qx_join_group}: posts a Join_Group command. It completes when every NIC of the cluster
     * knows the whole group, that is when all {@code groupSize} members have joined: only then may a
     * member use the group for a barrier or be sure to receive a broadcast. A process may be in many
     * groups; joining a group it is already in completes at once.
     *
     * <p>Completion errors: {@code BadCommand} for a size out of range, another size than the group's,
     * or a group already complete without this process; {@code PeerGone} if a member left the group.
     */
    public void joinGroup(final int sendContext, final int group, final int groupSize)
    {
        collectives.joinGroup(sendContext, group, groupSize);
    }

    /**
     * {@code qx_barrier}: posts a Barrier command on a group this process is in. It completes when
     * every member of the group has entered this barrier; the k-th barrier of a process on a group
     * meets the k-th of every other member.
     *
     * <p>Completion errors: {@code PeerGone} if a member left the group (before or during the
     * barrier; the group stays unusable until its last member leaves); {@code BadCommand} if this
     * process is not a member, the size is not the group's, or the group is not complete yet;
     * {@code NoResources} if this process already has 4 Barriers posted on the group.
     */
    public void barrier(final int sendContext, final int group, final int groupSize)
    {
        collectives.barrier(sendContext, group, groupSize);
    }

    /**
     * Join_Group and wait for it, sleeping on the doorbell.
     *
     * <pre>{@code
     * qnix.awaitJoinGroup(100, 4, 30, TimeUnit.SECONDS);
     * }</pre>
     *
     * @throws QnixTimeoutException    if the group is not complete in time (the join stays posted).
     * @throws QnixCompletionException if it completed with an error.
     */
    public void awaitJoinGroup(final int group, final int groupSize, final long timeout, final TimeUnit unit)
    {
        collectives.awaitJoinGroup(group, groupSize, timeout, unit);
    }

    /**
     * Barrier and wait for it, sleeping on the doorbell.
     *
     * <pre>{@code
     * qnix.awaitBarrier(qnix.name().ai(), size, 30, TimeUnit.SECONDS);
     * }</pre>
     *
     * @throws QnixTimeoutException    if not every member entered in time (the barrier stays posted).
     * @throws QnixPeerGoneException   if a member left the group.
     * @throws QnixCompletionException if it completed with another error.
     */
    public void awaitBarrier(final int group, final int groupSize, final long timeout, final TimeUnit unit)
    {
        collectives.awaitBarrier(group, groupSize, timeout, unit);
    }

    /**
     * A Send Context for a {@link #broadcast} or {@link #multicast} of bytes {@code [offset, offset +
     * length)} of a locked buffer: a {@link #sendContext} without a receiver.
     *
     * <pre>{@code
     * int ctx = qnix.broadcastContext(5, true, buffer, 0, 4096);
     * qnix.broadcast(ctx, group);
     * qnix.waitForSend(ctx, 10, TimeUnit.SECONDS);
     * }</pre>
     */
    public int broadcastContext(final int tag, final boolean doorbell, final QnixBuffer buffer, final int offset,
        final int length)
    {
        return collectives.broadcastContext(tag, doorbell, buffer, offset, length);
    }

    /** A Send Context for a broadcast or multicast of {@code length} bytes from page {@code firstPage} of the pool. */
    public int broadcastContext(final int tag, final boolean doorbell, final BufferPool pool, final int firstPage,
        final int length)
    {
        return collectives.broadcastContext(tag, doorbell, pool, firstPage, length);
    }

    /**
     * A Send Context for a {@link #broadcastShort} or {@link #multicastShort}: the bytes are copied
     * into the Context Region.
     *
     * @param length at most the cluster's short threshold (1024 bytes by default).
     */
    public int broadcastContextShort(final int tag, final boolean doorbell, final DirectBuffer data, final int offset,
        final int length)
    {
        return collectives.broadcastContextShort(tag, doorbell, data, offset, length);
    }

    /**
     * {@code qx_broadcast}: posts a Broadcast command. The NIC reads the buffer once into its own
     * memory and sends it to every member of the group except this process (which need not be a
     * member); the Send Doorbell rings when every member has been sent its copy.
     *
     * <p>Completion errors: {@code PeerGone} if a member left the group or leaves before its copy was
     * sent; {@code BadCommand} if the group is unknown or not complete; {@code Protection} if the buffer
     * is not this process's locked memory.
     */
    public void broadcast(final int sendContext, final int group)
    {
        collectives.broadcast(ProcessCommand.BROADCAST, sendContext, group);
    }

    /** {@code qx_broadcast_short}: a Broadcast of the data in the Context Region ({@link #broadcastContextShort}). */
    public void broadcastShort(final int sendContext, final int group)
    {
        collectives.broadcast(ProcessCommand.BROADCAST_SHORT, sendContext, group);
    }

    /**
     * {@link #broadcast} that returns at once: false, having posted nothing, if the Command Queue is full.
     *
     * <pre>{@code
     * int ctx = qnix.broadcastContext(5, true, buffer, 0, 4096);
     * while (!qnix.tryBroadcast(ctx, group))
     * {
     *     Thread.onSpinWait();
     * }
     * }</pre>
     */
    public boolean tryBroadcast(final int sendContext, final int group)
    {
        return collectives.tryBroadcast(ProcessCommand.BROADCAST, sendContext, group);
    }

    /** {@link #broadcastShort} that returns at once: false, having posted nothing, if the Command Queue is full. */
    public boolean tryBroadcastShort(final int sendContext, final int group)
    {
        return collectives.tryBroadcast(ProcessCommand.BROADCAST_SHORT, sendContext, group);
    }

    /**
     * {@code qx_multicast(context, size, recv_proc_name_list)}: posts a Multicast command to the named
     * processes (the size is the number of names). Like {@link #broadcast}, the data crosses the I/O
     * bus once. At most {@code 2 (N - 2)} names (124 by default), the room a Command Queue has for
     * them; a name nobody registered completes the multicast with {@code PeerGone} before any byte
     * moves.
     *
     * <pre>{@code
     * int ctx = qnix.broadcastContext(5, true, buffer, 0, 4096);
     * qnix.multicast(ctx, new ProcessName(7, 1), new ProcessName(7, 3));
     * qnix.waitForSend(ctx, 10, TimeUnit.SECONDS);
     * }</pre>
     */
    public void multicast(final int sendContext, final ProcessName... receivers)
    {
        collectives.multicast(ProcessCommand.MULTICAST, sendContext, receivers, false);
    }

    /** {@code qx_multicast_short}: a Multicast of the data in the Context Region. */
    public void multicastShort(final int sendContext, final ProcessName... receivers)
    {
        collectives.multicast(ProcessCommand.MULTICAST_SHORT, sendContext, receivers, false);
    }

    /**
     * {@link #multicast} that returns at once: false, having posted nothing, if the Command Queue has no
     * room for the command and its names.
     *
     * <pre>{@code
     * if (!qnix.tryMulticast(ctx, new ProcessName(7, 1), new ProcessName(7, 3)))
     * {
     *     retryLater(ctx);
     * }
     * }</pre>
     */
    public boolean tryMulticast(final int sendContext, final ProcessName... receivers)
    {
        return collectives.multicast(ProcessCommand.MULTICAST, sendContext, receivers, true);
    }

    /** {@link #multicastShort} that returns at once: false, having posted nothing, if the Command Queue is full. */
    public boolean tryMulticastShort(final int sendContext, final ProcessName... receivers)
    {
        return collectives.multicast(ProcessCommand.MULTICAST_SHORT, sendContext, receivers, true);
    }

    /**
     * {@code qx_poll_for_send}, non-blocking.
     *
     * <pre>{@code
     * qnix.send(tx);
     * while (!qnix.pollForSend(tx)) { doSomethingElse(); }
     * }</pre>
     *
     * @return true if the send completed (its context is Free again), false if it is still in flight.
     * @throws QnixCompletionException if it completed with an error.
     * @throws QnixNicDeadException    once the NIC's control program stopped, looked at every
     *                                 {@code EmptyPolls.PER_LOOK} polls that found nothing: a
     *                                 loop of polls ends as a wait does.
     */
    public boolean pollForSend(final int sendContext)
    {
        return messaging.pollForSend(sendContext);
    }

    /** {@code qx_poll_for_send}, backing off (spin, yield, park) until it completes or the timeout passes. */
    public void pollForSend(final int sendContext, final long timeout, final TimeUnit unit)
    {
        awaitSend(sendContext, DoorbellWait.BACKOFF, timeout, unit);
    }

    /**
     * {@code qx_poll_for_send}, spinning then sleeping on the doorbell (futex) until the NIC wakes this
     * process: the emulated interrupt. Costs a wake-up in latency, saves a core.
     */
    public void waitForSend(final int sendContext, final long timeout, final TimeUnit unit)
    {
        awaitSend(sendContext, DoorbellWait.SLEEP, timeout, unit);
    }

    /**
     * {@code qx_poll_for_send}, waiting the way {@code wait} says until the send completes.
     *
     * <pre>{@code
     * qnix.send(tx);
     * qnix.awaitSend(tx, DoorbellWait.BUSY, 5, TimeUnit.SECONDS);   // a core spins on the doorbell
     * }</pre>
     *
     * @throws QnixTimeoutException    if it did not complete in time (the send stays posted).
     * @throws QnixNicDeadException    if the NIC's control program stopped.
     * @throws QnixCompletionException if it completed with an error.
     * @throws QnixClosedException     if this process is closed, or another thread closed it meanwhile.
     * @throws IllegalArgumentException for a negative {@code timeout} (0 looks once).
     */
    public void awaitSend(final int sendContext, final DoorbellWait wait, final long timeout, final TimeUnit unit)
    {
        messaging.awaitSend(sendContext, wait, timeout, unit);
    }

    /**
     * {@code qx_poll_for_receive}, non-blocking; on completion fills {@code status} with the actual
     * source, tag and message length.
     *
     * @return true if the receive completed, false if it is still waiting.
     * @throws QnixTruncatedException  if the message was longer than the buffer (its prefix arrived).
     * @throws QnixCompletionException if it completed with another error.
     * @throws QnixNicDeadException    once the NIC's control program stopped, as {@link #pollForSend(int)}.
     */
    public boolean pollForReceive(final int receiveContext, final ReceiveStatus status)
    {
        return messaging.pollForReceive(receiveContext, status);
    }

    /** {@code qx_poll_for_receive}, backing off (spin, yield, park) until it completes or the timeout passes. */
    public void pollForReceive(final int receiveContext, final ReceiveStatus status, final long timeout,
        final TimeUnit unit)
    {
        awaitReceive(receiveContext, status, DoorbellWait.BACKOFF, timeout, unit);
    }

    /** {@code qx_poll_for_receive}, spinning then sleeping on the doorbell (futex) until woken. */
    public void waitForReceive(final int receiveContext, final ReceiveStatus status, final long timeout,
        final TimeUnit unit)
    {
        awaitReceive(receiveContext, status, DoorbellWait.SLEEP, timeout, unit);
    }

    /**
     * {@code qx_poll_for_receive}, waiting the way {@code wait} says; on completion fills {@code status}.
     *
     * <pre>{@code
     * qnix.receive(rx);
     * qnix.awaitReceive(rx, status, DoorbellWait.YIELD, 5, TimeUnit.SECONDS);
     * }</pre>
     *
     * @throws QnixTimeoutException    if nothing arrived in time (the receive stays posted).
     * @throws QnixTruncatedException  if the message was longer than the buffer (its prefix arrived).
     * @throws QnixCompletionException if it completed with another error.
     * @throws QnixClosedException     if this process is closed, or another thread closed it meanwhile.
     * @throws IllegalArgumentException for a negative {@code timeout} (0 looks once).
     */
    public void awaitReceive(final int receiveContext, final ReceiveStatus status, final DoorbellWait wait,
        final long timeout, final TimeUnit unit)
    {
        messaging.awaitReceive(receiveContext, status, wait, timeout, unit);
    }

    public String toString()
    {
        return "Qnix{" + name + " on " + node + " of cluster " + clusterName + ", NIC PID " + registration.nicPid + "}";
    }

    private static int intEnv(final String variable)
    {
        final String value = System.getenv(variable);
        if (null == value)
        {
            throw new QnixException(variable + " is not set: start the program with `qnix run`, or call Qnix.init");
        }
        try
        {
            return Integer.parseInt(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new QnixException(variable + "=" + value + " is not an integer", ex);
        }
    }

    /**
     * Everything {@code init} can take: name, group, cluster, node and timeout.
     *
     * <pre>{@code
     * Qnix qnix = Qnix.options().name(new ProcessName(3, 1)).group(3, 2)
     *     .cluster("t").node("1-0").timeout(Duration.ofSeconds(5)).init();
     * }</pre>
     */
    public static final class Options
    {
        private ProcessName name;
        private int group;
        private int groupSize;
        private String cluster;
        private NicCoordinates node;
        private Duration timeout;

        public Options name(final ProcessName name)
        {
            this.name = name;
            return this;
        }

        public Options group(final int group, final int groupSize)
        {
            this.group = group;
            this.groupSize = groupSize;
            return this;
        }

        public Options cluster(final String cluster)
        {
            this.cluster = cluster;
            return this;
        }

        public Options node(final String node)
        {
            this.node = NicCoordinates.parse(node);
            return this;
        }

        public Options node(final NicCoordinates node)
        {
            this.node = node;
            return this;
        }

        /**
         * @param timeout how long {@code init} waits for the driver and for the whole group; more than a
         *                century is taken as a century.
         * @throws IllegalArgumentException if it is not positive.
         */
        public Options timeout(final Duration timeout)
        {
            if (null == timeout || timeout.isNegative() || timeout.isZero())
            {
                throw new IllegalArgumentException("init timeout " + timeout + " must be positive");
            }
            this.timeout = timeout;
            return this;
        }

        /** {@code qx_init}. */
        public Qnix init()
        {
            if (null == name)
            {
                throw new IllegalArgumentException("a process name (AI, PI) is required");
            }
            if (groupSize < 1)
            {
                throw new IllegalArgumentException("group size " + groupSize + " must be at least 1");
            }
            final String clusterName = null != cluster ? cluster : ClusterDirectory.defaultClusterName();
            final NicCoordinates where = null != node ? node :
                NicCoordinates.parse(null != System.getenv(ENV_NODE) ? System.getenv(ENV_NODE) : "0-0");
            final Duration wait = null != timeout ? timeout : environmentTimeout();
            return new Qnix(NicRegistration.register(name, group, groupSize, clusterName, where, wait));
        }

        private static Duration environmentTimeout()
        {
            final String value = System.getenv(ENV_INIT_TIMEOUT_MS);
            if (null == value)
            {
                return DEFAULT_INIT_TIMEOUT;
            }
            try
            {
                final long ms = Long.parseLong(value.trim());
                if (ms > 0)
                {
                    return Duration.ofMillis(ms);
                }
            }
            catch (final NumberFormatException ignore)
            {
                // Reported below.
            }
            throw new QnixException(ENV_INIT_TIMEOUT_MS + "=" + value + " is not a positive number of milliseconds");
        }
    }
}
