package org.qnix.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.HexFormat;
import java.util.List;

import org.qnix.abi.ClusterDirectory;
import org.qnix.pcicomm.PciBuffer;
import org.qnix.pcicomm.PciComm;
import org.qnix.pcicomm.PciCommException;
import org.qnix.pcicomm.PciConnection;

/**
 * A file streamed from one process to another over a PCIComm connection (seed 000; issue 15), and
 * checked: rank 0 listens on its node and receives into preposted buffers, rank 1 connects to it and
 * sends the file in buffers it recycles, then disconnects; rank 0 takes the peer's disconnect as the
 * end of the file and compares the SHA-256 of what it received with the file's. Run with
 * {@code ./qnix run -n 2 -- PciCommCat --file PATH}.
 *
 * <p>Options: {@code --file PATH} (required), {@code --out PATH} (rank 0 also writes what it received
 * there), {@code --cid N} (default 7), {@code --buffer BYTES} (each buffer, default 65536),
 * {@code --buffers N} (on each side, default 4), {@code --listener-node X-Y} (where rank 0 is; default
 * 0-0, where {@code qnix run} puts it). Each rank prints {@code PCICOMMCAT sent|received bytes=...
 * sha256=...}; rank 0 exits 1 if the digests differ.
 */
public final class PciCommCat
{
    private static final long WAIT_MS = 120_000;

    private PciCommCat()
    {
    }

    /** What a run moves, checked before anything starts. */
    public record Options(Path file, Path out, int cid, int buffer, int buffers, String listenerNode)
    {
        private static final String USAGE = "PciCommCat --file PATH [--out PATH] [--cid N] [--buffer BYTES] " +
            "[--buffers N] [--listener-node X-Y]";

        /** @throws IllegalArgumentException naming the bad option and value. */
        public static Options parse(final List<String> args)
        {
            Path file = null;
            Path out = null;
            int cid = 7;
            int buffer = 65536;
            int buffers = 4;
            String listenerNode = "0-0";
            final Arguments a = new Arguments(args);
            while (a.hasNext())
            {
                switch (a.next())
                {
                    case "--file":
                        file = Path.of(a.value());
                        break;
                    case "--out":
                        out = Path.of(a.value());
                        break;
                    case "--cid":
                        cid = a.intAtLeast(0);
                        break;
                    case "--buffer":
                        buffer = a.intAtLeast(1);
                        break;
                    case "--buffers":
                        buffers = a.intAtLeast(1);
                        break;
                    case "--listener-node":
                        listenerNode = a.node();
                        break;
                    default:
                        throw a.unknown(USAGE);
                }
            }
            if (null == file)
            {
                throw new IllegalArgumentException("--file is required; usage: " + USAGE);
            }
            if (!Files.isRegularFile(file) || !Files.isReadable(file))
            {
                throw new IllegalArgumentException("--file " + file + ": not a readable file");
            }
            final String clusterFile = null == out ? null : ClusterDirectory.whyAClusterFile(out);
            if (null != clusterFile)
            {
                throw new IllegalArgumentException("--out " + out + ": " + clusterFile);
            }
            if (null != out && Files.isDirectory(out))
            {
                throw new IllegalArgumentException("--out " + out + ": is a directory; give a file name");
            }
            final Path outDirectory = null == out ? null : out.toAbsolutePath().getParent();
            if (null != outDirectory && !Files.isDirectory(outDirectory))
            {
                throw new IllegalArgumentException("--out " + out + ": no such directory " + outDirectory);
            }
            return new Options(file, out, cid, buffer, buffers, listenerNode);
        }
    }

    public static void main(final String[] args) throws Exception
    {
        OneLineFailures.install("PciCommCat");
        final Options options = Arguments.parseOrExit("PciCommCat", Options::parse, args);
        final int rank = Integer.parseInt(System.getenv().getOrDefault("QNIX_PI", "0"));
        if (0 == rank)
        {
            final String node = System.getenv().getOrDefault("QNIX_NODE", options.listenerNode());
            final boolean matches;
            try (PciConnection in = PciComm.listen(node, options.cid()))
            {
                in.awaitConnected(WAIT_MS);
                matches = receive(in, options);
            }
            if (!matches)
            {
                System.exit(1);
            }
        }
        else if (1 == rank)
        {
            try (PciConnection out = PciComm.options().connectTimeoutMs(WAIT_MS).connect(options.listenerNode(),
                options.cid()))
            {
                send(out, options);
            }
        }
    }

