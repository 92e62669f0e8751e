package org.qnix.daemon;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.FileModes;
import org.qnix.abi.HostClock;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.NicCoordinates;
import org.qnix.firmware.IdleNics;
import org.qnix.firmware.IdleStrategies;
import org.qnix.firmware.LoadedFirmware;
import org.qnix.firmware.NodeImage;

/**
 * Starts the NIC control programs of some nodes and stops them again: one node's in a JVM of its own
 * ({@code --firmware processes}, so a debugger can attach to one NIC), one node's on a thread of the
 * daemon ({@code --firmware threads}), or every node's round-robin on one thread of one firmware JVM
 * ({@code --firmware shared}: a packet one NIC writes is taken by the next in the same duty cycle).
 */
final class FirmwareLauncher implements AutoCloseable
{
    static final String FIRMWARE_MAIN = "org.qnix.firmware.FirmwareMain";

    private final ClusterDirectory dir;
    private final ClusterParameters params;
    private final List<NodeImage> images;
    private final NicCoordinates first;
    private Process process;
    private LoadedFirmware thread;

    /** @param images the nodes whose control programs this launcher runs together. */
    FirmwareLauncher(final ClusterDirectory dir, final ClusterParameters params, final List<NodeImage> images)
    {
        this.dir = dir;
        this.params = params;
        this.images = List.copyOf(images);
        this.first = images.get(0).node();
    }

    void startProcess(final String idle, final int debugPort)
    {
        final List<String> command = new ArrayList<>();
        command.add(JvmFlags.javaExecutable());
        command.add(JvmFlags.clusterMarker(dir.path()));
        command.addAll(JvmFlags.flags());
        command.addAll(JvmFlags.crashFiles(dir));
        command.add("-Xmx256m");
        command.add("-XX:+UseSerialGC");
        if (debugPort > 0)
        {
            // Loopback only: whoever reaches a JDWP port runs code as the cluster's owner.
            command.add("-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=localhost:" + debugPort);
        }
        command.add("-cp");
        command.add(JvmFlags.classPath());
        command.add(FIRMWARE_MAIN);
        command.add("--cluster-dir=" + dir.path());
        for (final NodeImage image : images)
        {
            command.add("--node=" + image.node());
        }
        command.add("--daemon-pid=" + ProcessHandle.current().pid());
        command.add("--idle=" + idle);
        if (debugPort > 0)
        {
            // Loopback only: whoever reaches a JDWP port runs code as the cluster's owner.
            command.add("--debug-port=" + debugPort);
        }
        // Made first, so that they have the cluster's mode rather than the umask's. A shared firmware JVM
        // writes the first node's log; the others say where to look.
        for (final NodeImage image : images)
        {
            FileModes.createFileOrThrow(dir.firmwareLog(image.node()));
            if (!image.node().equals(first))
            {
                writeLog(image.node(), "the control program of this node runs in the shared firmware JVM: see " +
                    dir.firmwareLog(first) + System.lineSeparator());
            }
        }
        final ProcessBuilder builder = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dir.firmwareLog(first).toFile());
        try
        {
            process = builder.start();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot start the firmware JVM of " + describe(), ex);
        }
    }

    private void writeLog(final NicCoordinates node, final String text)
    {
        try
        {
            Files.writeString(dir.firmwareLog(node), text);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write " + dir.firmwareLog(node), ex);
        }
    }

    void startThread(final String idle)
    {
        if (1 != images.size())
        {
            throw new IllegalStateException("a firmware thread runs one node, not " + images.size());
        }
        thread = LoadedFirmware.load(dir, params, first);
        thread.program().runMode(ControlProgramLayout.MODE_THREAD, 0);
        thread.start(IdleStrategies.parse(idle, params.hotUs(), IdleNics.of(List.of(thread.program()))));
    }

    /**
     * Waits until every control program of this launcher reports running in its SDRAM.
     *
     * @throws IllegalStateException if its JVM exits first or it takes longer than the timeout.
     */
    void awaitRunning(final long timeoutMs) throws InterruptedException
    {
        final long deadline = HostClock.millis() + timeoutMs;
        for (final NodeImage image : images)
        {
            while (ControlProgramLayout.STATE_RUNNING != image.controlSegment().state())
            {
                if (null != process && !process.isAlive())
                {
                    throw new IllegalStateException("the firmware JVM of " + describe() + " exited with code " +
                        process.exitValue() + " before it was ready; see " + dir.firmwareLog(first));
                }
                if (HostClock.millis() > deadline)
                {
                    throw new IllegalStateException("the NIC control program of node " + image.node() +
                        " was not ready after " + timeoutMs + " ms; see " + dir.firmwareLog(first));
                }
                Thread.sleep(10);
            }
        }
    }

    private String describe()
    {
        return 1 == images.size() ? "node " + first : images.size() + " nodes (shared)";
    }

    long pid()
    {
        return null != process ? process.pid() : ProcessHandle.current().pid();
    }

    public void close()
    {
        if (null != process)
        {
            process.destroy();
            try
            {
                if (!process.waitFor(10, TimeUnit.SECONDS))
                {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
            catch (final InterruptedException ex)
            {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        if (null != thread)
        {
            thread.close();
        }
    }
}
