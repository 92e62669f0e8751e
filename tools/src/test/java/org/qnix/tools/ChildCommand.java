package org.qnix.tools;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.JvmFlags;

/**
 * A command run as a child process for a test, its output (with its errors) in a temporary file:
 * {@code qnix} in a JVM of its own, wrapped in {@code sh -c}, {@code unshare} or {@code setpriv} as
 * the test needs. Always waited for, or killed, and its output file removed.
 *
 * <pre>{@code
 * ChildCommand.Result up = ChildCommand.run(ChildCommand.shell("umask 000; exec \"$@\"", ChildCommand.qnix("cluster", "up")),
 *     Map.of("QNIX_DIR", dir.toString()));
 * }</pre>
 */
final class ChildCommand
{
    /** A hang guard, not a timing assertion. */
    private static final long TIMEOUT_MINUTES = 5;

    /** What a command printed, and its exit code. */
    record Result(int exit, String output)
    {
    }

    private ChildCommand()
    {
    }

    /** @return the command line of {@code qnix ARGS} in a new JVM on this test's class path. */
    static List<String> qnix(final String... args)
    {
        final List<String> command = java(QnixCommand.class.getName());
        command.addAll(List.of(args));
        return command;
    }

    /** @return the command line of a JVM running {@code mainClass} on this test's class path, with qnix's flags. */
    static List<String> java(final String mainClass, final String... jvmOptions)
    {
        final List<String> command = new ArrayList<>();
        command.add(JvmFlags.javaExecutable());
        command.addAll(JvmFlags.flags());
        command.add("-XX:+UseSerialGC");
        command.add("-XX:TieredStopAtLevel=1");
        command.addAll(List.of(jvmOptions));
        command.add("-cp");
        command.add(JvmFlags.classPath());
        command.add(mainClass);
        return command;
    }

    /**
     * Starts {@code mainClass} with {@code args} in a new JVM ({@link #java}), its standard error merged
     * into its output: a worker of a multi-JVM test, which the test stops itself.
     */
    static Process start(final Class<?> mainClass, final String... args) throws IOException
    {
        final List<String> command = java(mainClass.getName());
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    /** @return {@code child}'s output, line by line, for a test that reads it as it comes. */
    static BufferedReader output(final Process child)
    {
        return new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    }

    /**
     * Collects {@code child}'s output lines on a thread of their own, so that the child never blocks
     * on a full pipe and the test can name what it said in its messages.
     *
     * @param echo a prefix to print each line with on this test's output, or null to keep them.
     */
    static Lines collect(final Process child, final String echo)
    {
        final Lines lines = new Lines();
        lines.reader = new Thread(() ->
        {
            try (BufferedReader out = output(child))
            {
                for (String line; null != (line = out.readLine()); )
                {
                    if (null != echo)
                    {
                        System.out.println(echo + line);
                    }
                    synchronized (lines.said)
                    {
                        lines.said.add(line);
                    }
                }
            }
            catch (final IOException ignore)
            {
                // The child is gone: what it said is kept.
            }
        });
        lines.reader.start();
        return lines;
    }

    /** What a child said so far ({@link #collect}). */
    static final class Lines
    {
        private final List<String> said = new ArrayList<>();
        private Thread reader;

        /** @return the lines so far. */
        List<String> said()
        {
            synchronized (said)
            {
                return List.copyOf(said);
            }
        }

        boolean contains(final String line)
        {
            synchronized (said)
            {
                return said.contains(line);
            }
        }

        /** Waits up to {@code millis} for the child's output to end. */
        void join(final long millis) throws InterruptedException
        {
            reader.join(millis);
        }

        @Override
        public String toString()
        {
            return said().toString();
        }
    }

    /** @return {@code command} run by {@code sh -c script}, which gets it as "$@". */
    static List<String> shell(final String script, final List<String> command)
    {
        final List<String> wrapped = new ArrayList<>(List.of("/bin/sh", "-c", script, "sh"));
        wrapped.addAll(command);
        return wrapped;
    }

    static boolean executable(final String path)
    {
        return Files.isExecutable(Path.of(path));
    }

    static boolean isRoot()
    {
        try
        {
            return "0".equals(run(List.of("/usr/bin/id", "-u"), Map.of(), null).output().trim());
        }
        catch (final IOException | InterruptedException ex)
        {
            return false;
        }
    }

    /** Runs a command to its end. @param directory its working directory, or null for the test's. */
    static Result run(final List<String> command, final Map<String, String> environment, final Path directory)
        throws IOException, InterruptedException
    {
        final Path output = Files.createTempFile("qnix-child", ".out");
        try
        {
            final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(output.toFile()).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
            if (null != directory)
            {
                builder.directory(directory.toFile());
            }
            builder.environment().remove("QNIX_CLUSTER");
            builder.environment().putAll(environment);
            final Process process = builder.start();
            if (!process.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES))
            {
                // Only then its children: a finished `cluster up` leaves its daemon running, on purpose.
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(1, TimeUnit.MINUTES);
                throw new AssertionError(String.join(" ", command) + " did not finish:\n" +
                    Files.readString(output, StandardCharsets.UTF_8));
            }
            return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        }
        finally
        {
            Files.deleteIfExists(output);
        }
    }
}
