package org.qnix.examples;

import java.io.IOException;
import java.io.UncheckedIOException;

import org.qnix.host.DriverException;
import org.qnix.lib.QnixException;
import org.qnix.pcicomm.PciCommException;
import org.qnix.vipl.ViplException;

/**
 * An example that ends on one of the libraries' own exceptions (the cluster taken down under it, a
 * peer gone, a timeout), on an argument the cluster cannot take (a size above its largest message, a
 * node it does not have: {@link IllegalArgumentException}) or on a file it cannot read or write says
 * so in one line on stderr and exits 1, as the {@code qnix} command does; the exception already names
 * what happened, so its stack trace would only bury that line among the other ranks' output. Anything
 * else (a bug) keeps the JVM's usual stack trace. ViplHello, which README.md quotes whole as the
 * shortest VIPL program, goes without it.
 *
 * <pre>{@code
 * public static void main(String[] args)
 * {
 *     OneLineFailures.install("PingPong");
 *     try (Qnix qnix = Qnix.initFromEnvironment()) { ... }
 * }
 * }</pre>
 */
public final class OneLineFailures
{
    private OneLineFailures()
    {
    }

    /** @param program the example's name, the first word of the line. */
    static void install(final String program)
    {
        final Thread.UncaughtExceptionHandler usual = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, ex) ->
        {
            if (isReported(ex))
            {
                System.err.println(program + ": " + ex.getClass().getSimpleName() + ": " + ex.getMessage());
                System.err.flush();
                // The thread that failed may not be main; the example is over either way.
                System.exit(1);
            }
            else if (null != usual)
            {
                usual.uncaughtException(thread, ex);
            }
            else
            {
                thread.getThreadGroup().uncaughtException(thread, ex);
            }
        });
    }

    private static boolean isReported(final Throwable ex)
    {
        return isLibraryFailure(ex) || ex instanceof IllegalArgumentException || ex instanceof IOException ||
            ex instanceof UncheckedIOException;
    }

    /**
     * @return true for the libraries' own exceptions: the cluster went down, a NIC stopped, a peer went
     * away, a timeout. The message names what happened; the {@code qnix} command reports them so too.
     */
    public static boolean isLibraryFailure(final Throwable ex)
    {
        return ex instanceof QnixException || ex instanceof ViplException || ex instanceof PciCommException ||
            ex instanceof DriverException;
    }
}
