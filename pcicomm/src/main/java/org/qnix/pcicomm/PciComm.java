package org.qnix.pcicomm;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;

/**
 * PCIComm (seed 000): connection-oriented zero-copy transfer of buffers between two processes, here
 * over the VIPL's RDMA write with immediate data on a Reliable Reception VI (issue 15). A connection is
 * named by the listener's node and a cid, the VI connection's discriminator; it is made
 * asymmetrically, as in the seed (5.1.1): one end listens, the other connects.
 *
 * <pre>{@code
 * // Process A, on node 1-0:
 * PciConnection in = PciComm.listen("1-0", 7);           // LISTENING
 * in.awaitConnected(30_000);                             // CONNECTED
 * // Process B, on node 0-0 ($QNIX_NODE):
 * PciConnection out = PciComm.connect("1-0", 7);         // CONNECTED, or NO_LISTENER
 * // or with every option named:
 * PciConnection out2 = PciComm.options().cluster("lab").localNode("0-0").connectTimeoutMs(2_000).connect("1-0", 8);
 * }</pre>
 *
 * <p>The cluster is {@code $QNIX_CLUSTER} (or "default"); a connecting end's own node is
 * {@code $QNIX_NODE} (set by {@code qnix run}), or the listener's node if unset (loopback).
 */
public final class PciComm
{
    /** How long {@code connect} waits for the listener's answer before NO_LISTENER. */
    public static final long DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
    /** DMA memory is registered in chunks this large (or one buffer's size if larger). */
    public static final int DEFAULT_CHUNK_BYTES = 256 * 1024;

    private PciComm()
    {
    }

    /** {@code pcic_listen} on {@code node} ("X-Y") of the default cluster. */
    public static PciConnection listen(final String node, final int cid)
    {
        return options().listen(node, cid);
    }

    /** {@code pcic_connect} to the listener at {@code node} ("X-Y") and {@code cid}. */
    public static PciConnection connect(final String node, final int cid)
    {
        return options().connect(node, cid);
    }

    /**
     * @return the directory of the cid lock files (empty files, one per cid listened on, deleted when the
     * cid is released; a listener killed with -9 leaves its own, which the cid's next holder takes over,
     * see {@link CidLock}): a cluster's are its {@code NAME-*} files.
     */
    public static java.nio.file.Path cidLockDirectory()
    {
        return CidLock.directory();
    }

    /**
     * @return new settings, each at its default, for one listen or connect made on them: they apply to
     * that call only, not to {@link #listen} or {@link #connect} called later.
     *
     * <pre>{@code
     * PciConnection out = PciComm.options().connectTimeoutMs(2_000).connect("1-0", 7);
     * }</pre>
     */
    public static Options options()
    {
        return new Options();
    }

    /** The settings of a listen or connect; each has a default. */
    public static final class Options
    {
        private String cluster = ClusterDirectory.defaultClusterName();
        private String localNode = System.getenv("QNIX_NODE");
        private long connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS;
        private int chunkBytes = DEFAULT_CHUNK_BYTES;

        Options()
        {
        }

        public Options cluster(final String cluster)
        {
            this.cluster = cluster;
            return this;
        }

        /** The connecting end's NIC. */
        public Options localNode(final String node)
        {
            this.localNode = node;
            return this;
        }

        public Options connectTimeoutMs(final long timeoutMs)
        {
            if (timeoutMs < 1)
            {
                throw new IllegalArgumentException("a connect timeout of " + timeoutMs + " ms");
            }
            this.connectTimeoutMs = timeoutMs;
            return this;
        }

        /** The size of the chunks of DMA memory buffers are carved from, each registered once. */
        public Options chunkBytes(final int bytes)
        {
            if (bytes < BufferPool.ALIGNMENT)
            {
                throw new IllegalArgumentException("chunks of " + bytes + " bytes");
            }
            this.chunkBytes = bytes;
            return this;
        }

        /**
         * {@code pcic_listen}: a LISTENING connection on this process's NIC {@code node} for {@code cid}.
         *
         * @throws PciCommException CID_TAKEN if a connection listens on or holds the cid on that node.
         */
        public PciConnection listen(final String node, final int cid)
        {
            checkCid(cid);
            return PciConnection.listen(cluster, parse(node), cid, chunkBytes);
        }

        /**
         * {@code pcic_connect}: a CONNECTED connection with the listener on {@code node} and {@code cid}.
         *
         * @throws PciCommException NO_LISTENER if nobody listens there within the connect timeout.
         */
        public PciConnection connect(final String node, final int cid)
        {
            checkCid(cid);
            final NicCoordinates remote = parse(node);
            return PciConnection.connect(cluster, null == localNode ? remote : parse(localNode), remote, cid,
                connectTimeoutMs, chunkBytes);
        }

        private static void checkCid(final int cid)
        {
            if (cid < 0)
            {
                throw new IllegalArgumentException("cid " + cid + ": a connection identifier is 0 or more");
            }
        }

        private static NicCoordinates parse(final String node)
        {
            try
            {
                return NicCoordinates.parse(node.startsWith("/dev/qnix/") ? node.substring("/dev/qnix/".length()) : node);
            }
            catch (final RuntimeException ex)
            {
                throw new IllegalArgumentException("no node '" + node + "': name one as X-Y", ex);
            }
        }
    }
}
