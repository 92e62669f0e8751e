package org.qnix.bench;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The peer JVM of the baselines: echoes every message back. Started by {@link PeerProcess} as
 * {@code BenchPeer floor FILE MAX_SIZE}, {@code BenchPeer tcp PORT MAX_SIZE} or
 * {@code BenchPeer aeron DIRECTORY}; it exits when its benchmark closes the transport or dies.
 */
public final class BenchPeer
{
    static final String READY = "BENCH PEER READY";
    private static final Optional<ProcessHandle> PARENT = ProcessHandle.current().parent();

    private BenchPeer()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length < 2)
        {
            System.err.println("usage: BenchPeer floor FILE MAX_SIZE | tcp PORT MAX_SIZE | aeron DIRECTORY");
            System.exit(2);
        }
        switch (args[0])
        {
            case "floor" -> FloorTransport.echo(Path.of(args[1]), Integer.parseInt(args[2]));
            case "tcp" -> TcpTransport.echo(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            case "aeron" -> AeronIpcTransport.echo(Path.of(args[1]));
            default ->
            {
                System.err.println("unknown baseline " + args[0]);
                System.exit(2);
            }
        }
    }

    static void ready()
    {
        System.out.println(READY);
        System.out.flush();
    }

    /** @return true if the benchmark JVM that started this one is gone. */
    static boolean orphaned()
    {
        return PARENT.map(parent -> !parent.isAlive()).orElse(false);
    }
}