    /** Rank 1: the file, buffer by buffer, each reused once recycled. */
    private static void send(final PciConnection out, final Options options) throws Exception
    {
        final MessageDigest digest = sha256();
        final ArrayDeque<PciBuffer> free = new ArrayDeque<>();
        for (int i = 0; i < options.buffers(); i++)
        {
            free.add(out.allocate(options.buffer()));
        }
        final byte[] chunk = new byte[options.buffer()];
        long sent = 0;
        int inFlight = 0;
        try (InputStream file = Files.newInputStream(options.file()))
        {
            while (true)
            {
                if (free.isEmpty())
                {
                    free.add(recycle(out));
                    inFlight--;
                }
                final int n = file.readNBytes(chunk, 0, chunk.length);
                if (n <= 0)
                {
                    break;
                }
                final PciBuffer b = free.pollFirst();
                // The one copy: from the file into DMA memory. The NIC reads it from there, once.
                b.buffer().putBytes(0, chunk, 0, n);
                digest.update(chunk, 0, n);
                out.send(b, n);
                inFlight++;
                sent += n;
            }
        }
        for (; inFlight > 0; inFlight--)
        {
            recycle(out);
        }
        out.disconnect(WAIT_MS);
        System.out.println("PCICOMMCAT sent bytes=" + sent + " sha256=" + HexFormat.of().formatHex(digest.digest()));
    }

    private static PciBuffer recycle(final PciConnection out) throws InterruptedException
    {
        final PciBuffer back = out.sendRecycle(WAIT_MS);
        if (null == back)
        {
            throw new IllegalStateException("no buffer recycled in " + WAIT_MS + " ms");
        }
        return back;
    }

    /** Rank 0: preposted buffers, received in order and preposted again, until the peer disconnects. */
    private static boolean receive(final PciConnection in, final Options options) throws Exception
    {
        final MessageDigest digest = sha256();
        for (int i = 0; i < options.buffers(); i++)
        {
            in.prepostRecv(in.allocate(options.buffer()), options.buffer());
        }
        final byte[] chunk = new byte[options.buffer()];
        long received = 0;
        try (OutputStream copy = null == options.out() ? OutputStream.nullOutputStream() :
            Files.newOutputStream(options.out()))
        {
            while (true)
            {
                final PciBuffer got;
                try
                {
                    got = in.recv(WAIT_MS);
                }
                catch (final PciCommException ex)
                {
                    if (PciCommException.Reason.PEER_DISCONNECTED == ex.reason())
                    {
                        break;      // the end of the file
                    }
                    throw ex;
                }
                if (null == got)
                {
                    throw new IllegalStateException("nothing received in " + WAIT_MS + " ms");
                }
                got.buffer().getBytes(0, chunk, 0, got.length());
                digest.update(chunk, 0, got.length());
                copy.write(chunk, 0, got.length());
                received += got.length();
                in.prepostRecv(got, got.capacity());
            }
        }
        final String mine = HexFormat.of().formatHex(digest.digest());
        final String file = HexFormat.of().formatHex(fileDigest(options.file()));
        final boolean matches = mine.equals(file) && received == Files.size(options.file());
        System.out.println("PCICOMMCAT received bytes=" + received + " sha256=" + mine + " matches=" + matches);
        return matches;
    }

    private static byte[] fileDigest(final Path file)
    {
        final MessageDigest digest = sha256();
        try (InputStream in = Files.newInputStream(file))
        {
            final byte[] chunk = new byte[65536];
            int n;
            while ((n = in.read(chunk)) > 0)
            {
                digest.update(chunk, 0, n);
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return digest.digest();
    }

    private static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
