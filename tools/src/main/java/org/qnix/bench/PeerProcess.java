package org.qnix.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.JvmFlags;

/**
 * The peer JVM of a benchmark: {@link BenchPeer} with the same class path and JVM flags, started by a
 * transport's setup and stopped by its teardown (or by a shutdown hook if the benchmark JVM exits
 * first). It prints {@link BenchPeer#READY} once it can echo.
 */
final class PeerProcess implements AutoCloseable
{
    private static final long READY_TIMEOUT_S = 60;

    private final Process process;
    private final Thread stopper;
    private final BlockingQueue<String> lines = new ArrayBlockingQueue<>(64);

    private PeerProcess(final Process process)
    {
        this.process = process;
        this.stopper = new Thread(process::destroyForcibly, "bench-peer-stop");
        Runtime.getRuntime().addShutdownHook(stopper);
        final Thread pump = new Thread(this::pump, "bench-peer-output");
        pump.setDaemon(true);
        pump.start();
    }

    /** Starts {@code BenchPeer args...} and waits until it is ready. */
    static PeerProcess start(final String... args)
    {
        final PeerProcess peer = launch(Map.of(), args);
        try
        {
            peer.awaitReady();
            return peer;
        }
        catch (final RuntimeException ex)
        {
            peer.close();
            throw ex;
        }
    }

    /**
     * Starts {@code BenchPeer args...} with extra environment variables, without waiting: for a peer
     * that can be ready only once this JVM has done its part (a QNIX group of two).
     */
    static PeerProcess launch(final Map<String, String> environment, final String... args)
    {
        final List<String> command = new ArrayList<>();
        command.add(JvmFlags.javaExecutable());
        command.addAll(JvmFlags.flags());
        command.add("-XX:+UseSerialGC");
        command.add("-cp");
        command.add(JvmFlags.classPath());
        command.add(BenchPeer.class.getName());
        command.addAll(List.of(args));
        final Process process;
        try
        {
            final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().putAll(environment);
            process = builder.start();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot start the benchmark peer JVM", ex);
        }
        return new PeerProcess(process);
    }

    /** Waits for the peer's {@link BenchPeer#READY} line. */
    void awaitReady()
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(READY_TIMEOUT_S);
        final StringBuilder seen = new StringBuilder();
        try
        {
            while (System.nanoTime() < deadline)
            {
                final String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (null != line)
                {
                    if (line.startsWith(BenchPeer.READY))
                    {
                        return;
                    }
                    seen.append(line).append('\n');
                }
                else if (!process.isAlive() && lines.isEmpty())
                {
                    throw new IllegalStateException("the benchmark peer exited with code " + process.exitValue() +
                        " before it was ready:\n" + seen);
                }
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the benchmark peer", ex);
        }
        throw new IllegalStateException("the benchmark peer was not ready in " + READY_TIMEOUT_S + " s:\n" + seen);
    }

    private void pump()
    {
        try (BufferedReader reader = new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while (null != (line = reader.readLine()))
            {
                if (!lines.offer(line))
                {
                    // Nobody reads after READY: keep only what an error report needs.
                    lines.poll();
                    lines.offer(line);
                }
            }
        }
        catch (final IOException ignore)
        {
            // The peer is gone.
        }
    }

    boolean isAlive()
    {
        return process.isAlive();
    }

    public void close()
    {
        process.destroy();
        try
        {
            if (!process.waitFor(5, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
        catch (final InterruptedException ex)
        {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try
        {
            Runtime.getRuntime().removeShutdownHook(stopper);
        }
        catch (final IllegalStateException ignore)
        {
            // Already shutting down: the hook is running.
        }
    }
}
