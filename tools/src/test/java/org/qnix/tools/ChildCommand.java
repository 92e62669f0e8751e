package org.qnix.tools;

import java.io.IOException;
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
