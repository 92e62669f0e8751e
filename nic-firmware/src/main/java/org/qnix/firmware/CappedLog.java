package org.qnix.firmware;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The log of a cluster's daemon or firmware JVM, with a size cap. Their standard output and error go
 * to {@code daemon.log} and the firmware logs in the cluster's directory, by default in
 * {@code /dev/shm}, which is memory; some lines are written at a process's request (a registration,
 * a refused request, a connection that failed), so a process repeating requests could otherwise grow
 * the log for as long as the cluster is up. Past {@link #DEFAULT_LIMIT_BYTES} one line says so and
 * the rest is dropped; the cluster goes on.
 *
 * <pre>{@code
 * public static void main(String[] args)
 * {
 *     CappedLog.install(CappedLog.DEFAULT_LIMIT_BYTES);   // System.out and System.err, sharing the cap
 *     ...
 * }
 * }</pre>
 */
public final class CappedLog extends OutputStream
{
    /** 64 MiB: years of ordinary lines, a small part of the machine's memory. */
    public static final long DEFAULT_LIMIT_BYTES = 64L << 20;

    private final OutputStream out;
    private final long limit;
    private long written;
    private boolean capped;

    /** @param limit bytes written at most, the notice of the cap not counted. */
    public CappedLog(final OutputStream out, final long limit)
    {
        this.out = out;
        this.limit = limit;
    }

    /**
     * Replaces {@code System.out} and {@code System.err}, which the launcher sends to the same file,
     * with one capped stream over the process's standard output, autoflushed as before.
     */
    public static void install(final long limit)
    {
        final PrintStream capped = new PrintStream(new BufferedOutputStream(
            new CappedLog(new FileOutputStream(FileDescriptor.out), limit)), true, StandardCharsets.UTF_8);
        System.out.flush();
        System.err.flush();
        System.setOut(capped);
        System.setErr(capped);
    }

    public synchronized void write(final int b) throws IOException
    {
        write(new byte[] {(byte)b}, 0, 1);
    }

    public synchronized void write(final byte[] b, final int off, final int len) throws IOException
    {
        if (capped)
        {
            return;
        }
        if (written + len > limit)
        {
            capped = true;
            out.write(("\n[log capped at " + limit + " bytes: later lines are dropped]\n")
                .getBytes(StandardCharsets.UTF_8));
            out.flush();
            return;
        }
        written += len;
        out.write(b, off, len);
    }

    public synchronized void flush() throws IOException
    {
        out.flush();
    }

    public synchronized void close() throws IOException
    {
        out.close();
    }

    /** @return whether the cap was reached: everything since was dropped. */
    public synchronized boolean isCapped()
    {
        return capped;
    }
}
