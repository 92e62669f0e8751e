package org.qnix.daemon;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;

/**
 * How many memory mappings the daemon of a cluster needs, against the kernel's limit per process
 * ({@code /proc/sys/vm/max_map_count}, 65,530 by default): past it the JVM dies of native out-of-memory
 * the next time it maps anything (issue 17, item 7). Per node the daemon maps the node's four files
 * and runs two driver threads (a stack and its guard page each); with {@code --firmware threads} it also
 * maps them a second time for the control program, the node's input FIFO for the other control programs
 * ({@code PeerFifoMappings}) and runs the control program's thread. Measured: a 16x16 torus with
 * threads holds 4,057 mappings, about 15 a node.
 *
 * <pre>{@code
 * DaemonMappings.refusal(params, "threads").ifPresent(reason -> { throw new IllegalArgumentException(reason); });
 * }</pre>
 */
public final class DaemonMappings
{
    static final int PER_NODE_PROCESSES = 8;
    static final int PER_NODE_THREADS = 16;
    /** The JVM's own mappings, and room for what it maps later (heap, code cache, malloc arenas). */
    static final int JVM_MAPPINGS = 1024 + 4096;
    private static final Path MAX_MAP_COUNT = Path.of("/proc/sys/vm/max_map_count");

    private DaemonMappings()
    {
    }

    /** @return about how many mappings the daemon of such a cluster holds. */
    public static long estimate(final ClusterParameters params, final String firmware)
    {
        final int perNode = ClusterProperties.FIRMWARE_THREADS.equals(firmware) ? PER_NODE_THREADS : PER_NODE_PROCESSES;
        return JVM_MAPPINGS + (long)perNode * params.nodeCount();
    }

    /** @return why the daemon of such a cluster could not run on this kernel, or empty if it can. */
    public static Optional<String> refusal(final ClusterParameters params, final String firmware)
    {
        final long limit = maxMapCount();
        final long needed = estimate(params, firmware);
        if (limit <= 0 || needed <= limit)
        {
            return Optional.empty();
        }
        return Optional.of("--torus " + params.torus() + " with --firmware " + firmware +
            " needs about " + needed + " memory mappings in the daemon, over the kernel's limit of " + limit +
            " per process (vm.max_map_count)" + (ClusterProperties.FIRMWARE_THREADS.equals(firmware) ?
            ": use --firmware processes, or a smaller torus" : ": use a smaller torus"));
    }

    private static long maxMapCount()
    {
        // Not Files.readString: it reads a procfs file, whose size says 0, as its first byte only.
        try (BufferedReader reader = Files.newBufferedReader(MAX_MAP_COUNT))
        {
            final String line = reader.readLine();
            return null == line ? 0 : Long.parseLong(line.trim());
        }
        catch (final IOException | NumberFormatException ex)
        {
            return 0;
        }
    }
}
