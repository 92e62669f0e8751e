package org.qnix.lib;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Timer;
import java.util.TimerTask;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;

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
    /** Extra time a reply from the driver may take beyond the request's own timeout. */
    private static final long DRIVER_GRACE_MS = 15_000;
    private static final Timer WATCHDOG = new Timer("qnix-driver-watchdog", true);

    private final ProcessName name;
    private final NicCoordinates node;
    private final String clusterName;
    private final ClusterParameters params;
    private final int nicPid;
    private final SocketChannel channel;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final MappedFile vni;
    private final MappedFile hps;
    private boolean closed;

    private Qnix(final ProcessName name, final NicCoordinates node, final String clusterName,
        final ClusterParameters params, final int nicPid, final SocketChannel channel, final DataInputStream in,
        final DataOutputStream out, final MappedFile vni, final MappedFile hps)
    {
        this.name = name;
        this.node = node;
        this.clusterName = clusterName;
        this.params = params;
        this.nicPid = nicPid;
        this.channel = channel;
        this.in = in;
        this.out = out;
        this.vni = vni;
        this.hps = hps;
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
        return nicPid;
    }

    public ClusterParameters parameters()
    {
        return params;
    }

    /**
     * @return the members of a group as this node's NIC knows them, sorted by name.
     */
    public synchronized List<GroupMember> groupMembers(final int group)
    {
        ensureOpen();
        return call(() ->
        {
            out.writeInt(DriverProtocol.GROUP_QUERY);
            out.writeInt(group);
            out.flush();
            final int type = in.readInt();
            if (DriverProtocol.GROUP_INFO != type)
            {
                throw new QnixDriverException(type, "unexpected reply " + type + " to a group query");
            }
            in.readInt();
            final int count = in.readInt();
            final List<GroupMember> members = new ArrayList<>(count);
            for (int i = 0; i < count; i++)
            {
                final ProcessName member = new ProcessName(in.readInt(), in.readInt());
                final int packed = in.readInt();
                members.add(new GroupMember(member, packed < 0 ? null : NicCoordinates.unpack(packed)));
            }
            return members;
        }, DRIVER_GRACE_MS);
    }

    /** {@code qx_end}: de-registers from the NIC and unmaps the VNI. Idempotent. */
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try
        {
            call(() ->
            {
                out.writeInt(DriverProtocol.DEREGISTER);
                out.flush();
                return in.readInt();
            }, DRIVER_GRACE_MS);
        }
        catch (final QnixException ex)
        {
            // The driver is gone: it de-registers us anyway when it sees the connection close.
        }
        finally
        {
            closeQuietly(channel);
            vni.close();
            hps.close();
        }
    }

    public String toString()
    {
        return "Qnix{" + name + " on " + node + " of cluster " + clusterName + ", NIC PID " + nicPid + "}";
    }

    private void ensureOpen()
    {
        if (closed)
        {
            throw new QnixException("QNIX process " + name + " is closed (qx_end was called)");
        }
    }

    private interface DriverCall<T>
    {
        T run() throws IOException;
    }

    /** Runs a request/reply exchange, closing the connection if the driver does not answer in time. */
    private <T> T call(final DriverCall<T> exchange, final long timeoutMs)
    {
        return exchange(channel, exchange, timeoutMs, "the driver of node " + node);
    }

    private static <T> T exchange(
        final SocketChannel channel, final DriverCall<T> exchange, final long timeoutMs, final String what)
    {
        final TimerTask watchdog = new TimerTask()
        {
            public void run()
            {
                closeQuietly(channel);
            }
        };
        WATCHDOG.schedule(watchdog, timeoutMs);
        try
        {
            return exchange.run();
        }
        catch (final IOException ex)
        {
            throw new QnixDriverException("lost the connection to " + what +
                " (cluster down, daemon dead, or no answer within " + timeoutMs + " ms)", ex);
        }
        finally
        {
            watchdog.cancel();
        }
    }

    private static void closeQuietly(final SocketChannel channel)
    {
        try
        {
            channel.close();
        }
        catch (final IOException ignore)
        {
        }
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

        public Options timeout(final Duration timeout)
        {
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
            return register(clusterName, where, wait);
        }

        private static Duration environmentTimeout()
        {
            final String value = System.getenv(ENV_INIT_TIMEOUT_MS);
            return null == value ? DEFAULT_INIT_TIMEOUT : Duration.ofMillis(Long.parseLong(value.trim()));
        }

        private Qnix register(final String clusterName, final NicCoordinates where, final Duration wait)
        {
            final ClusterDirectory dir = ClusterDirectory.of(clusterName);
            final ClusterProperties props = ClusterProperties.read(dir.propertiesFile()).orElseThrow(() ->
                new QnixDriverException(DriverProtocol.REFUSED, "no QNIX cluster '" + clusterName + "' at " +
                    dir.path() + ": start one with ./qnix cluster up --name " + clusterName));
            if (!ClusterProperties.STATE_UP.equals(props.state()))
            {
                throw new QnixDriverException(DriverProtocol.REFUSED,
                    "cluster '" + clusterName + "' is " + props.state() + ", not up");
            }
            final ClusterParameters params = props.parameters();
            if (where.x() >= params.torusWidth() || where.y() >= params.torusHeight())
            {
                throw new IllegalArgumentException("node " + where + " is not in the " + params.torusWidth() + "x" +
                    params.torusHeight() + " torus of cluster '" + clusterName + "'");
            }

            final SocketChannel channel;
            try
            {
                channel = SocketChannel.open(StandardProtocolFamily.UNIX);
                channel.connect(UnixDomainSocketAddress.of(dir.driverSocket(where)));
            }
            catch (final IOException ex)
            {
                throw new QnixDriverException("cannot reach the driver of node " + where + " at " +
                    dir.driverSocket(where) + ": is cluster '" + clusterName + "' up?", ex);
            }
            final DataInputStream in = new DataInputStream(Channels.newInputStream(channel));
            final DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Channels.newOutputStream(channel)));
            boolean registered = false;
            try
            {
                final long timeoutMs = Math.max(1, wait.toMillis());
                final int[] reply = new int[2];
                final long[] addresses = new long[2];
                final Object failure = exchange(channel, () ->
                {
                    out.writeInt(DriverProtocol.REGISTER);
                    out.writeInt(name.ai());
                    out.writeInt(name.pi());
                    out.writeInt(group);
                    out.writeInt(groupSize);
                    out.writeInt((int)ProcessHandle.current().pid());
                    out.writeLong(timeoutMs);
                    out.flush();
                    final int type = in.readInt();
                    switch (type)
                    {
                        case DriverProtocol.REGISTERED:
                            in.readInt();
                            reply[0] = in.readInt();
                            addresses[0] = in.readLong();
                            reply[1] = in.readInt();
                            addresses[1] = in.readLong();
                            return null;

                        case DriverProtocol.TIMED_OUT:
                        {
                            final String message = DriverProtocol.readText(in);
                            final int count = in.readInt();
                            final List<ProcessName> missing = new ArrayList<>();
                            for (int i = 0; i < Math.min(count, params.nameTableEntries()); i++)
                            {
                                missing.add(new ProcessName(in.readInt(), in.readInt()));
                            }
                            return new QnixTimeoutException(message, missing);
                        }

                        case DriverProtocol.FAILED:
                        {
                            final int code = in.readInt();
                            return new QnixDriverException(code, DriverProtocol.readText(in));
                        }

                        default:
                            return new QnixDriverException(type, "unexpected driver reply " + type);
                    }
                }, timeoutMs + DRIVER_GRACE_MS, "the driver of node " + where);
                if (failure instanceof QnixException)
                {
                    throw (QnixException)failure;
                }

                final MappedFile vni = MappedFile.mapExisting(dir.nicSdram(where), addresses[0], reply[1]);
                final MappedFile hps = MappedFile.mapExisting(dir.hostMemory(where), addresses[1], params.pageSize());
                final long commandQueue = hps.buffer().getLong(HostProcessStructuresLayout.COMMAND_QUEUE_ADDRESS_OFFSET);
                if (commandQueue != addresses[0])
                {
                    vni.close();
                    hps.close();
                    throw new QnixDriverException(DriverProtocol.REFUSED, "Host Process Structures of " + name +
                        " point at SDRAM " + commandQueue + ", expected the VNI at " + addresses[0]);
                }
                registered = true;
                return new Qnix(name, where, clusterName, params, reply[0], channel, in, out, vni, hps);
            }
            finally
            {
                if (!registered)
                {
                    closeQuietly(channel);
                }
            }
        }
    }
}
