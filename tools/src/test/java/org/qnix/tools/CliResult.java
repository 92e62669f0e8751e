package org.qnix.tools;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

import picocli.CommandLine;

/** Runs the {@code qnix} command line in-process and captures what it prints. */
final class CliResult
{
    final int exit;
    final String out;
    final String err;

    private CliResult(final int exit, final String out, final String err)
    {
        this.exit = exit;
        this.out = out;
        this.err = err;
    }

    static CliResult run(final String... args)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final PrintStream originalOut = System.out;
        final int exit;
        synchronized (CliResult.class)
        {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            try
            {
                final CommandLine cli = QnixCommand.commandLine();
                cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
                cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
                exit = cli.execute(args);
            }
            finally
            {
                System.setOut(originalOut);
            }
        }
        return new CliResult(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
