package org.qnix.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;

import org.qnix.host.DoorbellWait;

/**
 * The peer JVM of every benchmark transport. Started by {@link PeerProcess} as
 * {@code BenchPeer floor FILE MAX_SIZE}, {@code relay FILE MAX_SIZE} and {@code relay-echo FILE MAX_SIZE}
 * (the two peers of the relay baseline), {@code BenchPeer tcp PORT MAX_SIZE},
 * {@code BenchPeer aeron DIRECTORY} or {@code BenchPeer qnix CLUSTER NODE AI busy|yield|backoff|sleep MAX_SIZE short|send} for
 * latency (it echoes), and {@code tcp-sink PORT MAX_SIZE}, {@code aeron-sink DIRECTORY} or
 * {@code qnix-sink CLUSTER NODE AI busy|yield|backoff|sleep MAX_SIZE WINDOW} for bandwidth (it receives and
 * acknowledges each stream's last message), and {@code qnix-barrier CLUSTER NODE AI PI SIZE busy|yield|backoff|sleep}
 * (it does barriers), {@code vipl CLUSTER NODE SERVER_NODE DISCRIMINATOR busy|yield|backoff|sleep MAX_SIZE send|rdma}
 * (it echoes through a VI) and {@code vipl-sink CLUSTER NODE SERVER_NODE DISCRIMINATOR MAX_SIZE WINDOW} (it receives
 * and gives credits back), {@code pcicomm CLUSTER NODE LISTENER_NODE CID MAX_SIZE} (it echoes through a PCIComm
 * connection) and {@code pcicomm-sink CLUSTER NODE LISTENER_NODE CID MAX_SIZE WINDOW} (it receives and
 * acknowledges each stream's last message); it exits when its benchmark closes the transport or dies.
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
            System.err.println("usage: BenchPeer floor FILE MAX_SIZE | relay FILE MAX_SIZE | relay-echo FILE MAX_SIZE | " +
                "tcp PORT MAX_SIZE | aeron DIRECTORY | " +
                "qnix CLUSTER NODE AI busy|yield|backoff|sleep MAX_SIZE short|send | tcp-sink PORT MAX_SIZE | aeron-sink DIRECTORY | " +
                "qnix-sink CLUSTER NODE AI busy|yield|backoff|sleep MAX_SIZE WINDOW | " +
                "vipl CLUSTER NODE SERVER_NODE DISCRIMINATOR busy|yield|backoff|sleep MAX_SIZE send|rdma | " +
                "vipl-sink CLUSTER NODE SERVER_NODE DISCRIMINATOR MAX_SIZE WINDOW | " +
                "pcicomm CLUSTER NODE LISTENER_NODE CID MAX_SIZE | pcicomm-sink CLUSTER NODE LISTENER_NODE CID MAX_SIZE WINDOW | " +
                "qnix-barrier CLUSTER NODE AI PI SIZE busy|yield|backoff|sleep");
            System.exit(2);
        }
        switch (args[0])
        {
            case "floor" -> FloorTransport.echo(Path.of(args[1]), Integer.parseInt(args[2]));
            case "relay" -> RelayTransport.relay(Path.of(args[1]), Integer.parseInt(args[2]));
            case "relay-echo" -> RelayTransport.echo(Path.of(args[1]), Integer.parseInt(args[2]));
            case "tcp" -> TcpTransport.echo(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            case "aeron" -> AeronIpcTransport.echo(Path.of(args[1]));
            case "qnix" -> QnixTransport.echo(args[1], args[2], Integer.parseInt(args[3]), DoorbellWait.parse(args[4]),
                Integer.parseInt(args[5]), "short".equals(args[6]));
            case "tcp-sink" -> TcpStreamTransport.sink(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            case "aeron-sink" -> AeronStreamTransport.sink(Path.of(args[1]));
            case "qnix-sink" -> QnixStreamTransport.sink(args[1], args[2], Integer.parseInt(args[3]),
                DoorbellWait.parse(args[4]), Integer.parseInt(args[5]), Integer.parseInt(args[6]));
            case "vipl" -> ViplTransport.echo(args[1], args[2], args[3], args[4].getBytes(StandardCharsets.US_ASCII),
                DoorbellWait.parse(args[5]), Integer.parseInt(args[6]), "rdma".equals(args[7]));
            case "vipl-sink" -> ViplStreamTransport.sink(args[1], args[2], args[3],
                args[4].getBytes(StandardCharsets.US_ASCII), Integer.parseInt(args[5]), Integer.parseInt(args[6]));
            case "pcicomm" -> PciCommTransport.echo(args[1], args[2], args[3], Integer.parseInt(args[4]),
                Integer.parseInt(args[5]));
            case "pcicomm-sink" -> PciCommStreamTransport.sink(args[1], args[2], args[3], Integer.parseInt(args[4]),
                Integer.parseInt(args[5]), Integer.parseInt(args[6]));
            case "qnix-barrier" -> BarrierGroup.member(args[1], args[2], Integer.parseInt(args[3]),
                Integer.parseInt(args[4]), Integer.parseInt(args[5]), DoorbellWait.parse(args[6]));
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
