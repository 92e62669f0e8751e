package org.qnix.abi;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The block every file of a cluster starts with, in the style of Aeron's {@code CncFileDescriptor}:
 * a reader checks magic, file type and layout version before it trusts anything else, and waits for
 * the ready flag, which the creator writes last with release semantics.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                    Magic "QNIXEMU1" (64 bits)                 |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                        Layout Version                         |
 *  +---------------------------------------------------------------+
 *  |                           File Type                           |
 *  +---------------------------------------------------------------+
 *  |                 Ready Flag (written last, release)            |
 *  +---------------------------------------------------------------+
 *  |                     Node Coordinates (X-Y)                    |
 *  +---------------------------------------------------------------+
 *  |                 Creation Time, epoch ms (64 bits)             |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                 Parameters: P, M, N, K, Q, D, page,           |
 *  |           short threshold, T, G, torus W, torus H (ints)      |
 *  +---------------------------------------------------------------+
 *  |       File-specific fields from FILE_SPECIFIC_OFFSET          |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The block is {@link #LENGTH} bytes (one 4 KiB page) so that what follows stays page aligned.
 */
public final class FileDescriptorBlock
{
    /** "QNIXEMU1" in little-endian ASCII. */
    public static final long MAGIC = 0x31554D4558494E51L;
    /** Bump on any change of any layout in this package. */
    public static final int LAYOUT_VERSION = 13;

    public static final int MAGIC_OFFSET = 0;
    public static final int LAYOUT_VERSION_OFFSET = MAGIC_OFFSET + Long.BYTES;
    public static final int FILE_TYPE_OFFSET = LAYOUT_VERSION_OFFSET + Integer.BYTES;
    public static final int READY_OFFSET = FILE_TYPE_OFFSET + Integer.BYTES;
    public static final int NODE_OFFSET = READY_OFFSET + Integer.BYTES;
    public static final int CREATED_OFFSET = NODE_OFFSET + Integer.BYTES;
    public static final int PARAMETERS_OFFSET = CREATED_OFFSET + Long.BYTES;
    public static final int PARAMETER_COUNT = 12;
    public static final int FILE_SPECIFIC_OFFSET = PARAMETERS_OFFSET + PARAMETER_COUNT * Integer.BYTES;
    public static final int LENGTH = 4096;

    public static final int TYPE_NIC_SDRAM = 1;
    public static final int TYPE_HOST_MEMORY = 2;
    public static final int TYPE_RX_FIFO = 3;
    public static final int TYPE_COUNTERS = 4;
    public static final int TYPE_NIC_WAKE = 5;

    public static final int READY = 1;

    private FileDescriptorBlock()
    {
    }

    /**
     * Writes everything but the ready flag.
     *
     * @param buffer   over the start of the file.
     * @param fileType one of the {@code TYPE_} constants.
     * @param node     the node the file belongs to.
     * @param params   the cluster parameters.
     */
    public static void write(
        final AtomicBuffer buffer, final int fileType, final NicCoordinates node, final ClusterParameters params)
    {
        buffer.putLong(MAGIC_OFFSET, MAGIC);
        buffer.putInt(LAYOUT_VERSION_OFFSET, LAYOUT_VERSION);
        buffer.putInt(FILE_TYPE_OFFSET, fileType);
        buffer.putInt(NODE_OFFSET, node.packed());
        buffer.putLong(CREATED_OFFSET, System.currentTimeMillis());
        int offset = PARAMETERS_OFFSET;
        for (final int value : parameterValues(params))
        {
            buffer.putInt(offset, value);
            offset += Integer.BYTES;
        }
    }

    /** Publishes the file: every reader waits for this. */
    public static void markReady(final AtomicBuffer buffer)
    {
        // Readers: every process that maps the file, through verify().
        buffer.putIntRelease(READY_OFFSET, READY);
    }

    public static boolean isReady(final AtomicBuffer buffer)
    {
        return READY == buffer.getIntVolatile(READY_OFFSET);
    }

    /**
     * Checks that a mapped file is a ready QNIX file of the expected type and of this layout version.
     *
     * @param buffer   over the start of the file.
     * @param fileType the expected type.
     * @param what     the file's name, for the message.
     * @throws IllegalStateException saying what is wrong.
     */
    public static void verify(final AtomicBuffer buffer, final int fileType, final String what)
    {
        if (buffer.capacity() < LENGTH)
        {
            throw new IllegalStateException(what + " is " + buffer.capacity() + " bytes: not a QNIX file");
        }
        final long magic = buffer.getLong(MAGIC_OFFSET);
        if (MAGIC != magic)
        {
            throw new IllegalStateException(what + " is not a QNIX emulator file (magic 0x" +
                Long.toHexString(magic) + ")");
        }
        final int version = buffer.getInt(LAYOUT_VERSION_OFFSET);
        if (LAYOUT_VERSION != version)
        {
            throw new IllegalStateException(what + " has layout version " + version +
                " but this QNIX build reads version " + LAYOUT_VERSION + ": the cluster was brought up by " +
                (version < LAYOUT_VERSION ? "an older" : "a newer") + " build. Bring it down with the build " +
                "that started it, or remove its directory, then `qnix cluster up` it again with this build; " +
                "every process of a cluster must use one build");
        }
        final int type = buffer.getInt(FILE_TYPE_OFFSET);
        if (fileType != type)
        {
            throw new IllegalStateException(what + " has file type " + type + ", expected " + fileType);
        }
        if (!isReady(buffer))
        {
            throw new IllegalStateException(what + " is not ready: its creator has not finished initialising it");
        }
    }

    /**
     * @return the parameters recorded in the block, so that a reader uses the writer's sizes.
     */
    public static ClusterParameters readParameters(final AtomicBuffer buffer, final long sdramBytes,
        final long hostMemoryBytes, final int rxFifoBytes)
    {
        final int[] v = new int[PARAMETER_COUNT];
        for (int i = 0; i < PARAMETER_COUNT; i++)
        {
            v[i] = buffer.getInt(PARAMETERS_OFFSET + i * Integer.BYTES);
        }
        return ClusterParameters.builder()
            .processes(v[0]).contexts(v[1]).commandQueueEntries(v[2]).descriptorsPerRegion(v[3])
            .bufferPoolPages(v[4]).driverCommandQueueEntries(v[5]).pageSize(v[6]).shortThreshold(v[7])
            .nameTableEntries(v[8]).groupTableEntries(v[9]).torus(v[10], v[11])
            .sdramBytes(sdramBytes).hostMemoryBytes(hostMemoryBytes).rxFifoBytes(rxFifoBytes)
            .build();
    }

    private static int[] parameterValues(final ClusterParameters p)
    {
        return new int[]{
            p.maxProcessesPerNic(), p.contextsPerProcess(), p.commandQueueEntries(), p.descriptorsPerRegion(),
            p.bufferPoolPages(), p.driverCommandQueueEntries(), p.pageSize(), p.shortThreshold(),
            p.nameTableEntries(), p.groupTableEntries(), p.torusWidth(), p.torusHeight() };
    }
}
