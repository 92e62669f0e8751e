package org.qnix.abi;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * The parameters of an emulated QNIX cluster: the topology and the sizes every file layout is derived
 * from. Names follow the thesis (seed 003, sections 3.3.1-3.3.4 and Chapter 4): {@code P} Virtual
 * Network Interfaces per NIC, {@code M} Send and {@code M} Receive Contexts per process, a Command
 * Queue of {@code N >= 2M} entries, Context Regions of {@code K} Descriptors, a Buffer Pool of
 * {@code Q} pages, a Driver Command Queue of {@code D} entries.
 *
 * <p>Instances are immutable and always valid: {@link Builder#build()} refuses an inconsistent set
 * with an {@link IllegalArgumentException} that names the offending value.
 *
 * <pre>{@code
 * ClusterParameters params = ClusterParameters.builder().torus(2, 2).sdramBytes(64L << 20).build();
 * int vnis = params.maxProcessesPerNic();
 * }</pre>
 */
public final class ClusterParameters
{
    /** Thesis Chapter 4: 64 processes per NIC. */
    public static final int DEFAULT_PROCESSES = 64;
    /** Thesis Chapter 4: 32 pending sends and 32 pending receives per process. */
    public static final int DEFAULT_CONTEXTS = 32;
    /** Command Queue entries, N >= 2M (thesis 3.3.1). */
    public static final int DEFAULT_COMMAND_QUEUE_ENTRIES = 64;
    /** 513 Descriptors: a 2 MiB message at any alignment spans 513 pages. */
    public static final int DEFAULT_DESCRIPTORS_PER_REGION = 513;
    /** Host page size: a packet never crosses a page (thesis 3.3.1). */
    public static final int DEFAULT_PAGE_SIZE = 4096;
    /** 2048 pages: the 8 MiB Buffer Pool of thesis 3.6. */
    public static final int DEFAULT_BUFFER_POOL_PAGES = 2048;
    /** Thesis Chapter 4: programmed I/O wins up to 1024 bytes. */
    public static final int DEFAULT_SHORT_THRESHOLD = 1024;
    /**
     * Microseconds a waiting party stays hot after its last work before it parks or sleeps: the firmware's
     * backoff idle strategy (it spins) and the processes' backoff and sleep doorbell waits (they yield;
     * issue 13).
     */
    public static final int DEFAULT_HOT_US = 300;
    /** The longest hot window: a second, past which "hot" is just busy-waiting. */
    public static final int MAX_HOT_US = 1_000_000;
    public static final int DEFAULT_DRIVER_COMMAND_QUEUE_ENTRIES = 64;
    public static final int DEFAULT_NAME_TABLE_ENTRIES = 1024;
    public static final int DEFAULT_GROUP_TABLE_ENTRIES = 64;
    /** Thesis Chapter 4: the IQ80303K has 64 MB of SDRAM. */
    public static final long DEFAULT_SDRAM_BYTES = 64L << 20;
    public static final long DEFAULT_HOST_MEMORY_BYTES = 256L << 20;
    public static final int DEFAULT_RX_FIFO_BYTES = 1 << 21;

    /** Coordinates are one byte each on the wire (DESIGN.md 3.3). */
    public static final int MAX_TORUS_DIMENSION = 255;
    /** The Descriptor's Offset field is 16 bits. */
    public static final int MAX_PAGE_SIZE = 1 << 15;
    /** The NIC PID on the wire is 16 bits and 0 means "system message". */
    public static final int MAX_PROCESSES = 0xFFFF - 1;
    /**
     * Messages a NIC stages at most for one receiving process (issue 17, item 3): a process that never
     * posts its receives holds no more than this of the NIC's transfer table, and a sender to it waits.
     */
    public static final int STAGED_MESSAGES_PER_PROCESS = 64;
    /**
     * Groups one process may join at run time besides its application's (issue 17, item 4): the Group
     * Table of every NIC holds every group of the cluster, so one process must not be able to fill it.
     */
    public static final int MAX_JOINED_GROUPS_PER_PROCESS = 8;
    /** Data packets carry a transfer handle in the 16-bit Context Tag of the packet header. */
    public static final int MAX_TRANSFER_TABLE_ENTRIES = 1 << 16;

    /** Memory files are mapped whole into one buffer with int offsets. */
    public static final long MAX_FILE_BYTES = 1L << 30;

    private final int torusWidth;
    private final int torusHeight;
    private final int processes;
    private final int contexts;
    private final int commandQueueEntries;
    private final int descriptorsPerRegion;
    private final int pageSize;
    private final int bufferPoolPages;
    private final int shortThreshold;
    private final int driverCommandQueueEntries;
    private final int nameTableEntries;
    private final int groupTableEntries;
    private final long sdramBytes;
    private final long hostMemoryBytes;
    private final int rxFifoBytes;
    private final int hotUs;
    private final ShortFlow shortFlow;

    private ClusterParameters(final Builder b)
    {
        torusWidth = b.torusWidth;
        torusHeight = b.torusHeight;
        processes = b.processes;
        contexts = b.contexts;
        commandQueueEntries = b.commandQueueEntries;
        descriptorsPerRegion = b.descriptorsPerRegion;
        pageSize = b.pageSize;
        bufferPoolPages = b.bufferPoolPages;
        shortThreshold = b.shortThreshold;
        driverCommandQueueEntries = b.driverCommandQueueEntries;
        nameTableEntries = b.nameTableEntries;
        groupTableEntries = b.groupTableEntries;
        sdramBytes = b.sdramBytes;
        hostMemoryBytes = b.hostMemoryBytes;
        rxFifoBytes = b.rxFifoBytes;
        hotUs = b.hotUs;
        shortFlow = b.shortFlow;
    }

    public static Builder builder()
    {
        return new Builder();
    }

    /** @return a builder holding these values, to derive a variant. */
    public Builder toBuilder()
    {
        return new Builder()
            .torus(torusWidth, torusHeight)
            .processes(processes)
            .contexts(contexts)
            .commandQueueEntries(commandQueueEntries)
            .descriptorsPerRegion(descriptorsPerRegion)
            .pageSize(pageSize)
            .bufferPoolPages(bufferPoolPages)
            .shortThreshold(shortThreshold)
            .driverCommandQueueEntries(driverCommandQueueEntries)
            .nameTableEntries(nameTableEntries)
            .groupTableEntries(groupTableEntries)
            .sdramBytes(sdramBytes)
            .hostMemoryBytes(hostMemoryBytes)
            .rxFifoBytes(rxFifoBytes)
            .hotUs(hotUs)
            .shortFlow(shortFlow);
    }

    public int torusWidth()
    {
        return torusWidth;
    }

    public int torusHeight()
    {
        return torusHeight;
    }

    /** @return true if {@code node} is one of this torus's NICs: every node name a user gives is checked so. */
    public boolean hasNode(final NicCoordinates node)
    {
        return node.x() < torusWidth && node.y() < torusHeight;
    }

    /** @return the torus as {@code --torus} takes it and messages name it, e.g. {@code 2x1}. */
    public String torus()
    {
        return torusWidth + "x" + torusHeight;
    }

    /** @return number of NICs (nodes) in the cluster, R of the NIC Table. */
    public int nodeCount()
    {
        return torusWidth * torusHeight;
    }

    /** @return P, the number of Virtual Network Interfaces (Process Table entries) per NIC. */
    public int maxProcessesPerNic()
    {
        return processes;
    }

    /** @return M, Send Contexts (and Receive Contexts) per process. */
    /**
     * @return the entries of a NIC's transfer table: one per posted receive (M per process) and
     * {@link #STAGED_MESSAGES_PER_PROCESS} staged messages per process, so that no process's traffic can
     * take the entries another process's messages need.
     */
    public int transferTableEntries()
    {
        return processes * (contexts + STAGED_MESSAGES_PER_PROCESS);
    }

    public int contextsPerProcess()
    {
        return contexts;
    }

    /** @return N, Command Queue entries per process. */
    public int commandQueueEntries()
    {
        return commandQueueEntries;
    }

    /** @return K, Descriptors per Context Region (the maximum packets per message). */
    public int descriptorsPerRegion()
    {
        return descriptorsPerRegion;
    }

    public int pageSize()
    {
        return pageSize;
    }

    /** @return Q, pages of the Buffer Pool. */
    public int bufferPoolPages()
    {
        return bufferPoolPages;
    }

    /** @return microseconds a waiting party stays hot after its last work ({@link #DEFAULT_HOT_US}). */
    public int hotUs()
    {
        return hotUs;
    }

    public int shortThreshold()
    {
        return shortThreshold;
    }

    /** How Send_Short and the short casts travel: eagerly with their data, or after a permission. */
    public ShortFlow shortFlow()
    {
        return shortFlow;
    }

    /** @return D, Driver Command Queue entries. */
    public int driverCommandQueueEntries()
    {
        return driverCommandQueueEntries;
    }

    /** @return T, Name Table entries: processes registered cluster-wide. */
    public int nameTableEntries()
    {
        return nameTableEntries;
    }

    /** @return G, Group Table entries: groups known cluster-wide. */
    public int groupTableEntries()
    {
        return groupTableEntries;
    }

    public long sdramBytes()
    {
        return sdramBytes;
    }

    public long hostMemoryBytes()
    {
        return hostMemoryBytes;
    }

    public int rxFifoBytes()
    {
        return rxFifoBytes;
    }

    /** @return the largest message one Context Region can describe: K-1 full pages at any alignment. */
    public int maxMessageBytes()
    {
        return (descriptorsPerRegion - 1) * pageSize;
    }

    /**
     * @return the parameters as ordered key/value pairs, the form used in {@code cluster.properties}.
     */
    public Map<String, String> toMap()
    {
        final Map<String, String> map = new LinkedHashMap<>();
        map.put("torus", torus());
        map.put("processes", Integer.toString(processes));
        map.put("contexts", Integer.toString(contexts));
        map.put("commandQueueEntries", Integer.toString(commandQueueEntries));
        map.put("descriptorsPerRegion", Integer.toString(descriptorsPerRegion));
        map.put("pageSize", Integer.toString(pageSize));
        map.put("bufferPoolPages", Integer.toString(bufferPoolPages));
        map.put("shortThreshold", Integer.toString(shortThreshold));
        map.put("driverCommandQueueEntries", Integer.toString(driverCommandQueueEntries));
        map.put("nameTableEntries", Integer.toString(nameTableEntries));
        map.put("groupTableEntries", Integer.toString(groupTableEntries));
        map.put("sdramBytes", Long.toString(sdramBytes));
        map.put("hostMemoryBytes", Long.toString(hostMemoryBytes));
        map.put("rxFifoBytes", Integer.toString(rxFifoBytes));
        map.put("hotUs", Integer.toString(hotUs));
        map.put("shortFlow", shortFlow.text());
        return map;
    }

    /**
     * Reads parameters written by {@link #toMap()}; missing keys take their defaults.
     *
     * @param props the properties.
     * @return the validated parameters.
     */
    public static ClusterParameters fromProperties(final Properties props)
    {
        final Builder b = builder();
        final String torus = props.getProperty("torus");
        if (null != torus)
        {
            try
            {
                b.torus(torus);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException("torus=" + torus + " is not a torus WxH", ex);
            }
        }
        b.processes(intProp(props, "processes", DEFAULT_PROCESSES));
        b.contexts(intProp(props, "contexts", DEFAULT_CONTEXTS));
        b.commandQueueEntries(intProp(props, "commandQueueEntries", DEFAULT_COMMAND_QUEUE_ENTRIES));
        b.descriptorsPerRegion(intProp(props, "descriptorsPerRegion", DEFAULT_DESCRIPTORS_PER_REGION));
        b.pageSize(intProp(props, "pageSize", DEFAULT_PAGE_SIZE));
        b.bufferPoolPages(intProp(props, "bufferPoolPages", DEFAULT_BUFFER_POOL_PAGES));
        b.shortThreshold(intProp(props, "shortThreshold", DEFAULT_SHORT_THRESHOLD));
        b.driverCommandQueueEntries(
            intProp(props, "driverCommandQueueEntries", DEFAULT_DRIVER_COMMAND_QUEUE_ENTRIES));
        b.nameTableEntries(intProp(props, "nameTableEntries", DEFAULT_NAME_TABLE_ENTRIES));
        b.groupTableEntries(intProp(props, "groupTableEntries", DEFAULT_GROUP_TABLE_ENTRIES));
        b.sdramBytes(Long.parseLong(props.getProperty("sdramBytes", Long.toString(DEFAULT_SDRAM_BYTES))));
        b.hostMemoryBytes(Long.parseLong(
            props.getProperty("hostMemoryBytes", Long.toString(DEFAULT_HOST_MEMORY_BYTES))));
        b.rxFifoBytes(intProp(props, "rxFifoBytes", DEFAULT_RX_FIFO_BYTES));
        b.hotUs(intProp(props, "hotUs", DEFAULT_HOT_US));
        b.shortFlow(ShortFlow.parse(props.getProperty("shortFlow", ShortFlow.EAGER.text())));
        return b.build();
    }

    private static int intProp(final Properties props, final String key, final int defaultValue)
    {
        final String value = props.getProperty(key);
        try
        {
            return null == value ? defaultValue : Integer.parseInt(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(key + "=" + value + " is not an integer", ex);
        }
    }

    public String toString()
    {
        return "ClusterParameters" + toMap();
    }

    public boolean equals(final Object o)
    {
        return o instanceof ClusterParameters && toMap().equals(((ClusterParameters)o).toMap());
    }

    public int hashCode()
    {
        return toMap().hashCode();
    }

    /**
     * Parses a size such as {@code 64M}, {@code 256MiB}, {@code 1G} or {@code 4096}.
     *
     * @param option name of the option, for the error message.
     * @param text   the size.
     * @return bytes.
     */
    public static long parseSize(final String option, final String text)
    {
        final String t = text.trim().toUpperCase().replace("IB", "").replace("B", "");
        long multiplier = 1;
        String digits = t;
        if (t.endsWith("K") || t.endsWith("M") || t.endsWith("G"))
        {
            final char unit = t.charAt(t.length() - 1);
            multiplier = 'K' == unit ? 1L << 10 : 'M' == unit ? 1L << 20 : 1L << 30;
            digits = t.substring(0, t.length() - 1);
        }
        try
        {
            final long value = Long.parseLong(digits.trim());
            if (value <= 0)
            {
                throw new IllegalArgumentException(option + " " + text + ": a size must be positive");
            }
            return Math.multiplyExact(value, multiplier);
        }
        catch (final NumberFormatException | ArithmeticException ex)
        {
            throw new IllegalArgumentException(
                option + " " + text + ": not a size (use bytes or a K, M or G suffix, e.g. 64M)", ex);
        }
    }

    /** Collects parameters; {@link #build()} validates them together. */
    public static final class Builder
    {
        private int torusWidth = 2;
        private int torusHeight = 2;
        private int processes = DEFAULT_PROCESSES;
        private int contexts = DEFAULT_CONTEXTS;
        private int commandQueueEntries = DEFAULT_COMMAND_QUEUE_ENTRIES;
        private int descriptorsPerRegion = DEFAULT_DESCRIPTORS_PER_REGION;
        private int pageSize = DEFAULT_PAGE_SIZE;
        private int bufferPoolPages = DEFAULT_BUFFER_POOL_PAGES;
        private int shortThreshold = DEFAULT_SHORT_THRESHOLD;
        private ShortFlow shortFlow = ShortFlow.EAGER;
        private int driverCommandQueueEntries = DEFAULT_DRIVER_COMMAND_QUEUE_ENTRIES;
        private int nameTableEntries = DEFAULT_NAME_TABLE_ENTRIES;
        private int groupTableEntries = DEFAULT_GROUP_TABLE_ENTRIES;
        private long sdramBytes = DEFAULT_SDRAM_BYTES;
        private long hostMemoryBytes = DEFAULT_HOST_MEMORY_BYTES;
        private int rxFifoBytes = DEFAULT_RX_FIFO_BYTES;
        private int hotUs = DEFAULT_HOT_US;

        public Builder torus(final int width, final int height)
        {
            torusWidth = width;
            torusHeight = height;
            return this;
        }

        /**
         * @param spec {@code WxH}, e.g. {@code 2x2}.
         * @return this.
         */
        public Builder torus(final String spec)
        {
            final String[] parts = spec.trim().toLowerCase().split("x");
            if (2 != parts.length)
            {
                throw new IllegalArgumentException("--torus " + spec + ": expected WxH, e.g. 2x2");
            }
            try
            {
                return torus(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("--torus " + spec + ": expected WxH, e.g. 2x2", ex);
            }
        }

        public Builder processes(final int p)
        {
            processes = p;
            return this;
        }

        public Builder contexts(final int m)
        {
            contexts = m;
            return this;
        }

        public Builder commandQueueEntries(final int n)
        {
            commandQueueEntries = n;
            return this;
        }

        public Builder descriptorsPerRegion(final int k)
        {
            descriptorsPerRegion = k;
            return this;
        }

        public Builder pageSize(final int size)
        {
            pageSize = size;
            return this;
        }

        public Builder bufferPoolPages(final int q)
        {
            bufferPoolPages = q;
            return this;
        }

        public Builder shortThreshold(final int bytes)
        {
            shortThreshold = bytes;
            return this;
        }

        /** How short messages travel (default {@link ShortFlow#EAGER}). */
        public Builder shortFlow(final ShortFlow flow)
        {
            shortFlow = Objects.requireNonNull(flow, "shortFlow");
            return this;
        }

        public Builder driverCommandQueueEntries(final int d)
        {
            driverCommandQueueEntries = d;
            return this;
        }

        public Builder nameTableEntries(final int t)
        {
            nameTableEntries = t;
            return this;
        }

        public Builder groupTableEntries(final int g)
        {
            groupTableEntries = g;
            return this;
        }

        public Builder sdramBytes(final long bytes)
        {
            sdramBytes = bytes;
            return this;
        }

        public Builder hostMemoryBytes(final long bytes)
        {
            hostMemoryBytes = bytes;
            return this;
        }

        public Builder rxFifoBytes(final int bytes)
        {
            rxFifoBytes = bytes;
            return this;
        }

        /** @param microseconds how long a waiting party stays hot after its last work; 0 parks at once. */
        public Builder hotUs(final int microseconds)
        {
            hotUs = microseconds;
            return this;
        }

        /**
         * @return the parameters.
         * @throws IllegalArgumentException naming the first value that is out of range or inconsistent.
         */
        public ClusterParameters build()
        {
            if (torusWidth < 1 || torusHeight < 1 ||
                torusWidth > MAX_TORUS_DIMENSION || torusHeight > MAX_TORUS_DIMENSION)
            {
                throw new IllegalArgumentException("--torus " + torusWidth + "x" + torusHeight +
                    ": width and height must be between 1 and " + MAX_TORUS_DIMENSION);
            }
            range("P (processes per NIC)", processes, 1, MAX_PROCESSES);
            range("M (contexts per process)", contexts, 1, 0xFFFF);
            if ((long)processes * (contexts + STAGED_MESSAGES_PER_PROCESS) > MAX_TRANSFER_TABLE_ENTRIES)
            {
                throw new IllegalArgumentException("P x (M + " + STAGED_MESSAGES_PER_PROCESS + ") = " +
                    (long)processes * (contexts + STAGED_MESSAGES_PER_PROCESS) + " transfer table entries (P=" +
                    processes + " processes, M=" + contexts + " contexts) exceed the " + MAX_TRANSFER_TABLE_ENTRIES +
                    " that the packet header's 16-bit transfer handle can name: lower --processes or --contexts");
            }
            if (commandQueueEntries < 2 * contexts)
            {
                throw new IllegalArgumentException("N (command queue entries) = " + commandQueueEntries +
                    " must be at least 2M = " + (2 * contexts) + " (thesis 3.3.1: N >= 2M)");
            }
            if (pageSize < 256 || pageSize > MAX_PAGE_SIZE || Integer.bitCount(pageSize) != 1)
            {
                throw new IllegalArgumentException("page size " + pageSize +
                    " must be a power of two between 256 and " + MAX_PAGE_SIZE);
            }
            range("K (descriptors per context region)", descriptorsPerRegion, 2, 1 << 20);
            range("Q (buffer pool pages)", bufferPoolPages, 0, 1 << 20);
            range("short threshold", shortThreshold, 0, pageSize);
            range("--hot-us", hotUs, 0, MAX_HOT_US);
            if (shortThreshold > descriptorsPerRegion * ContextRegionLayout.DESCRIPTOR_LENGTH)
            {
                throw new IllegalArgumentException("short threshold " + shortThreshold +
                    " exceeds a Context Region of K=" + descriptorsPerRegion + " descriptors");
            }
            range("D (driver command queue entries)", driverCommandQueueEntries, 2, 1 << 16);
            range("T (name table entries)", nameTableEntries, 1, 1 << 20);
            range("G (group table entries)", groupTableEntries, 1, 1 << 16);
            if (rxFifoBytes < 64 * 1024 || Integer.bitCount(rxFifoBytes) != 1)
            {
                throw new IllegalArgumentException(
                    "rx FIFO size " + rxFifoBytes + " must be a power of two of at least 64 KiB");
            }
            if (rxFifoBytes / 8 < pageSize + 64)
            {
                // The input FIFO (RxFifo) takes payloads of at most an eighth of its capacity.
                throw new IllegalArgumentException("rx FIFO size " + rxFifoBytes + " is too small for packets of " +
                    "page size " + pageSize + ": it must be at least " + Integer.highestOneBit((pageSize + 64) * 16));
            }
            if (nameTableEntries < processes)
            {
                throw new IllegalArgumentException("T (name table entries) = " + nameTableEntries +
                    " must be at least P = " + processes + ": one full NIC must fit the Name Table");
            }
            if (HostProcessStructuresLayout.pages(contexts, pageSize) > HostProcessStructuresLayout.MAX_PAGES)
            {
                throw new IllegalArgumentException("M (contexts per process) = " + contexts +
                    ": the Host Process Structures (" + HostProcessStructuresLayout.length(contexts) +
                    " bytes, a cache line per doorbell) must fit " + HostProcessStructuresLayout.MAX_PAGES +
                    " pages of " + pageSize + " bytes: lower --contexts");
            }

            if (sdramBytes > MAX_FILE_BYTES || hostMemoryBytes > MAX_FILE_BYTES)
            {
                throw new IllegalArgumentException("--sdram " + sdramBytes + " / --host-mem " + hostMemoryBytes +
                    ": each memory file is limited to " + MAX_FILE_BYTES + " bytes (1 GiB)");
            }
            final ClusterParameters params = new ClusterParameters(this);
            final NicSdramLayout sdram = new NicSdramLayout(params);
            if (sdram.minimumSdramBytes() > sdramBytes)
            {
                throw new IllegalArgumentException("--sdram " + sdramBytes + " bytes is too small for P=" +
                    processes + " Virtual Network Interfaces of " + sdram.vniLength() + " bytes each: needs at least " +
                    sdram.minimumSdramBytes() + " bytes (" + ((sdram.minimumSdramBytes() + (1 << 20) - 1) >> 20) +
                    " MiB), including " + params.maxMessageBytes() + " bytes of NIC managed memory");
            }
            final HostMemoryLayout host = new HostMemoryLayout(params);
            if (host.minimumHostMemoryBytes() > hostMemoryBytes)
            {
                throw new IllegalArgumentException("--host-mem " + hostMemoryBytes + " bytes is too small for P=" +
                    processes + " processes: needs at least " + host.minimumHostMemoryBytes() + " bytes");
            }
            return params;
        }

        private static void range(final String name, final int value, final int min, final int max)
        {
            if (value < min || value > max)
            {
                throw new IllegalArgumentException(
                    name + " = " + value + " is out of range [" + min + ", " + max + "]");
            }
        }
    }
}
